"""Benchmark: several objects live — per-stroke seconds and peak memory of the exact
multi-object update and of the app's preview, on a synthetic image with truth.

Input: a noisy synthetic colour image of ``--megapixels`` (square) with ``--objects`` objects
(discs and squares of distinct colours; labels 1, 3, 4, ...) on a background, seeds: a small
square inside each object and a background frame. Then ``--strokes`` *correcting* strokes: each
one paints, with its true label, a 9 x 9 square centred on a pixel the current result gets
wrong (the wrong pixel nearest the centre of the largest wrong label's errors; none left: the
run ends).

Per stroke: wall seconds (and this process's CPU seconds, which a busy machine inflates less)
of ``graphcut.Segmenter.update`` (the exact label image, the app's exact solver), the expansion's cycles and moves, its min-cut seconds (PyMaxflow's graph setup
and max-flow) and network-building seconds, the pipeline's stages (fit, costs, problem, cut),
the accuracy against the truth; and the wall seconds of the app's preview solver
(``graphcut.gui.solve.Solver`` with ``preview_factor(shape)``) for the same seeds. Peak memory:
``tracemalloc`` peak of one exact update (NumPy allocations), with two or more objects and
with only object 1 (the others' seeds erased), to compare; and the growth of the peak resident
memory of a fresh process through a prepared Segmenter's two updates (PyMaxflow's graph, which
tracemalloc does not see, included); on the GPU CuPy's memory pool in use after the strokes
and what a session with object 1 only adds.

Each update's expansion starts from the cheapest labels, as a fresh ``segment``'s (the
default); ``--warm-objects`` sets ``Segmenter.warm_objects``: from the previous update's labels
(fewer moves; opt-in since it may end in another local minimum); ``--previous`` gives each
update the previous update's ``(seeds, labels)``, as the app does: the expansion starts from
those labels, and a fresh ``segment`` given the same ``previous`` answers the same.

    OPENBLAS_NUM_THREADS=1 python bench/bench_objects.py --megapixels 0.25 --objects 2
    python bench/bench_objects.py --device cuda --megapixels 4 --objects 3

Prints one line per stroke and a summary.
"""

from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import statistics
import time
import tracemalloc

import numpy as np

import graphcut
from graphcut.gui.sharing import SeedDelta
from graphcut.gui.solve import Job, Session, Solver, preview_factor

PALETTE = np.array([[50, 70, 170], [200, 60, 50], [0, 0, 0], [60, 190, 70], [210, 200, 60],
                    [150, 60, 190]], float)


