"""GPU volume solver against PyMaxflow's 6-connected grid (Boykov-Kolmogorov) on segmentation
volumes.

The volumes are the synthetic sample (samples/volume/make_volume_sample.py: a two-lobed cell,
intensity ramp, Gaussian noise, scribbles in the middle slice and on the end slices) scaled to
N^3 voxels; the energy is graphcut's Boykov-Jolly energy with lam 10. For each size:

- BK solve: PyMaxflow's ``maxflow()`` alone (graph already built), one run (it is slow);
- GPU solve: the network already on the GPU -> cut on the GPU (state set-up included),
  median of --repeats after a warm-up;
- end to end: the volume and the seeds in host memory -> the mask in host memory, through
  ``graphcut.segment`` (energy built on the GPU for cuda, on the CPU for cpu); GPU median of
  --repeats after a warm-up, CPU one run;
- re-solve: ``Segmenter.update`` after one more background stroke (in brackets: a fresh
  Segmenter's first update with the same seeds).

Flows and masks are checked equal across backends wherever both run. Sizes above --cpu-max
run on the GPU only (512^3 needs ~35 GB of host memory for BK's graph and minutes).

    python bench/bench_volume.py [--sizes 128,256,512] [--repeats 3] [--cpu-max 256] [--out F]

Prints a Markdown table (and writes it to --out when given).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

import numpy as np

import graphcut
from graphcut.solver import GridNetwork

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "samples" / "volume"))
from make_volume_sample import make  # noqa: E402

from bench_grid import median_seconds  # noqa: E402  (same folder)


def schedule_from(args):
    from graphcut.solver.cuda.grid import Schedule
    return Schedule(cycles=args.cycles, launches_per_relabel=args.launches)


def bench_size(side: int, args, cuda: bool) -> dict:
    shape = (side, side, side)
    started = time.perf_counter()
    volume, seeds = make(shape)
    row = {"side": side, "make": time.perf_counter() - started}
    print(f"{side}^3: volume made in {row['make']:.1f} s", flush=True)
    expected = None
    if side <= args.cpu_max:
        started = time.perf_counter()
        mask_cpu, expected = graphcut.segment(volume, seeds, device="cpu", return_result=True)
        row["e2e_cpu"] = time.perf_counter() - started
        row["bk_solve"] = expected.stats["seconds"]["solve"]
        row["bk_build"] = expected.stats["seconds"]["build"]
        print(f"  BK: solve {row['bk_solve']:.2f} s, end to end {row['e2e_cpu']:.2f} s",
              flush=True)
    if not cuda:
        return row
    import cupy

    from graphcut.solver.cuda.grid import grid_min_cut, release_cached_state
    sync = cupy.cuda.Device().synchronize
    pool = cupy.get_default_memory_pool()
    schedule = schedule_from(args)
    network = graphcut.build_network(cupy.asarray(volume), cupy.asarray(seeds))
    on_gpu = GridNetwork(network.source, network.sink, forward=network.forward)
    grid_min_cut(on_gpu, schedule=schedule)  # warm-up: module load, allocations, graphs
    row["gpu_solve"], result = median_seconds(lambda: grid_min_cut(on_gpu, schedule=schedule),
                                              args.repeats, sync)
    side_gpu = result.source_side.get()
    if expected is not None:
        assert result.flow == expected.flow, (side, result.flow, expected.flow)
        assert np.array_equal(side_gpu, mask_cpu), side
    row.update(relabels=result.stats["global_relabels"],
               launches=result.stats["push_relabel_launches"],
               bfs_passes=result.stats["bfs_passes"],
               t_bfs=result.stats["global_relabel_seconds"],
               t_pr=result.stats["push_relabel_seconds"], device=result.stats["device_name"])
    network = on_gpu = None  # free the GPU memory before the end-to-end runs
    release_cached_state()
    pool.free_all_blocks()
    graphcut.segment(volume, seeds, device="cuda")  # warm-up at this size
    row["e2e_gpu"], (mask, e2e) = median_seconds(
        lambda: graphcut.segment(volume, seeds, device="cuda", return_result=True),
        args.repeats, sync)
    assert e2e.backend == "cuda" and e2e.flow == result.flow
    assert np.array_equal(mask, side_gpu)
    row["gpu_memory"] = pool.total_bytes()
    print(f"  GPU: solve {row['gpu_solve']:.3f} s, end to end {row['e2e_gpu']:.3f} s",
          flush=True)
    release_cached_state()
    # dynamic: one more background stroke across the top of the middle slice, then re-solve
    session = graphcut.Segmenter(volume, channel_axis=None, device="cuda")
    session.update(seeds)
    edited = seeds.copy()
    edited[side // 2, side // 20: side // 20 + max(2, side // 100), side // 4: 3 * side // 4] = \
        graphcut.BACKGROUND
    started = time.perf_counter()
    dynamic_mask = session.update(edited)
    row["dynamic"] = time.perf_counter() - started
    del session
    fresh_session = graphcut.Segmenter(volume, channel_axis=None, device="cuda")
    started = time.perf_counter()
    fresh_mask = fresh_session.update(edited)
    row["fresh_update"] = time.perf_counter() - started
    assert np.array_equal(dynamic_mask, fresh_mask)
    del fresh_session
    release_cached_state()
    pool.free_all_blocks()
    return row


def table(rows) -> str:
    def cell(row, key, fmt="{:.3f}"):
        return fmt.format(row[key]) if key in row else "-"

    lines = ["| volume | voxels | BK solve s | GPU solve s | BK / GPU | end-to-end CPU s | "
             "end-to-end GPU s | CPU / GPU | re-solve after a stroke s (fresh) | "
             "global relabels | PR launches | BFS passes | BFS s / PR s | GPU pool GiB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        n = r["side"]
        solve_ratio = (f"**{r['bk_solve'] / r['gpu_solve']:.1f}x**"
                       if "bk_solve" in r and "gpu_solve" in r else "-")
        e2e_ratio = (f"**{r['e2e_cpu'] / r['e2e_gpu']:.1f}x**"
                     if "e2e_cpu" in r and "e2e_gpu" in r else "-")
        dynamic = (f"{r['dynamic']:.3f} ({r['fresh_update']:.3f})" if "dynamic" in r else "-")
        timing = (f"{r['t_bfs']:.3f} / {r['t_pr']:.3f}" if "t_bfs" in r else "-")
        memory = (f"{r['gpu_memory'] / 2**30:.1f}" if "gpu_memory" in r else "-")
        lines.append(
            f"| {n}^3 | {n ** 3 / 1e6:.1f} M | {cell(r, 'bk_solve')} | {cell(r, 'gpu_solve')} | "
            f"{solve_ratio} | {cell(r, 'e2e_cpu')} | {cell(r, 'e2e_gpu')} | {e2e_ratio} | "
            f"{dynamic} | {r.get('relabels', '-')} | {r.get('launches', '-')} | "
            f"{r.get('bfs_passes', '-')} | {timing} | {memory} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="128,256,512", help="volume sides, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cpu-max", type=int, default=256,
                        help="largest side also run with PyMaxflow")
    parser.add_argument("--cycles", type=int, default=8, help="Schedule.cycles (GPU solve)")
    parser.add_argument("--launches", type=int, default=16,
                        help="Schedule.launches_per_relabel (GPU solve)")
    parser.add_argument("--out", type=Path, help="also write the table here")
    args = parser.parse_args()
    cuda = graphcut.solver.cuda_status()[0]
    rows = []
    for side in (int(s) for s in args.sizes.split(",")):
        rows.append(bench_size(side, args, cuda))
        print(rows[-1], flush=True)
    device = next((r["device"] for r in rows if "device" in r), "no GPU")
    text = (f"{datetime.date.today()}, {device}, PyMaxflow BK (6-connected) on the same "
            f"machine's CPU; GPU medians of {args.repeats} runs after a warm-up, CPU one run; "
            f"schedule cycles={args.cycles}, launches_per_relabel={args.launches}\n\n"
            f"{table(rows)}\n")
    print(text, flush=True)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
