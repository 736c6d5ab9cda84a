"""Count the CSR kernel's dependent steps per schedule without a GPU (issue 27).

The GPU core's time is a chain of dependent steps: sweeps over the worklist and BFS levels of
the global relabels, each ending at a grid-wide barrier (about 5-8 us each on an H100,
bench/RESULTS.md). ``tests/support/step_model.py`` runs the kernel's schedule with NumPy arrays
and counts them; this script runs it on scaled-down (or full-size) instances for several
relabel schedules and predicts the GPU time as levels x ``--us-level`` + sweeps x
``--us-sweep``. The model's sweeps are synchronous (the GPU's are not), so its counts differ a
little from the GPU's; compare schedules with it, then measure the few worth it on a GPU.

    python bench/csr_step_counts.py                          # the scaled-down instances
    python bench/csr_step_counts.py --instances genrmf-a64-b64 --schedules "default;x1"
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from graphcut.solver.generators import genrmf, washington_rlg  # noqa: E402
from step_model import incremental_bound, phase1  # noqa: E402  (tests/support, on the path)

INSTANCES = {
    "genrmf-a32-b32": lambda: genrmf(32, 32),        # genrmf-wide-a64 scaled down
    "genrmf-a16-b128": lambda: genrmf(16, 128),      # genrmf-long-a32 scaled down
    "rlg-128x256": lambda: washington_rlg(128, 256),   # rlg-long-512x1024 scaled down
    "rlg-256x256": lambda: washington_rlg(256, 256),   # rlg-wide-1024x1024 scaled down
    "genrmf-a64-b64": lambda: genrmf(64, 64),        # full size (about 100 s each)
    "genrmf-a32-b256": lambda: genrmf(32, 256),
    "rlg-512x1024": lambda: washington_rlg(512, 1024),
}

# model keyword arguments per schedule (the kernel's Schedule fields in brackets)
SCHEDULES = {
    "default": {},                                           # relabel_levels_factor 0.5
    "x0.25": {"gr_factor": 0.25},
    "x0.35": {"gr_factor": 0.35},
    "x0.75": {"gr_factor": 0.75},
    "x1": {"gr_factor": 1.0},
    "x0.5 + work 1": {"gr_work": 1.0},                       # relabel_work_factor 1
    "work 0.5 only": {"gr_factor": 1e9, "gr_work": 0.5},
    "work 1 only": {"gr_factor": 1e9, "gr_work": 1.0},
    "work 2 only": {"gr_factor": 1e9, "gr_work": 2.0},
    "work 4 only": {"gr_factor": 1e9, "gr_work": 4.0},
    "min 16": {"gr_min": 16},
    "exact BFS": {"early": False},                           # bfs_early_stop False
    "cycles 2": {"cycles": 2},                               # Schedule.cycles 2
    "share 0.1": {"gr_share": 0.1},                          # model only (not in the kernel)
    "share 0.25, hard x2": {"gr_share": 0.25, "gr_hard": 2.0},
    "gap": {"gap": True},                                    # model only
    "stop at 0.9 found": {"stop_share": 0.9},                # model only
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", default="genrmf-a32-b32,genrmf-a16-b128,rlg-128x256,"
                        "rlg-256x256")
    parser.add_argument("--schedules", default=";".join(SCHEDULES),
                        help="names of SCHEDULES separated by ';'")
    parser.add_argument("--us-level", type=float, default=5.0,
                        help="GPU microseconds per BFS level (cost model)")
    parser.add_argument("--us-sweep", type=float, default=7.0,
                        help="GPU microseconds per sweep (cost model)")
    parser.add_argument("--trace", action="store_true",
                        help="also print every global relabel of each run: levels, active "
                             "vertices found, flow into t so far, excess still active")
    parser.add_argument("--incremental-bound", action="store_true",
                        help="only print, per instance, the default schedule's search levels and "
                             "a lower bound on those of an incremental relabel (step_model.py)")
    args = parser.parse_args(argv)
    if args.incremental_bound:
        for name in args.instances.split(","):
            levels, bound = incremental_bound(INSTANCES[name]())
            print(f"{name}: {levels:,} search levels; an incremental relabel >= {bound:,} "
                  f"({bound / levels - 1:+.0%})", flush=True)
        return 0
    names = args.instances.split(",")
    print("model: sweeps / global relabels / BFS levels -> predicted GPU ms "
          f"(levels x {args.us_level} us + sweeps x {args.us_sweep} us)\n")
    print("| schedule | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names), flush=True)
    networks = {name: INSTANCES[name]() for name in names}
    flows, traces = {}, []
    for label in args.schedules.split(";"):
        cells = []
        for name in names:
            started = time.perf_counter()
            run = phase1(networks[name], **SCHEDULES[label])
            if flows.setdefault(name, run.flow) != run.flow:
                raise AssertionError(f"{name}: flow {run.flow} != {flows[name]} ({label})")
            ms = run.predicted_seconds(args.us_level, args.us_sweep) * 1e3
            cells.append(f"{run.sweeps:,} / {run.global_relabels:,} / {run.bfs_levels:,} -> "
                         f"{ms:.1f} ms ({time.perf_counter() - started:.0f} s)")
            if args.trace:
                traces.append(f"{label}, {name}: " + "; ".join(
                    f"{i}: {lv} / {act} / {flow:,} / {left:,}"
                    for i, (lv, act, flow, left) in enumerate(run.rounds)))
        print(f"| {label} | " + " | ".join(cells) + " |", flush=True)
    print("\n".join(["", "levels / active / flow into t / excess active, per relabel:"] +
                    traces if traces else []))
    return 0


if __name__ == "__main__":
    sys.exit(main())
