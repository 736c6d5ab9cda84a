"""Decoding the CSR kernel's optional instrumentation (``Schedule(instrument=True)``).

With instrumentation on, the leader thread of ``csr_kernels.cu``'s ``phase1`` records every step
it times: a sweep by the whole grid ("grid"), a sweep by block 0 alone ("solo"), in tail mode a
global relabel by block 0 alone ("tail_relabel"), and each level of the grid's global relabels,
run by the whole grid ("grid_level") or by block 0 alone ("solo_level"); each with the size of
its list (the worklist for a sweep, the active vertices found for a tail relabel, the frontier
for a level) and its nanoseconds; "tail_abort" is a tail relabel given up because a frontier
was wider than the tail bound (the grid then relabels, for the rest of the solve). The kernel
keeps a histogram by powers of two of the list size and a log of the first :data:`LOG_CAP`
steps; this module turns both into NumPy arrays and a summary that splits the sweep time into
"many active" and "tail" (fewer than :data:`TAIL_ACTIVE` vertices: less than one block's worth
of threads).
"""

from __future__ import annotations

import numpy as np

# csr_kernels.cu: INSTR_GRID, INSTR_SOLO, INSTR_TAIL_GR, INSTR_GRID_LEVEL, INSTR_SOLO_LEVEL,
# INSTR_TAIL_ABORT
KINDS = ("grid", "solo", "tail_relabel", "grid_level", "solo_level", "tail_abort")
KIND_SLOTS = 6                            # INSTR_KINDS
BUCKETS = 32
LOG_COUNT = KIND_SLOTS * BUCKETS * 2      # INSTR_LOGN
LOG_START = LOG_COUNT + 4                 # INSTR_LOG
LOG_CAP = 1 << 19                         # steps logged one by one (16 bytes each)
TAIL_ACTIVE = 512                         # a sweep of fewer vertices is "tail"


def instrument_buffer(xp):
    """A zeroed int64 buffer of the layout ``phase1`` writes (about 8 MiB), on ``xp``'s device.

    Parameters
    ----------
    xp : module
        ``cupy`` (or ``numpy`` in tests of the decoding).

    Returns
    -------
    array
        int64 zeros of length ``LOG_START + 2 * LOG_CAP``.
    """
    return xp.zeros(LOG_START + 2 * LOG_CAP, dtype=xp.int64)


def instrument_stats(buffer: np.ndarray) -> dict:
    """Decode an instrumentation buffer (host copy) into histograms, a step log and a summary.

    Parameters
    ----------
    buffer : numpy.ndarray
        int64 array in the layout of :func:`instrument_buffer`, as the kernel left it.

    Returns
    -------
    dict
        ``"histogram"``: per kind (``"grid"``, ``"solo"``, ``"tail_relabel"``, ``"grid_level"``,
        ``"solo_level"``, ``"tail_abort"``) a dict of int64
        arrays of length 32, ``"steps"`` and ``"ns"``, indexed by b for list sizes in
        [2**b, 2**(b+1)) (b = 0 also holds size 0);
        ``"log"``: the first ``LOG_CAP`` steps in order, arrays ``"kind"`` (index into
        ``KINDS``), ``"size"`` (vertices in the list) and ``"ns"``;
        ``"steps"``: all steps recorded (may exceed the log);
        ``"summary"``: seconds and step counts of sweeps with at least ``TAIL_ACTIVE``
        vertices (``"many"``) and with fewer (``"tail"``), of tail relabels, and of the BFS
        levels by the grid and by block 0.

    Examples
    --------
    >>> import numpy as np
    >>> buf = instrument_buffer(np)
    >>> stats = instrument_stats(buf)
    >>> stats["steps"], stats["summary"]["tail_seconds"]
    (0, 0.0)
    """
    buffer = np.asarray(buffer, dtype=np.int64)
    cells = buffer[:LOG_COUNT].reshape(KIND_SLOTS, BUCKETS, 2)
    histogram = {name: {"steps": cells[k, :, 0].copy(), "ns": cells[k, :, 1].copy()}
                 for k, name in enumerate(KINDS)}
    steps = int(buffer[LOG_COUNT])
    logged = min(steps, LOG_CAP)
    entries = buffer[LOG_START:LOG_START + 2 * logged].reshape(logged, 2)
    log = {"kind": (entries[:, 0] >> 32).astype(np.int8),
           "size": (entries[:, 0] & 0xFFFFFFFF).astype(np.int64),
           "ns": entries[:, 1].copy()}
    return {"histogram": histogram, "log": log, "steps": steps,
            "summary": _summary(histogram)}


