"""Memory a segmentation will need, and memory this process may still use, for the batch's
pre-check: an image that cannot fit fails alone, with a message, before it is decoded.

The estimates are peaks measured with ``resource.getrusage`` on 1-megapixel images (grey and
RGB, ``graphcut.segment`` on the CPU: about 265 bytes per pixel of which PyMaxflow's graph is
most) plus a margin; on the GPU path the host holds only the decoded image, the seeds, the mask
and the overlay.
"""

from __future__ import annotations

import contextlib
import os
import resource

# Host bytes per pixel at the peak of one image: read, energy, solve, write.
CPU_BYTES_PER_PIXEL = 300
GPU_HOST_BYTES_PER_PIXEL = 48
# With an overlay: its float64 RGB working copy and the uint8 result.
OVERLAY_BYTES_PER_PIXEL = 56
# A worker process's own memory (interpreter, NumPy, Pillow, PyMaxflow) before any image.
PROCESS_BYTES = 200 * 2**20


def segmentation_bytes(width: int, height: int, *, backend: str, overlay: bool = False) -> int:
    """Estimated peak host memory (bytes) to segment one ``width`` x ``height`` image."""
    pixels = int(width) * int(height)
    per_pixel = CPU_BYTES_PER_PIXEL if backend == "cpu" else GPU_HOST_BYTES_PER_PIXEL
    if overlay:
        per_pixel += OVERLAY_BYTES_PER_PIXEL
    return pixels * per_pixel


def available_bytes() -> int | None:
    """Memory this process may still allocate, in bytes: the least of the system's available
    memory (``MemAvailable``), the room left in its cgroup (v2 ``memory.max``) and under its
    address-space limit (``ulimit -v``); None when none of them can be read."""
    limits = [_mem_available(), _cgroup_room(), _address_space_room()]
    known = [value for value in limits if value is not None]
    return max(0, min(known)) if known else None


def format_bytes(count: int) -> str:
    """``count`` bytes as GB (decimal) with one decimal, or MB below 1 GB."""
    return f"{count / 1e9:.1f} GB" if count >= 1e9 else f"{count / 1e6:.0f} MB"


def _mem_available() -> int | None:
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    return None


def _cgroup_room() -> int | None:
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/self/cgroup") as handle:
            paths = [line.strip().split(":", 2)[2] for line in handle if line.startswith("0::")]
        if paths:
            folder = "/sys/fs/cgroup" + paths[0].rstrip("/")
            with open(f"{folder}/memory.max") as handle:
                limit = handle.read().strip()
            if limit != "max":
                with open(f"{folder}/memory.current") as handle:
                    return int(limit) - int(handle.read().strip())
    return None


def _address_space_room() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    with contextlib.suppress(OSError, ValueError):
        with open(f"/proc/{os.getpid()}/status") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return soft - int(line.split()[1]) * 1024
    return None
