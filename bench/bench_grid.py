"""GPU grid solver against PyMaxflow (Boykov-Kolmogorov) on segmentation grids of the samples.

For each sample image (with its bundled seeds) scaled to about 1, 4 and 16 megapixels:
- BK solve only: PyMaxflow's maxflow() call (graph already built), median of runs;
- GPU solve, cold: the first solve of the shape in this process (network already on the GPU;
  state allocation and CUDA graph capture included; the kernel module already loaded);
- GPU solve, warm: network already on the GPU -> cut on the GPU, median of runs; the state of
  the shape and its captured CUDA graphs are kept from the previous solve (reloaded, not
  allocated; replayed, not captured);
- end to end: image and seeds in host memory -> mask in host memory, through
  graphcut.segment (energy built on the GPU for cuda, on the CPU for cpu); median of runs on the
  GPU, a single run on the CPU (labelled so);
- dynamic: a Segmenter re-solving after one more stroke (single run), against a fresh
  Segmenter's first update (single run).
Flows and masks are checked equal across backends on every instance. The huge GPU-only run
checks its cut against the flow and the flow's feasibility (capacities and conservation of the
final preflow), which together certify optimality.

    python bench/bench_grid.py [--sizes 1,4,16] [--images camera,astronaut,coins] [--repeats 5]

Prints a Markdown table (and writes it to --out when given).
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import time
from pathlib import Path

import numpy as np
from skimage.transform import resize

import graphcut
from graphcut.solver import GridNetwork, min_cut

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def scaled_inputs(name: str, megapixels: float):
    image = graphcut.read_image(SAMPLES / "images" / f"{name}.png")
    seeds = graphcut.read_seeds(SAMPLES / "seeds" / f"{name}.png", shape=image.shape[:2])
    h, w = image.shape[:2]
    factor = (megapixels * 2**20 / (h * w)) ** 0.5
    shape = (round(h * factor), round(w * factor))
    big = resize(image, shape + image.shape[2:], order=1, preserve_range=True,
                 anti_aliasing=False).astype(image.dtype)
    big_seeds = resize(seeds, shape, order=0, preserve_range=True,
                       anti_aliasing=False).astype(np.uint8)
    return big, big_seeds


def median_seconds(run, repeats: int, sync=lambda: None):
    times, result = [], None
    for _ in range(repeats):
        sync()
        started = time.perf_counter()
        result = run()
        sync()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def bench_instance(name, megapixels, repeats, cuda):
    image, seeds = scaled_inputs(name, megapixels)
    network = graphcut.build_network(image, seeds)
    bk_repeats = max(1, repeats // 2) if megapixels >= 16 else repeats
    bk = [min_cut(network, device="cpu") for _ in range(bk_repeats)]
    bk_solve = statistics.median(r.stats["seconds"]["solve"] for r in bk)
    expected = bk[0]
    row = {"image": name, "shape": image.shape[:2], "bk_solve": bk_solve}
    if not cuda:
        return row
    import cupy

    from graphcut.solver.cuda.grid import grid_min_cut
    sync = cupy.cuda.Device().synchronize
    on_gpu = GridNetwork(*(cupy.asarray(a) for a in (network.source, network.sink,
                                                     network.right, network.down)))
    from graphcut.solver.cuda.grid import release_cached_state
    grid_min_cut(GridNetwork(*(a[:8, :8] for a in (on_gpu.source, on_gpu.sink)),
                             on_gpu.right[:8, :7], on_gpu.down[:7, :8]))  # module load
    release_cached_state()
    gpu_cold, _ = median_seconds(lambda: grid_min_cut(on_gpu), 1, sync)
    gpu_solve, result = median_seconds(lambda: grid_min_cut(on_gpu), repeats, sync)
    assert result.flow == expected.flow, (name, megapixels, result.flow, expected.flow)
    assert np.array_equal(result.source_side.get(), expected.source_side), (name, megapixels)
    graphcut.segment(image, seeds, device="cuda")
    e2e_gpu, mask = median_seconds(lambda: graphcut.segment(image, seeds, device="cuda"),
                                   repeats, sync)
    assert np.array_equal(mask, expected.source_side)
    e2e_cpu, _ = median_seconds(lambda: graphcut.segment(image, seeds, device="cpu"), 1)
    # dynamic: one more background stroke across the top rows, then re-solve
    session = graphcut.Segmenter(image, device="cuda")
    session.update(seeds)
    edited = seeds.copy()
    h, w = seeds.shape
    edited[h // 20: h // 20 + max(2, h // 200), w // 4: 3 * w // 4] = graphcut.BACKGROUND
    started = time.perf_counter()
    dynamic_mask = session.update(edited)
    dynamic = time.perf_counter() - started
    fresh_edited = min_cut(graphcut.build_network(image, edited), device="cpu")
    assert np.array_equal(dynamic_mask, fresh_edited.source_side)
    assert session.last_result.flow == fresh_edited.flow
    fresh_session = graphcut.Segmenter(image, device="cuda")
    started = time.perf_counter()
    fresh_session.update(edited)
    fresh = time.perf_counter() - started
    row.update(gpu_cold=gpu_cold, gpu_solve=gpu_solve, e2e_gpu=e2e_gpu, e2e_cpu=e2e_cpu, dynamic=dynamic,
               fresh_update=fresh, relabels=result.stats["global_relabels"],
               launches=result.stats["push_relabel_launches"],
               bfs_passes=result.stats["bfs_passes"],
               t_bfs=result.stats["global_relabel_seconds"],
               t_pr=result.stats["push_relabel_seconds"], device=result.stats["device_name"])
    return row


def bench_huge(name, megapixels):
    """GPU only: end-to-end time and GPU memory at a size BK is not run at; instead of BK, the
    final preflow is checked feasible and the cut's capacity equal to its flow (a certificate
    of optimality)."""
    import cupy

    from graphcut.solver import cut_capacity
    image, seeds = scaled_inputs(name, megapixels)
    pool = cupy.get_default_memory_pool()
    graphcut.segment(*scaled_inputs(name, 0.25), device="cuda")  # warm-up
    started = time.perf_counter()
    mask, result = graphcut.segment(image, seeds, device="cuda", return_result=True)
    seconds = time.perf_counter() - started
    peak = pool.total_bytes()
    network = graphcut.build_network(cupy.asarray(image), cupy.asarray(seeds))
    from graphcut.solver.cuda import grid
    (state,) = grid._reusable.values()  # the state the segmentation just finished with
    check_feasible_preflow(state, network)
    assert cut_capacity(network, mask) == result.flow
    h, w = mask.shape
    return (f"| {name} | {h * w / 1e6:.1f} ({h}x{w}) | end to end {seconds:.2f} s, solve "
            f"{result.stats['seconds']['total']:.2f} s | {peak / 2**30:.1f} GiB held by CuPy's "
            f"pool | feasible preflow, cut capacity == flow ({result.flow}) |")


def check_feasible_preflow(state, network) -> None:
    """Capacity and conservation constraints of the GPU state's final preflow (on the GPU)."""
    import cupy
    cap = cupy.zeros((4,) + network.shape, dtype=cupy.int64)
    cap[0, :, :-1], cap[1, :, 1:] = network.right, network.left
    cap[2, :-1, :], cap[3, 1:, :] = network.down, network.up
    residual = state.residual.astype(cupy.int64)
    assert bool((residual >= 0).all())
    assert bool((residual[0, :, :-1] + residual[1, :, 1:] == cap[0, :, :-1] + cap[1, :, 1:]).all())
    assert bool((residual[2, :-1, :] + residual[3, 1:, :] == cap[2, :-1, :] + cap[3, 1:, :]).all())
    to_sink = state.to_sink.astype(cupy.int64)
    assert bool(((to_sink >= 0) & (to_sink <= state.sink_capacity)).all())
    assert bool((state.excess >= 0).all())
    outflow = (cap - residual).sum(axis=0)
    inflow = state.source_capacity - (state.sink_capacity - to_sink) - outflow
    assert bool((state.excess == inflow).all())