def _summary(histogram: dict) -> dict:
    """Sweep time split at TAIL_ACTIVE, a power of two (bucket b holds sizes below 2**(b+1))."""
    tail_buckets = int(np.log2(TAIL_ACTIVE))  # buckets 0 .. log2(T) - 1 hold sizes < T
    out = {"tail_active": TAIL_ACTIVE}
    many_s = tail_s = 0.0
    many_n = tail_n = 0
    for kind in ("grid", "solo"):
        ns, n = histogram[kind]["ns"], histogram[kind]["steps"]
        tail_s += float(ns[:tail_buckets].sum()) * 1e-9
        tail_n += int(n[:tail_buckets].sum())
        many_s += float(ns[tail_buckets:].sum()) * 1e-9
        many_n += int(n[tail_buckets:].sum())
    out.update(many_seconds=many_s, many_sweeps=many_n, tail_seconds=tail_s,
               tail_sweeps=tail_n,
               grid_sweeps=int(histogram["grid"]["steps"].sum()),
               solo_sweeps=int(histogram["solo"]["steps"].sum()),
               tail_relabels=int(histogram["tail_relabel"]["steps"].sum()),
               tail_relabel_seconds=float(histogram["tail_relabel"]["ns"].sum()) * 1e-9,
               tail_aborts=int(histogram["tail_abort"]["steps"].sum()),
               tail_abort_seconds=float(histogram["tail_abort"]["ns"].sum()) * 1e-9)
    for kind in ("grid_level", "solo_level"):
        out[f"{kind}s"] = int(histogram[kind]["steps"].sum())
        out[f"{kind}_seconds"] = float(histogram[kind]["ns"].sum()) * 1e-9
    return out


def format_summary(stats: dict) -> str:
    """One line: sweep time and counts on each side of TAIL_ACTIVE, and tail relabels.

    Parameters
    ----------
    stats : dict
        The ``stats["instrument"]`` of a CutResult (:func:`instrument_stats`).

    Returns
    -------
    str
        For example ``"sweeps >= 512 active: 120 in 3.1 ms; < 512: 9000 in 250.0 ms; ..."``.
    """
    s = stats["summary"]
    log = stats["log"]
    size = log["size"][log["kind"] <= KINDS.index("solo")]
    median = f"{float(np.median(size)):.0f}" if size.size else "-"
    return (f"sweeps >= {s['tail_active']} active: {s['many_sweeps']} in "
            f"{s['many_seconds'] * 1e3:.1f} ms; < {s['tail_active']}: {s['tail_sweeps']} in "
            f"{s['tail_seconds'] * 1e3:.1f} ms (grid {s['grid_sweeps']}, block 0 "
            f"{s['solo_sweeps']}); tail relabels {s['tail_relabels']} in "
            f"{s['tail_relabel_seconds'] * 1e3:.1f} ms (given up {s['tail_aborts']}, "
            f"{s['tail_abort_seconds'] * 1e3:.1f} ms); BFS levels by the grid "
            f"{s['grid_levels']} in {s['grid_level_seconds'] * 1e3:.1f} ms, by block 0 "
            f"{s['solo_levels']} in {s['solo_level_seconds'] * 1e3:.1f} ms; median sweep list "
            f"{median}")
