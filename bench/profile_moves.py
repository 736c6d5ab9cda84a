"""Profile: several objects' expansion moves one by one, with the solver's own counters.

The scenario of ``bench/bench_objects.py`` (a synthetic colour image of ``--megapixels`` with
``--objects`` objects, start seeds, then ``--strokes`` correcting strokes through one
``graphcut.Segmenter``). For every correcting stroke: the exact update's wall seconds and its
expansion moves' summed min-cut seconds; for the stroke ``--detail`` (1 the first correcting
stroke) every move on its own line: label, accepted, pixels changed, the min-cut's wall
milliseconds (upload, solve and cut read-back), and the GPU solver's counters (global
relabels, push-relabel launches, and the GPU milliseconds of the relabels and of the launches
from CUDA events). Then the median exact stroke.

``--patch MODULE.NAME=VALUE`` sets a module constant for the run (as in
``bench/bench_quality.py``), e.g. the first batch of the fresh solves' schedule, or
``graphcut.labeling._device_cuts.BALANCE=False`` (the GPU's moves on their own networks);
``--previous`` gives each update the last update's seeds and labels, as the app does:

    python3 bench/profile_moves.py --device cuda --megapixels 4 --objects 3 --strokes 4 \\
        --patch graphcut.solver.cuda.schedule.FIRST_LAUNCHES=None

Timings are synchronised by the update itself (it returns host labels after reading its flows).
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import numpy as np
from bench_objects import correcting_stroke, start_seeds, synthetic
from bench_quality import apply_patch

import graphcut


def move_line(move, stats) -> str:
    """One move: what it did and what its min-cut cost."""
    line = (f"  move {move.index} cycle {move.cycle} label {move.alpha}: "
            f"{'accepted' if move.accepted else 'rejected'}, {move.changed} changed, "
            f"min-cut {move.maxflow_seconds * 1e3:.1f} ms")
    if "global_relabels" in stats:
        line += (f", relabels {stats['global_relabels']}, launches "
                 f"{stats['push_relabel_launches']}, relabel GPU "
                 f"{stats['global_relabel_seconds'] * 1e3:.1f} ms, push-relabel GPU "
                 f"{stats['push_relabel_seconds'] * 1e3:.1f} ms")
    return line


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megapixels", type=float, default=0.25)
    parser.add_argument("--objects", type=int, default=3)
    parser.add_argument("--strokes", type=int, default=4)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--detail", type=int, default=1, metavar="N",
                        help="print every move of correcting stroke N (0: none)")
    parser.add_argument("--previous", action="store_true",
                        help="give each update the last update's (seeds, labels), as the app "
                             "does (the expansion starts from those labels)")
    parser.add_argument("--patch", action="append", default=[], metavar="MODULE.NAME=VALUE")
    args = parser.parse_args(argv)
    for change in args.patch:
        apply_patch(change)
    side = int(round(math.sqrt(args.megapixels * 1e6)))
    image, truth = synthetic(side, args.objects)
    seeds = start_seeds(truth)
    segmenter = graphcut.Segmenter(image, device=args.device)
    segmenter.prepare()
    cut_stats = []  # the current update's min-cut counters, in move order (GPU moves)

    from graphcut.labeling import _device_cuts  # the GPU's moves call min_cut by this name
    solve = _device_cuts.min_cut

    def counted(network, device):
        cut = solve(network, device=device)
        cut_stats.append(dict(cut.stats))
        return cut
    _device_cuts.min_cut = counted
    print(f"# {side}x{side}, {args.objects} objects + background, device {args.device}, "
          f"patches {args.patch or 'none'}")
    exact = []
    previous = None  # the last update's (seeds, labels), for --previous
    try:
        for stroke in range(args.strokes + 1):
            cut_stats.clear()
            started = time.perf_counter()
            labels = segmenter.update(seeds, previous=previous if args.previous else None)
            labels = labels.get() if hasattr(labels, "get") else np.asarray(labels)
            seconds = time.perf_counter() - started
            previous = (seeds.copy(), labels)
            expansion = segmenter.last_result.stats.get("expansion")
            if stroke:
                exact.append(seconds)
                moves = expansion.moves if expansion is not None else []
                print(f"stroke {stroke}: exact {seconds:.3f} s, {len(moves)} moves, min-cut "
                      f"{sum(m.maxflow_seconds for m in moves):.3f} s, accuracy "
                      f"{(labels == truth).mean():.4f}")
                if stroke == args.detail:
                    for index, move in enumerate(moves):  # the CPU's moves: no counters
                        stats = cut_stats[index] if index < len(cut_stats) else {}
                        print(move_line(move, stats))
            region = correcting_stroke(labels, truth, seeds)
            if region is None:
                break
    finally:
        _device_cuts.min_cut = solve
    if exact:
        print(f"median exact per correcting stroke: {statistics.median(exact):.3f} s "
              f"(max {max(exact):.3f}, {len(exact)} strokes)")


if __name__ == "__main__":
    main()