def table(rows) -> str:
    lines = ["| image | size (MP) | BK solve s | GPU solve s, cold (1 run) | GPU solve s | "
             "BK / GPU | end-to-end CPU s (1 run) | end-to-end GPU s | re-solve after a stroke "
             "s (fresh), 1 run each | global relabels | PR launches | BFS passes | "
             "BFS s / PR s |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        h, w = r["shape"]
        if "gpu_solve" not in r:
            lines.append(f"| {r['image']} | {h * w / 1e6:.1f} ({h}x{w}) | {r['bk_solve']:.4f} |"
                         " - | - | - | - | - | - | - | - | - | - |")
            continue
        lines.append(
            f"| {r['image']} | {h * w / 1e6:.1f} ({h}x{w}) | {r['bk_solve']:.4f} | "
            f"{r['gpu_cold']:.4f} | {r['gpu_solve']:.4f} | **{r['bk_solve'] / r['gpu_solve']:.1f}x** | "
            f"{r['e2e_cpu']:.3f} | {r['e2e_gpu']:.4f} | {r['dynamic']:.4f} "
            f"({r['fresh_update']:.4f}) | {r['relabels']} | {r['launches']} | "
            f"{r['bfs_passes']} | {r['t_bfs']:.4f} / {r['t_pr']:.4f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,4,16", help="megapixels, comma-separated")
    parser.add_argument("--images", default="camera,coins,astronaut,coffee")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, help="also write the table here")
    parser.add_argument("--huge", type=float, default=0,
                        help="also segment camera at this many megapixels on the GPU only")
    args = parser.parse_args()
    cuda = graphcut.solver.cuda_status()[0]
    rows = []
    for name in args.images.split(","):
        for size in args.sizes.split(","):
            row = bench_instance(name, float(size), args.repeats, cuda)
            rows.append(row)
            print(row, flush=True)
    device = rows[0].get("device", "no GPU")
    text = (f"{datetime.date.today()}, {device}, PyMaxflow BK on the same machine's CPU; "
            f"medians of {args.repeats} runs after a warm-up unless a column says otherwise\n\n{table(rows)}\n")
    print(text, flush=True)
    if args.out:
        args.out.write_text(text)
    if args.huge and cuda:
        text += ("\n| image | size (MP) | GPU time | GPU memory | check |\n|---|---|---|---|---|\n"
                 + bench_huge("camera", args.huge) + "\n")
        print(text)
        if args.out:
            args.out.write_text(text)


if __name__ == "__main__":
    main()
