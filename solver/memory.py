"""Host memory: how much this process may still use, and checks that refuse a job up front.

A job that would not fit (a network too large for the machine, a hostile file declaring a
billion vertices) raises :class:`HostMemoryError` *before* anything large is allocated, with
the job, the estimate and the memory available, instead of swapping, being killed by the
kernel's OOM killer or, inside PyMaxflow, ending the process with ``exit(1)`` and no message.

What is available (:func:`available_bytes`) is the smallest of:

- ``MemAvailable`` in ``/proc/meminfo`` (memory the kernel can give without swapping);
- the cgroup's memory limit minus its usage (containers, systemd slices; v1 and v2);
- ``RLIMIT_AS`` minus this process's address space, and ``RLIMIT_DATA`` minus its data
  segment (``ulimit -v`` / ``resource.setrlimit``);
- the environment variable ``GRAPHCUT_MEMORY_LIMIT`` (bytes, or with a suffix ``K``, ``M``,
  ``G``, ``T``; powers of 1024), a budget for any one job, whatever the machine has.

Estimates are in bytes; the ``*_BYTES_PER_*`` constants were measured (peak resident memory
of the step, see ``tests/robustness/test_hostile_input.py``) and rounded up.
"""

from __future__ import annotations

import os
import re
import resource

__all__ = ["BK_BYTES_PER_ARC", "BK_BYTES_PER_VERTEX", "HostMemoryError", "LIMIT_VARIABLE",
           "available_bytes", "bk_graph_bytes", "csr_graph_bytes", "format_bytes",
           "grid_graph_bytes", "require_host_memory"]

LIMIT_VARIABLE = "GRAPHCUT_MEMORY_LIMIT"

# PyMaxflow (Boykov-Kolmogorov): a node is 48 bytes, an arc 32 and every edge is two arcs.
BK_BYTES_PER_VERTEX = 48
BK_BYTES_PER_ARC = 64

_UNLIMITED = 2**60
_SUFFIXES = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


class HostMemoryError(MemoryError):
    """A job would need more host memory than is available; raised before it starts.

    ``need`` and ``available`` are in bytes.
    """

    def __init__(self, message: str, need: int, available: int):
        super().__init__(message)
        self.need = need
        self.available = available


def format_bytes(count: float) -> str:
    """``count`` bytes as text with a binary unit: '512 B', '3.2 MiB', '1.50 GiB'."""
    if count < 2**10:
        return f"{int(count)} B"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= size:
            value = count / size
            return f"{value:.2f} {unit}" if value < 10 else f"{value:.1f} {unit}"
    raise AssertionError("unreachable")


def parse_bytes(text: str) -> int:
    """'2G' -> 2147483648; a plain number is bytes. ValueError for anything else."""
    match = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if not match:
        raise ValueError(f"{LIMIT_VARIABLE}={text!r} is not a size; expected bytes, or a number "
                         "with K, M, G or T (for example 8G)")
    return int(float(match.group(1)) * _SUFFIXES[match.group(2).upper()])


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _meminfo_available() -> int | None:
    text = _read("/proc/meminfo")
    match = re.search(r"^MemAvailable:\s+([0-9]+) kB", text or "", re.MULTILINE)
    return int(match.group(1)) * 1024 if match else None


def _stat_value(text: str | None, key: str) -> int:
    match = re.search(rf"^{key} ([0-9]+)$", text or "", re.MULTILINE)
    return int(match.group(1)) if match else 0


def _cgroup_available() -> int | None:
    """The cgroup's limit minus its usage (page cache that can be dropped not counted)."""
    lines = (_read("/proc/self/cgroup") or "").splitlines()
    best = None
    for line in lines:
        _, controllers, path = (line.split(":", 2) + ["", ""])[:3]
        if controllers == "":  # cgroup v2
            candidates = [("/sys/fs/cgroup" + path).rstrip("/"), "/sys/fs/cgroup"]
            names = ("memory.max", "memory.current", "memory.stat", "inactive_file")
        elif "memory" in controllers.split(","):  # cgroup v1
            candidates = [("/sys/fs/cgroup/memory" + path).rstrip("/"), "/sys/fs/cgroup/memory"]
            names = ("memory.limit_in_bytes", "memory.usage_in_bytes", "memory.stat",
                     "total_inactive_file")
        else:
            continue
        for folder in candidates:
            limit, usage = _read(f"{folder}/{names[0]}"), _read(f"{folder}/{names[1]}")
            if limit is None or usage is None:
                continue
            limit = limit.strip()
            if limit == "max" or not limit.isdigit() or int(limit) >= _UNLIMITED:
                break
            used = int(usage) - _stat_value(_read(f"{folder}/{names[2]}"), names[3])
            free = max(int(limit) - max(used, 0), 0)
            best = free if best is None else min(best, free)
            break
    return best


