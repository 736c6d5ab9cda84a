"""Tail-mode rows for bench/bench_csr.py (``--tail-thresholds``, ``--instrument``).

For one instance: the default schedule (tail mode off) and each tail threshold, timed the same
way (median phase I over the repeats, same process, same network), the flow checked equal to
the default's, and, with ``--instrument``, one extra instrumented run per schedule whose
per-sweep record is summarised (sweep time with >= 512 active vertices against the tail with
fewer, block-0 relabels, median worklist); the instrumented run is not the timed one.
"""

from __future__ import annotations

from graphcut.solver.cuda.csr import Schedule, csr_min_cut
from graphcut.solver.cuda.csr_instrument import format_summary


def instrument_line(network, schedule: Schedule) -> str:
    """One instrumented solve of ``network`` under ``schedule``; its summary line."""
    import dataclasses
    result = csr_min_cut(network, schedule=dataclasses.replace(schedule, instrument=True))
    return format_summary(result.stats["instrument"])


def tail_rows(name, network, thresholds, repeats, base_solve, base_flow, gpu_runs, fmt,
              instrument: bool) -> list[str]:
    """Markdown rows ``| instance | tail threshold | phase I | vs default | sweeps | relabels
    (in block 0) | instrumentation |``, the default first; raises when a flow differs.

    ``thresholds``: tail thresholds to run (0 = the default schedule, already timed as
    ``base_solve``); ``gpu_runs`` and ``fmt`` are bench_csr's.
    """
    rows = []
    for tail in thresholds:
        schedule = Schedule(tail_threshold=tail)
        if tail == 0:
            solve = base_solve
            result = csr_min_cut(network, schedule=schedule)
        else:
            solve, _, result = gpu_runs(network, repeats, schedule)
        if result.flow != base_flow:
            raise AssertionError(f"{name}: tail_threshold={tail} flow {result.flow} != "
                                 f"{base_flow}")
        st = result.stats
        summary = instrument_line(network, schedule) if instrument else "-"
        rows.append(f"| {name} | {tail} | {fmt(solve)} | {base_solve / solve:.2f}x "
                    f"| {st['iterations']:,} | {st['global_relabels']:,} | {summary} |")
    return rows


HEADER = ["", "Tail mode (same run; flows equal to the default's):", "",
          "| instance | tail threshold | GPU phase I | default / this | sweeps "
          "| global relabels | instrumentation (one extra run) |",
          "|---|---|---|---|---|---|---|"]