def synthetic(side: int, objects: int, seed: int = 0):
    """(image uint8 (side, side, 3), truth uint8 labels 0 / 1 / 3 / 4 ...)."""
    rng = np.random.default_rng(seed)
    truth = np.zeros((side, side), np.uint8)
    yy, xx = np.mgrid[:side, :side]
    values = [1, 3, 4, 5][:objects]
    for i, value in enumerate(values):
        cy, cx = side * (0.3 + 0.4 * (i % 2)), side * (0.3 + 0.4 * (i // 2 % 2))
        cy += side * 0.05 * (i // 2)
        radius = side * 0.15
        if i % 2 == 0:
            truth[(yy - cy) ** 2 + (xx - cx) ** 2 < radius ** 2] = value
        else:
            truth[int(cy - radius):int(cy + radius), int(cx - radius):int(cx + radius)] = value
    image = PALETTE[truth] + rng.normal(0, 70, (side, side, 3))
    # a gradient and texture so that colours overlap a little
    image += 30 * np.sin(xx / 17.0)[..., None]
    return np.clip(image, 0, 255).astype(np.uint8), truth


def start_seeds(truth):
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[:4, :] = seeds[-4:, :] = 2
    for value in np.unique(truth[truth > 0]):
        rows, cols = np.nonzero(truth == value)
        r, c = int(np.median(rows)), int(np.median(cols))
        seeds[r - 5:r + 5, c - 5:c + 5] = value
    return seeds


def correcting_stroke(result, truth, seeds):
    """Paint a 9 x 9 square of the true labels at a wrong pixel; returns the changed region
    ``(row0, row1, col0, col1)``, or None when no pixel is wrong."""
    wrong = (result != truth) & (seeds == 0)
    if not wrong.any():
        return None
    rows, cols = np.nonzero(wrong)
    pick = np.argmin((rows - rows.mean()) ** 2 + (cols - cols.mean()) ** 2)
    r, c = int(rows[pick]), int(cols[pick])
    part = (slice(max(0, r - 4), r + 5), slice(max(0, c - 4), c + 5))
    seeds[part] = np.where(truth[part] == 0, 2, truth[part])
    return (part[0].start, min(r + 5, seeds.shape[0]), part[1].start, min(c + 5, seeds.shape[1]))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megapixels", type=float, default=0.25)
    parser.add_argument("--objects", type=int, default=2)
    parser.add_argument("--strokes", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--model", default=None,
                        help="the exact update's appearance model (histogram, gmm, "
                             "learned; default: the library's); the preview keeps the app's")
    parser.add_argument("--no-preview", action="store_true")
    parser.add_argument("--no-memory", action="store_true")
    parser.add_argument("--preview-only", action="store_true",
                        help="time only the preview; strokes correct the preview's labels")
    parser.add_argument("--moves", action="store_true",
                        help="print every expansion move (label, accepted, pixels changed, "
                             "min-cut and build seconds)")
    parser.add_argument("--warm-objects", action="store_true",
                        help="Segmenter.warm_objects: start every update's expansion from the "
                             "previous update's labels (default: from the cheapest, exact)")
    parser.add_argument("--previous", action="store_true",
                        help="give every update previous=(the last update's seeds, its labels), "
                             "as the app does: the expansion starts from those labels")
    parser.add_argument("--no-balance", action="store_true",
                        help="cut the expansion moves on their networks as built, not balanced "
                             "(labeling._host_cuts.BALANCE and BALANCE_REDUCED False: the "
                             "state before the fifteenth session, for an A/B run)")
    parser.add_argument("--no-certify", action="store_true",
                        help="cut every whole-grid move on the whole grid, without first trying "
                             "to prove on a region that it changes nothing "
                             "(labeling._host_cuts.CERTIFY = False)")
    parser.add_argument("--full-fit", action="store_true",
                        help="the first fit reads every pixel, not only the seeds' "
                             "(segmentation._grabcut.COMPACT_FIT = 0: the state before the "
                             "ninth session, for an A/B run)")
    parser.add_argument("--seed-checks-on-host", action="store_true",
                        help="check and list the seeds of several objects from a host copy and "
                             "check and upload the whole seeds at every update "
                             "(io._seeds.DEVICE_HISTOGRAM and segmentation._device_seeds."
                             "DIFF_WHOLE False: the state before the seventeenth session, for "
                             "an A/B run)")
    parser.add_argument("--profile", type=int, default=0, metavar="N",
                        help="cProfile the exact updates of the correcting strokes (not the "
                             "first mask) and print the N entries of most cumulative time; on "
                             "the GPU run with CUDA_LAUNCH_BLOCKING=1 so that kernel time is "
                             "charged to the call that launched it")
    args = parser.parse_args(argv)
    cut_paths = record_cut_paths() if args.moves else []
    from graphcut.labeling import _host_cuts
    if args.no_balance:  # (the certificate needs a balanced network: off with it)
        _host_cuts.BALANCE = _host_cuts.BALANCE_REDUCED = False
    if args.no_certify:
        _host_cuts.CERTIFY = False
    if args.full_fit:
        from graphcut.segmentation import _grabcut
        _grabcut.COMPACT_FIT = 0.0
    if args.seed_checks_on_host:
        from graphcut.io import _seeds
        from graphcut.segmentation import _device_seeds
        _seeds.DEVICE_HISTOGRAM = _device_seeds.DIFF_WHOLE = False
    side = int(round(math.sqrt(args.megapixels * 1e6)))
    image, truth = synthetic(side, args.objects)
    seeds = start_seeds(truth)
    print(f"# {side}x{side}, {args.objects} objects + background, device {args.device}")
    started = time.perf_counter()
    segmenter = graphcut.Segmenter(image, model=args.model, device=args.device)
    segmenter.warm_objects = args.warm_objects
    prepared = segmenter.prepare()
    print(f"# Segmenter and prepare(): {time.perf_counter() - started:.3f} s "
          f"(prepare {prepared:.3f} s)")
    profile = cProfile.Profile() if args.profile else None
    factor = preview_factor(truth.shape)
    preview = None
    if not args.no_preview and factor > 1:
        preview = Solver()
        opened = preview.open(Session(1, image, segmenter.lam, "cpu", preview_factor=factor))
        assert opened.error is None, opened.error
    exact_times, preview_times = [], []
    region = None  # the first job carries all the seeds, later ones the stroke's rectangle
    previous = None  # the last update's (seeds, labels), for --previous
    for stroke in range(args.strokes + 1):
        started, cpu = time.perf_counter(), time.process_time()
        if args.preview_only:
            labels, stats = None, {}
        else:
            if profile is not None and stroke:
                profile.enable()
            labels = segmenter.update(seeds, previous=previous if args.previous else None)
            if profile is not None:
                profile.disable()
            labels = labels.get() if hasattr(labels, "get") else np.asarray(labels)  # CuPy
            previous = (seeds.copy(), labels)
            stats = segmenter.last_result.stats
        exact, exact_cpu = time.perf_counter() - started, time.process_time() - cpu
        expansion = stats.get("expansion")
        stages = stats.get("seconds", {}).get("stages", {})
        line = f"stroke {stroke}: " + ("" if labels is None else
                                       f"exact {exact:.3f} s (CPU time {exact_cpu:.3f} s), "
                                       f"accuracy "
                                       f"{(labels == truth).mean():.4f}")
        if expansion is not None:
            line += (f", cycles {expansion.cycles}, moves {len(expansion.moves)} "
                     f"({sum(m.accepted for m in expansion.moves)} accepted), min-cut "
                     f"{sum(expansion.maxflow_seconds.values()):.3f} s (max-flow "
                     f"{sum(expansion.solve_seconds.values()):.3f}), build "
                     f"{expansion.build_seconds:.3f} s")
        if stages:
            line += ", stages " + " ".join(f"{k} {v:.3f}" for k, v in stages.items())
        if preview is not None:
            started, cpu = time.perf_counter(), time.process_time()
            delta = SeedDelta(None, seeds.copy()) if region is None else \
                SeedDelta(region, seeds[region[0]:region[1], region[2]:region[3]].copy())
            outcome = preview.run(Job(stroke + 1, 1, segmenter.lam, delta))  # as the app sends
            assert outcome.error is None, outcome.error
            preview_times.append(time.perf_counter() - started)
            line += (f"; preview 1/{factor} {preview_times[-1]:.3f} s "
                     f"(CPU time {time.process_time() - cpu:.3f} s)")
            if labels is None:  # the preview's labels, scaled up
                small = outcome.labels if outcome.labels is not None else \
                    np.zeros(preview._preview.reduced_shape, np.uint8)
                labels = np.repeat(np.repeat(small, factor, 0), factor, 1)[:side, :side]
                line += f", accuracy {(labels == truth).mean():.4f}"
        print(line, flush=True)
        if args.moves and expansion is not None:
            # the CPU cutter records how each cut was solved; the GPU's moves have no path
            paths = cut_paths[-len(expansion.moves):] if cut_paths else \
                ["whole grid on the GPU"] * len(expansion.moves)
            for m, path in zip(expansion.moves, paths):
                print(f"  move {m.index} cycle {m.cycle} label {m.alpha}: "
                      f"{'accepted' if m.accepted else 'rejected'}, {m.changed} changed, "
                      f"min-cut {m.maxflow_seconds:.4f} s (max-flow {m.solve_seconds:.4f}), "
                      f"build {m.build_seconds:.4f} s, {path}")
        if stroke and not args.preview_only:  # stroke 0: the first mask from the start seeds
            exact_times.append(exact)
        region = correcting_stroke(labels, truth, seeds)
        if region is None:
            break
    if exact_times:
        print(f"median exact per correcting stroke: {statistics.median(exact_times):.3f} s "
              f"(max {max(exact_times):.3f}, {len(exact_times)} strokes)")
    if profile is not None:
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.profile)
    if preview_times:
        print(f"median preview: {statistics.median(preview_times):.3f} s "
              f"(max {max(preview_times):.3f})")
    if args.device == "cuda" and not args.no_memory:
        gpu_memory(segmenter, image, seeds)
    if not args.no_memory and args.device == "cpu":
        for name, test_seeds in (("several objects", seeds),
                                 ("object 1 only", np.where(seeds > 2, 0, seeds))):
            fresh = graphcut.Segmenter(image, device="cpu")
            fresh.prepare()
            tracemalloc.start()
            fresh.update(test_seeds.astype(np.uint8))
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            print(f"tracemalloc peak of one update, {name}: {peak / 2 ** 20:.0f} MiB "
                  f"({peak / truth.size:.0f} bytes per pixel)")
            grown = session_memory(image, test_seeds.astype(np.uint8))
            print(f"peak RSS added by a prepared Segmenter and two updates, {name}: "
                  f"{grown / 2 ** 20:.0f} MiB ({grown / truth.size:.0f} bytes per pixel, "
                  "PyMaxflow's graph included)")


def record_cut_paths() -> list:
    """Wrap the CPU cutter of the moves so that each cut appends how it was solved: on the
    reduced graph (its free pixels), certified unchanged on a region, or the whole grid
    (balanced or as built). Returns the list it appends to."""
    from graphcut.labeling import HostMoveCuts
    paths = []
    solve = HostMoveCuts.__call__

    def recorded(self, network, label=None):
        cut = solve(self, network, label)
        stats = cut.stats
        paths.append(f"reduced to {stats['free_pixels']} pixels" if "free_pixels" in stats
                     else f"unchanged, certified on {stats['certified_pixels']} pixels"
                     if "certified_pixels" in stats
                     else "whole grid" + (", balanced" if stats.get("balanced") else ""))
        return cut

    HostMoveCuts.__call__ = recorded
    return paths


def gpu_memory(segmenter, image, seeds) -> None:
    """CuPy's memory pool in use after the strokes of several objects, and what one update of
    a new session with object 1 only adds."""
    import cupy
    pool = cupy.get_default_memory_pool()
    several = base = pool.used_bytes()  # the session stays alive: the new one's part is added
    one = graphcut.Segmenter(image, device="cuda")
    one.update(np.where(seeds > 2, 0, seeds).astype(np.uint8))
    single = pool.used_bytes() - base
    print(f"GPU memory pool in use: several objects {several / 2 ** 20:.0f} MiB "
          f"({several / seeds.size:.0f} bytes per pixel), object 1 only "
          f"{single / 2 ** 20:.0f} MiB ({single / seeds.size:.0f} bytes per pixel)")


def _peak_resident() -> int:
    """This process's peak resident memory in bytes (Linux: VmHWM, which, unlike
    ``ru_maxrss``, starts afresh in a spawned process)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _session_memory(image, seeds, queue, flags) -> None:
    from graphcut.labeling import _host_cuts
    # a spawned process: the flags of --no-balance / --no-certify set again
    _host_cuts.BALANCE, _host_cuts.BALANCE_REDUCED, _host_cuts.CERTIFY = flags
    before = _peak_resident()
    session = graphcut.Segmenter(image, device="cpu")
    session.prepare()
    session.update(seeds)
    session.update(seeds.copy())
    queue.put(_peak_resident() - before)


def session_memory(image, seeds) -> int:
    """Bytes by which the peak resident memory of a fresh process grows from before the
    Segmenter is made to after its second update (Linux only; the moves' cuts balanced as in
    this process)."""
    from graphcut.labeling import _host_cuts
    import multiprocessing
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_session_memory,
                            args=(image, seeds, queue, (_host_cuts.BALANCE,
                                                        _host_cuts.BALANCE_REDUCED,
                                                        _host_cuts.CERTIFY)))
    child.start()
    grown = queue.get()
    child.join()
    return grown


if __name__ == "__main__":
    main()
