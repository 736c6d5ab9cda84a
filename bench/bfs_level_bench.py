"""Microbenchmark: what one BFS level of the CSR kernel's global relabel costs, and why.

Issue 27: the CSR core's time on the RLG instances is BFS levels of 8-11 us each. This script
times, on one GPU, with the solver's own device code (``bfs_level_bench.cu`` includes
``csr_kernels.cu``):

- an exact global relabel (a BFS from t over the residual network as built, before any push)
  with every level by block 0 alone ("solo") or by the whole grid ("grid"), with the default
  expansion (one frontier vertex per thread) and the tiled one (``Schedule.bfs_tiles``): ns per
  level;
- the pieces a level is made of, alone: a grid barrier, a block barrier, a block barrier after
  thread 0 reads a global control word, a block barrier after a %globaltimer read, one random
  global load per thread then a block barrier, three dependent random loads then a block
  barrier (us per step).

    python3 bench/bfs_level_bench.py                       # rlg-long-512x1024, rlg-wide-1024
    python3 bench/bfs_level_bench.py --instances rlg-long-512x1024 --repeats 5

Every BFS's levels and labels are checked equal between the expansions (the same BFS).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CUDA_DIR = ROOT / "solver" / "cuda"

INSTANCES = {
    "rlg-long-512x1024": ("washington_rlg", (512, 1024)),
    "rlg-wide-1024x1024": ("washington_rlg", (1024, 1024)),
    "genrmf-wide-a64": ("genrmf", (64, 64)),
    "genrmf-long-a32": ("genrmf", (32, 256)),
}
EXPANSIONS = {0: "per vertex", 2: "per vertex, warps spread", 1: "tiled"}
PIECES = {1: "grid barrier", 2: "block barrier", 3: "thread 0 __ldcg + block barrier",
          4: "thread 0 %globaltimer + block barrier", 5: "1 random load + block barrier",
          6: "3 dependent random loads + block barrier"}


def build(name: str):
    from graphcut.solver import generators
    fn, args = INSTANCES[name]
    return getattr(generators, fn)(*args)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", default="rlg-long-512x1024,rlg-wide-1024x1024")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per row (median)")
    parser.add_argument("--iters", type=int, default=20000, help="steps of the piece timings")
    parser.add_argument("--profile", default=None, metavar="SMALL,TILES,BLOCKS",
                        help="for a profiler: run one global relabel of the first instance "
                             "only (block-0 bound SMALL, TILES 0/1 (+2: warps spread), a grid "
                             "of BLOCKS blocks)")
    args = parser.parse_args(argv)

    import cupy
    from graphcut.solver.cuda.csr import THREADS, _cooperative_blocks, _device_info
    from graphcut.solver.cuda.csr_build import build_residual_graph

    code = (Path(__file__).resolve().parent / "bfs_level_bench.cu").read_text()
    module = cupy.RawModule(code=code, options=("-std=c++17", f"-I{CUDA_DIR}", "-DMIN_BLOCKS=1"),
                            enable_cooperative_groups=True)
    kernel = module.get_function("relabel_bench")
    name, sms = _device_info()
    blocks = _cooperative_blocks(kernel, 1, sms)
    print(f"device {name}, {blocks} blocks x {THREADS} threads")

    def launch(graph_args, small, tiles, mode, iters):
        out = cupy.zeros(8, dtype=cupy.int64)
        kernel((blocks,), (THREADS,), (*graph_args, out, np.int32(small), np.int32(tiles),
                                       np.int32(mode), np.int32(iters)))
        return cupy.asnumpy(out)

    n_dummy = 1024
    dummy = [cupy.zeros(n_dummy + 1, dtype=cupy.int32) for _ in range(3)]
    pieces_args = (np.int32(n_dummy), np.int32(0), np.int32(1), dummy[0], dummy[1], dummy[2],
                   cupy.zeros(1, cupy.uint32), cupy.zeros(1, cupy.uint32),
                   cupy.zeros(1, cupy.int64), dummy[2], dummy[2], dummy[2], dummy[2], dummy[2],
                   cupy.zeros(64, cupy.int32))
    profile = [int(x) for x in args.profile.split(",")] if args.profile else None
    if profile:
        blocks = profile[2]
    for name_ in [x for x in args.instances.split(",") if x]:
        network = build(name_)
        n, s, t = network.num_vertices, network.source, network.sink
        graph = build_residual_graph(n, cupy.asarray(network.offsets),
                                     cupy.asarray(network.heads),
                                     cupy.asarray(network.capacities), cupy)
        rcap = graph.rcap
        capsum = rcap + rcap[graph.twin]
        excess = cupy.zeros(n, dtype=cupy.int64)
        excess[1::97] = 1  # some active vertices for the found counts
        height = cupy.zeros(n, dtype=cupy.int32)
        lists = [cupy.empty(n, dtype=cupy.int32) for _ in range(3)]
        ctl = cupy.zeros(64, dtype=cupy.int32)
        graph_args = (np.int32(n), np.int32(s), np.int32(t), graph.offsets, graph.heads,
                      graph.twin, capsum, rcap, excess, height, height, *lists, ctl)
        print(f"\n{name_}: {n:,} vertices, {graph.num_slots:,} slots")
        if profile:
            out = launch(graph_args, profile[0], profile[1], 0, 0)
            print(f"profiled relabel: {out[0] / max(out[1], 1):,.0f} ns per level, "
                  f"{out[1]:,} levels ({out[2]:,} by block 0), {blocks} blocks")
            return 0
        print("| levels by | expansion | ns per level (median) | levels | solo levels | found |")
        print("|---|---|---|---|---|---|")
        labels = {}
        for where, small in (("block 0", 1 << 30), ("grid", 0), ("default (<=512 block 0)", 512)):
            for tiles in ((0, 2, 1) if where == "grid" else (0, 1)):
                per, last = [], None
                for _ in range(args.repeats + 1):
                    ctl.fill(0)
                    out = launch(graph_args, small, tiles, 0, 0)
                    per.append(out[0] / max(out[1], 1))
                    last = out
                labels[(where, tiles)] = cupy.asnumpy(height)
                print(f"| {where} | {EXPANSIONS[tiles]} "
                      f"| {statistics.median(per[1:]):,.0f} | {last[1]:,} | {last[2]:,} "
                      f"| {last[3]:,} |", flush=True)
        first = next(iter(labels.values()))
        same = all(np.array_equal(first, x) for x in labels.values())
        print(f"BFS labels equal across the rows: {same}")
        if not same:
            return 1
        print("\n| piece (this network's arrays) | us per step (median) |\n|---|---|")
        for mode, what in PIECES.items():
            per = []
            for _ in range(args.repeats + 1):
                out = launch(graph_args, 0, 0, mode, args.iters)
                per.append(out[0] / args.iters / 1e3)
            print(f"| {what} | {statistics.median(per[1:]):.3f} |", flush=True)
    print("\n| piece (tiny arrays, L2-resident) | us per step (median) |\n|---|---|")
    for mode, what in PIECES.items():
        per = []
        for _ in range(args.repeats + 1):
            out = launch(pieces_args, 0, 0, mode, args.iters)
            per.append(out[0] / args.iters / 1e3)
        print(f"| {what} | {statistics.median(per[1:]):.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