def _status_bytes(key: str) -> int:
    match = re.search(rf"^{key}:\s+([0-9]+) kB", _read("/proc/self/status") or "", re.MULTILINE)
    return int(match.group(1)) * 1024 if match else 0


def _rlimit_available() -> int | None:
    best = None
    for limit_name, status_key in (("RLIMIT_AS", "VmSize"), ("RLIMIT_DATA", "VmData")):
        which = getattr(resource, limit_name, None)
        if which is None:
            continue
        soft, _ = resource.getrlimit(which)
        if soft == resource.RLIM_INFINITY or soft >= _UNLIMITED:
            continue
        free = max(soft - _status_bytes(status_key), 0)
        best = free if best is None else min(best, free)
    return best


def available_bytes() -> int | None:
    """Bytes of memory this process can still allocate (module docstring), or None when
    nothing is known (no /proc, no limits)."""
    found = [value for value in (_meminfo_available(), _cgroup_available(), _rlimit_available())
             if value is not None]
    budget = os.environ.get(LIMIT_VARIABLE, "").strip()
    if budget:
        found.append(parse_bytes(budget))
    return min(found) if found else None


def require_host_memory(need: int, what: str) -> None:
    """Raise :class:`HostMemoryError` when ``need`` bytes are more than :func:`available_bytes`.

    ``what`` names the job in the message (for example "solving 'big.max' on the CPU (PyMaxflow's
    graph of 200000000 vertices and 0 arcs)").
    """
    available = available_bytes()
    if available is None or need <= available:
        return
    budget = os.environ.get(LIMIT_VARIABLE, "").strip()
    where = f" ({LIMIT_VARIABLE}={budget})" if budget and parse_bytes(budget) == available else ""
    raise HostMemoryError(f"{what} needs about {format_bytes(need)} of memory, more than the "
                          f"{format_bytes(available)} available{where}; refusing to start it",
                          need, available)


def bk_graph_bytes(vertices: int, edges: int) -> int:
    """Bytes of PyMaxflow's graph with ``vertices`` nodes and ``edges`` edges (2 arcs each)."""
    return BK_BYTES_PER_VERTEX * int(vertices) + BK_BYTES_PER_ARC * int(edges)


# Pixels added to PyMaxflow's graph per call by the grid solver (solver/cpu.py).
GRID_BLOCK_PIXELS = 1 << 18
# Held besides PyMaxflow's graph while a grid is solved: the mask and what the allocator keeps
# (per pixel, measured: 4 to 8), and the index and capacity arrays of one block of
# GRID_BLOCK_PIXELS pixels.
_GRID_BYTES_PER_PIXEL = 12
_GRID_BLOCK_BYTES_PER_PIXEL = 80
# Held besides PyMaxflow's graph while a CSRNetwork is solved: terminal capacities, node ids
# and the cut (per vertex); tails, int64 capacities, masks and the inner arcs' copies (per arc).
_CSR_BYTES_PER_VERTEX = 40
_CSR_BYTES_PER_ARC = 48


def grid_graph_bytes(height: int, width: int) -> int:
    """Peak bytes the CPU solver adds to an H x W GridNetwork it is given."""
    pixels = height * width
    edges = height * (width - 1) + (height - 1) * width
    return (bk_graph_bytes(pixels, edges) + _GRID_BYTES_PER_PIXEL * pixels
            + _GRID_BLOCK_BYTES_PER_PIXEL * min(GRID_BLOCK_PIXELS, pixels))


def csr_graph_bytes(vertices: int, arcs: int) -> int:
    """Peak bytes the CPU solver adds to a CSRNetwork it is given."""
    return (bk_graph_bytes(vertices, arcs) + _CSR_BYTES_PER_VERTEX * vertices
            + _CSR_BYTES_PER_ARC * arcs)
