"""Benchmark: the GPU push-relabel core on general networks against BK and HPF on the CPU.

For every instance, in one process on one machine: the CUDA backend's phase-I time (residual
network already on the GPU: the ``solve`` stage of ``csr_min_cut``) and its end-to-end time
(upload + pairing the arcs + solve + cut back to the host), against PyMaxflow's BK and HPF
(``thinhpf``: ``mincut()``, its phase I) with the arrays already on the host (graph construction
not timed). Medians over ``--repeats`` runs after a warm-up run (GPU) / over ``--cpu-repeats``
runs (CPU). HPF runs on every arc order of ``--hpf-orders`` (generator's, CSR, by head,
reversed, shuffled; bench/hpf_orders.py) and the fastest is its figure. Every solver's flow
value must agree, and BK's source side with the GPU's
(thinhpf is built with int32 capacities and reports the flow in int32: above 2**31 - 1 it
wraps, so its flow is compared modulo 2**32).

``--ecl-binary PATH`` also runs ECL-MaxFlow live (an executable built by whoever runs this from
its published source; nothing of it is in this repository; bench/ecl_runner.py says what is
timed): its phase I (total), flow checked equal; the last column is the faster of HPF and
ECL's phase I over our phase I.

BK is not run on the DIMACS families unless ``--bk-all`` is given (it is far slower there);
the table then says "not run". ``--bk-all`` runs it in a subprocess with a 60 s limit, and a run
stopped at that limit reads "> 60 s (stopped)".

    python bench/bench_csr.py                        # every instance
    python bench/bench_csr.py --instances rlg-long-512x1024,genrmf-wide-a64
    python bench/bench_csr.py --variants             # also compare kernel schedules
    python bench/bench_csr.py --out results.md       # also write the tables (markdown)
    python bench/bench_csr.py --stereo-dir moves     # also the networks of a stereo dump
    python bench/bench_csr.py --ecl-binary /path/to/ecl-maxflow   # ECL-MaxFlow live too
    python bench/bench_csr.py --tail-thresholds 0,4096 --instrument   # tail mode on and off
    python bench/bench_csr.py --hpf-orders csr --hpf-configs hf-lifo  # HPF as before 2026-11-27

Instances: Washington RLG and genrmf (DIMACS generators), the camera sample's segmentation
network and smooth random grids as CSR, a 3-D segmentation volume (6-connected, synthetic blobs
in noise), and alpha-expansion moves of the motorcycle stereo pair (the networks that
``graphcut stereo --dump-instances`` writes; ``--stereo-dir`` reads such a dump, checking each
flow against its index.json).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import functools
import json
import multiprocessing
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from graphcut.solver import CSRNetwork, cuda_status
from graphcut.solver.generators import genrmf, random_grid, washington_rlg

from csr_families import (camera_network, mesh_network, random_grid3d,  # noqa: E402
                          segmentation_volume)
from ecl_runner import ecl_column  # noqa: E402  (bench/, on the path above)
from hpf_orders import (CONFIGS, DEFAULT_CONFIG, ORDERS, best_hpf,  # noqa: E402
                        build_with_order, describe, hpf_sweep)

STEREO_MOVES = (1, 33)  # moves of the first cycle kept as instances (alpha 0 and 32)


@functools.cache
def stereo_moves() -> dict[int, CSRNetwork]:
    """Networks of the alpha-expansion moves STEREO_MOVES on the full-size motorcycle pair
    (max disparity 64, the defaults of ``graphcut stereo``), as host CSR networks."""
    from graphcut.stereo import disparity
    from graphcut.stereo.io import motorcycle_pair

    left, right, _ = motorcycle_pair()
    kept: dict[int, CSRNetwork] = {}

    def keep(move, network, cut):
        if move.index in STEREO_MOVES:
            kept[move.index] = network.to_numpy().to_csr()

    disparity(left, right, max_disparity=64, channel_axis=-1, max_cycles=1, callback=keep)
    return kept


def stereo_dump(directory: Path) -> dict[str, tuple]:
    """Instances of a ``graphcut stereo --dump-instances`` folder: name -> (builder, False);
    each builder checks nothing itself, the flow in index.json is checked in main()."""
    from graphcut.solver.dimacs import read_dimacs

    index = json.loads((directory / "index.json").read_text())["instances"]
    return {f"dump-{entry['file']}": (functools.partial(read_dimacs, directory / entry["file"]),
                                      False, entry["flow"]) for entry in index}


# name -> (builder, DIMACS family: BK skipped)
INSTANCES = {
    "rlg-long-512x1024": (lambda: washington_rlg(512, 1024), True),
    "rlg-wide-1024x1024": (lambda: washington_rlg(1024, 1024), True),
    "genrmf-wide-a64": (lambda: genrmf(64, 64), True),
    "genrmf-long-a32": (lambda: genrmf(32, 256), True),
    "camera-1mp": (lambda: camera_network(1024), False),
    "rlg-wide-2048x2048": (lambda: washington_rlg(2048, 2048), True),
    "genrmf-wide-a128": (lambda: genrmf(128, 128), True),
    "genrmf-long-a64": (lambda: genrmf(64, 512), True),
    "camera-4mp": (lambda: camera_network(2048), False),
    "random-grid-1mp": (lambda: random_grid((1024, 1024)).to_csr(), False),
    "random-grid-4mp": (lambda: random_grid((2048, 2048)).to_csr(), False),
    "volume-128": (lambda: segmentation_volume(128), False),
    "stereo-move-1": (lambda: stereo_moves()[1], False),
    "stereo-move-33": (lambda: stereo_moves()[33], False),
    "mesh-512x512": (lambda: mesh_network(512, 512), True),       # bench/csr_families.py
    "mesh-1024x1024": (lambda: mesh_network(1024, 1024), True),
    "grid3d-random-64": (lambda: random_grid3d(64), True),
    "grid3d-random-100": (lambda: random_grid3d(100), True),
    "grid3d-random-128": (lambda: random_grid3d(128), True),
}

# each schedule is the default Schedule with these fields changed (since 2026-11-27 the default
# has spread warps, BFS tiles and no block-0 BFS levels: "bfs tiles" etc. then equal it)
VARIANTS = {
    "default": {},
    "before issue 27 (per-vertex BFS, block-0 BFS <= 512, no spread)": {
        "spread_warps": False, "bfs_tiles": False, "bfs_solo_threshold": None},
    "relabel x0.25": {"relabel_levels_factor": 0.25},
    "relabel x0.35": {"relabel_levels_factor": 0.35},
    "relabel x1": {"relabel_levels_factor": 1.0},
    "cycles=2": {"cycles": 2},
    "no-solo": {"solo_threshold": 0},
    "2-blocks/SM": {"blocks_per_sm": 2},
    "relabel every 40": {"relabel_levels_factor": 0.0, "relabel_min_sweeps": 40},
    "exact BFS (no early stop)": {"bfs_early_stop": False},
    "relabel x0.75": {"relabel_levels_factor": 0.75},
    "solo 1024": {"solo_threshold": 1024},
    "solo 2048": {"solo_threshold": 2048},
    "tail 512": {"tail_threshold": 512},    # block 0 also runs the relabels of the tail
    "tail 2048": {"tail_threshold": 2048},
    "bfs tiles": {"bfs_tiles": True},  # issue 27: a BFS level by tiles of one block's width
    "bfs tiles, bfs solo 2048": {"bfs_tiles": True, "bfs_solo_threshold": 2048},
    "bfs tiles, bfs solo 8192": {"bfs_tiles": True, "bfs_solo_threshold": 8192},
    "bfs tiles, bfs solo 0": {"bfs_tiles": True, "bfs_solo_threshold": 0},
    "bfs solo 2048": {"bfs_solo_threshold": 2048},
    "spread": {"spread_warps": True},  # grid steps' warps numbered across the blocks first
    "spread, bfs tiles": {"spread_warps": True, "bfs_tiles": True},
    "spread, bfs tiles, bfs solo 0": {"spread_warps": True, "bfs_tiles": True,
                                      "bfs_solo_threshold": 0},
    "spread, bfs tiles, bfs solo 2048": {"spread_warps": True, "bfs_tiles": True,
                                         "bfs_solo_threshold": 2048},
    "spread, solo 0": {"spread_warps": True, "solo_threshold": 0},
    "spread, solo 0, bfs tiles": {"spread_warps": True, "solo_threshold": 0, "bfs_tiles": True},
}


def _bk_child(network, queue):
    from graphcut.solver import cpu
    result = cpu.csr_min_cut(network)
    queue.put((result.stats["seconds"]["solve"], result.flow, result.source_side))


def bk_seconds(network: CSRNetwork, repeats: int, limit: float | None):
    """Median BK solve seconds, flow and source side; None if a run exceeds ``limit`` s."""
    from graphcut.solver import cpu

    times, flow, side = [], None, None
    for _ in range(repeats):
        if limit is None:
            result = cpu.csr_min_cut(network)
            seconds, flow, side = result.stats["seconds"]["solve"], result.flow, \
                result.source_side
        else:
            queue = multiprocessing.get_context("fork").Queue()
            child = multiprocessing.get_context("fork").Process(target=_bk_child,
                                                                args=(network, queue))
            child.start()
            child.join(limit)
            if child.is_alive():
                child.kill()
                child.join()
                return None
            seconds, flow, side = queue.get()
        times.append(seconds)
    return statistics.median(times), flow, side


def gpu_runs(network: CSRNetwork, repeats: int, schedule=None, slow: float = 5.0):
    """Warm-up + ``repeats`` runs of the CUDA backend; (median solve s, median total s, last
    result). A warm-up slower than ``slow`` seconds leaves one timed run."""
    from graphcut.solver.cuda.csr import csr_min_cut

    warm = csr_min_cut(network, schedule=schedule)
    if warm.stats["seconds"]["solve"] > slow:
        repeats = 1
    results = [csr_min_cut(network, schedule=schedule) for _ in range(repeats)]
    solve = statistics.median(r.stats["seconds"]["solve"] for r in results)
    total = statistics.median(r.stats["seconds"]["total"] for r in results)
    flows = {r.flow for r in results + [warm]}
    if len(flows) != 1:
        raise AssertionError(f"GPU flow varies between runs: {sorted(flows)}")
    return solve, total, results[-1]


def fmt(seconds) -> str:
    if seconds is None:
        return "-"
    if isinstance(seconds, str):
        return seconds
    return f"{seconds * 1e3:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", default=",".join(INSTANCES),
                        help="comma-separated names (default: all): " + ", ".join(INSTANCES))
    parser.add_argument("--repeats", type=int, default=5, help="timed GPU runs (median)")
    parser.add_argument("--cpu-repeats", type=int, default=3, help="timed CPU runs (median)")
    parser.add_argument("--bk-all", action="store_true",
                        help="run BK on the DIMACS families too (60 s limit, subprocess)")
    parser.add_argument("--no-cpu", action="store_true", help="skip the CPU solvers")
    parser.add_argument("--variants", action="store_true",
                        help="also time every kernel schedule in VARIANTS")
    parser.add_argument("--variant-instances", default=None,
                        help="instances for --variants (default: those of --instances)")
    parser.add_argument("--variant-names", default=None,
                        help="schedules of VARIANTS to time, separated by ';' (default: all)")
    parser.add_argument("--crossover", action="store_true",
                        help="also time min_cut() end to end on small networks on both "
                             "backends (the data behind device='auto')")
    parser.add_argument("--stereo-dir", type=Path, default=None,
                        help="also every network of this `graphcut stereo --dump-instances` "
                             "folder (flows checked against its index.json)")
    parser.add_argument("--hpf-orders", default=",".join(ORDERS),
                        help="arc orders to give HPF, the fastest reported "
                             "(bench/hpf_orders.py): " + ", ".join(ORDERS))
    parser.add_argument("--hpf-configs", default="hf-lifo,hf-fifo",
                        help="thinhpf label-root orders to try with each: " + ", ".join(CONFIGS))
    parser.add_argument("--ecl-binary", type=Path, default=None,
                        help="an ECL-MaxFlow executable built from its published source: run "
                             "it live on every instance (see bench/ecl_runner.py)")
    parser.add_argument("--out", type=Path, help="write the markdown tables here too")
    parser.add_argument("--budget", type=float, default=None,
                        help="start no new instance or schedule row after this many seconds")
    parser.add_argument("--tail-thresholds", default=None,
                        help="also run tail mode (Schedule.tail_threshold) with each of these "
                        "comma-separated thresholds, 0 = off (e.g. 0,4096)")
    parser.add_argument("--instrument", action="store_true",
                        help="with --tail-thresholds: summarise one instrumented run each")
    args = parser.parse_args(argv)
    started_all = time.perf_counter()

    def over_budget() -> bool:
        return args.budget is not None and time.perf_counter() - started_all > args.budget

    if args.ecl_binary is not None and not args.ecl_binary.is_file():
        parser.error(f"--ecl-binary {args.ecl_binary}: no such file")
    ok, why = cuda_status()
    if not ok:
        print(f"no GPU backend: {why}", file=sys.stderr)
        return 1
    from graphcut.solver.cuda.csr import Schedule

    names = [x for x in args.instances.split(",") if x]
    if args.stereo_dir is not None:
        dump = stereo_dump(args.stereo_dir)
        INSTANCES.update(dump)
        names += list(dump)
    unknown = [x for x in names if x not in INSTANCES]
    if unknown:
        parser.error(f"unknown instances {unknown}; known: {', '.join(INSTANCES)}")
    lines = [f"Device: {why}; host: {platform.processor() or platform.machine()}, "
             f"{multiprocessing.cpu_count()} cores; {datetime.date.today()}; "
             f"schedule {dataclasses.asdict(Schedule())}", "",
             "| instance | vertices | arcs | flow | GPU phase I | GPU end-to-end | HPF | BK "
             "| best CPU / GPU phase I | sweeps | global relabels | BFS levels | pushes "
             "| kernel s in BFS / sweeps | ECL-MaxFlow phase I (total) "
             "| faster of HPF and ECL phase I / ours |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    print("\n".join(lines), flush=True)
    networks, tails, hpf_rows = {}, {}, []
    for name in names:
        builder, dimacs = INSTANCES[name][:2]
        expected = INSTANCES[name][2] if len(INSTANCES[name]) > 2 else None
        if over_budget():
            print(f"| {name} | skipped: time budget of {args.budget:.0f} s spent |", flush=True)
            continue
        try:
            started = time.perf_counter()
            network, generated = build_with_order(builder)
            built = time.perf_counter() - started
        except Exception as error:  # e.g. the segmentation package is not importable
            print(f"| {name} | skipped: {type(error).__name__}: {error} |", flush=True)
            continue
        networks[name] = network
        solve, total, result = gpu_runs(network, args.repeats)
        if expected is not None and result.flow != expected:
            raise AssertionError(f"{name}: GPU flow {result.flow} != {expected} (index.json)")
        hpf = bk = None
        if not args.no_cpu:
            sweep = hpf_sweep(network, generated, args.hpf_orders.split(","),
                              args.hpf_configs.split(","), args.cpu_repeats)
            hpf_time, hpf_flow, hpf_best = best_hpf(sweep)
            hpf_rows.append(f"| {name} | {describe(sweep, fmt)} | {hpf_best} |")
            print(f"HPF by arc order: {describe(sweep, fmt)}; fastest: {hpf_best}", flush=True)
            # thinhpf's int32 build returns the flow in int32: it wraps above 2**31 - 1.
            if (hpf_flow - result.flow) % 2**32:
                raise AssertionError(f"{name}: HPF flow {hpf_flow} != GPU flow {result.flow}")
            hpf = hpf_time
            if not dimacs or args.bk_all:
                got = bk_seconds(network, args.cpu_repeats, 60.0 if dimacs else None)
                if got is None:
                    bk = "> 60 s (stopped)"
                else:
                    bk, bk_flow, bk_side = got
                    if bk_flow != result.flow or not np.array_equal(bk_side,
                                                                    result.source_side):
                        raise AssertionError(f"{name}: BK and GPU disagree")
            else:
                bk = "not run"
        best_cpu = min([x for x in (hpf, bk) if isinstance(x, float)], default=None)
        ratio = f"{best_cpu / solve:.2f}x" if best_cpu else "-"
        ecl_cell, peer_ratio = ecl_column(args.ecl_binary, network, args.repeats, result.flow,
                                          name, fmt)
        faster = min([x for x in (hpf, peer_ratio) if isinstance(x, float)], default=None)
        peer = f"{faster / solve:.2f}x" if faster else "-"
        st = result.stats
        row = (f"| {name} | {network.num_vertices:,} | {network.num_arcs:,} | {result.flow:,} "
               f"| {fmt(solve)} | {fmt(total)} | {fmt(hpf)} | {fmt(bk)} | {ratio} "
               f"| {st['iterations']:,} | {st['global_relabels']:,} | {st['bfs_levels']:,} "
               f"| {st['pushes']:,} | {st['kernel_seconds']['global_relabel']:.3f} / "
               f"{st['kernel_seconds']['push_relabel']:.3f} | {ecl_cell} | {peer} |")
        lines.append(row)
        print(row, f"(built in {built:.1f} s; stages {_stages(st)}; solo sweeps "
              f"{st['solo_sweeps']:,}, solo levels {st['solo_levels']:,}, blocks "
              f"{st['blocks']}; {trace_summary(st)})", flush=True)
        if args.tail_thresholds:
            from csr_tail_rows import tail_rows
            thresholds = [int(x) for x in args.tail_thresholds.split(",")]
            tails[name] = tail_rows(name, network, thresholds, args.repeats, solve, result.flow,
                                    gpu_runs, fmt, args.instrument)
            print("\n".join(tails[name]), flush=True)
    if hpf_rows:
        lines += ["", "HPF (median of --cpu-repeats) by arc order (and label-root order where not "
                  f"{DEFAULT_CONFIG}); the fastest is the HPF column:", "",
                  "| instance | HPF by arc order | fastest |", "|---|---|---|"] + hpf_rows
    if tails:
        from csr_tail_rows import HEADER
        lines += HEADER + [row for rows in tails.values() for row in rows]

    if args.variants:
        chosen = (args.variant_instances.split(",") if args.variant_instances else
                  list(networks))
        header = ["", "GPU phase-I median per schedule (sweeps / global relabels / BFS levels):", "",
                  "| schedule | " + " | ".join(chosen) + " |",
                  "|---|" + "---|" * len(chosen)]
        lines += header
        print("\n".join(header), flush=True)
        wanted = args.variant_names.split(";") if args.variant_names else list(VARIANTS)
        for label in wanted:
            options = VARIANTS[label]
            if over_budget():
                print(f"| {label} | skipped: time budget spent |", flush=True)
                continue
            cells = []
            for name in chosen:
                network = networks.get(name) or INSTANCES[name][0]()
                networks[name] = network
                solve, _, result = gpu_runs(network, args.repeats, Schedule(**options))
                cells.append(f"{fmt(solve)} ({result.stats['iterations']:,} / "
                             f"{result.stats['global_relabels']:,} / "
                             f"{result.stats['bfs_levels']:,})")
            row = f"| {label} | " + " | ".join(cells) + " |"
            lines.append(row)
            print(row, flush=True)
    if args.crossover:
        table = crossover_table(args.repeats)
        lines += table
        print("\n".join(table), flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


CROSSOVER = [(f"grid {k}x{k}", functools.partial(lambda k: random_grid((k, k)).to_csr(), k))
             for k in (16, 32, 64, 128, 256, 512)] + \
            [(f"genrmf a{a} b{a}", functools.partial(genrmf, a, a)) for a in (4, 8, 16)] + \
            [(f"rlg {r}x{2 * r}", functools.partial(washington_rlg, r, 2 * r))
             for r in (16, 64, 128)]


def crossover_table(repeats: int) -> list[str]:
    """Wall seconds of ``min_cut(network, device=...)`` (host arrays in, host cut out: every
    conversion, upload and build included) on small networks, GPU against the CPU backend (BK);
    medians of ``repeats`` after a warm-up. BK runs stop once one takes over 5 s."""
    from graphcut.solver import min_cut

    def timed(network, device):
        min_cut(network, device=device)
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            result = min_cut(network, device=device)
            times.append(time.perf_counter() - started)
        return statistics.median(times), result

    rows = ["", "min_cut() end to end on small networks (host in, host out; median after a "
            "warm-up):", "", "| network | vertices | arcs | GPU | CPU (BK) | faster |",
            "|---|---|---|---|---|---|"]
    bk_slow = False
    for label, build in CROSSOVER:
        network = build()
        gpu, gpu_result = timed(network, "cuda")
        cpu = None
        if not bk_slow:
            cpu, cpu_result = timed(network, "cpu")
            if cpu_result.flow != gpu_result.flow:
                raise AssertionError(f"{label}: GPU flow {gpu_result.flow} != BK "
                                     f"{cpu_result.flow}")
            bk_slow = cpu > 5.0
        faster = "-" if cpu is None else ("GPU" if gpu < cpu else "CPU")
        rows.append(f"| {label} | {network.num_vertices:,} | {network.num_arcs:,} | {fmt(gpu)} "
                    f"| {fmt(cpu)} | {faster} |")
    return rows


def trace_summary(stats) -> str:
    """Where the kernel's time went by the size of the active set: the share of the kernel
    time spent in rounds (a global relabel and the sweeps after it) that started with fewer
    than 1,000 and 10,000 active vertices, and the levels of the first and last BFS."""
    trace = stats.get("trace")
    if not trace or not len(trace["levels"]):
        return "no trace"
    ns = trace["ns_bfs"] + trace["ns_sweeps"]
    total = max(int(ns.sum()), 1)
    shares = [f"rounds with < {k:,} active {ns[trace['active'] < k].sum() / total:.0%} of time "
              f"({int((trace['active'] < k).sum())} rounds)" for k in (1000, 10000)]
    return (", ".join(shares) + f"; BFS levels first {int(trace['levels'][0]):,}, last "
            f"{int(trace['levels'][-1]):,}, max {int(trace['levels'].max()):,}")


def _stages(stats) -> str:
    return ", ".join(f"{k} {fmt(v)}" for k, v in stats["seconds"].items())


if __name__ == "__main__":
    sys.exit(main())
