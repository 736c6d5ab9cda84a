"""Where a correcting stroke's time goes, through graphcut.Segmenter: each stage of the
pipeline wrapped with a timer that synchronises the GPU before and after it (so a stage's
time includes the kernels it queued), medians over the strokes. Stages nest (the pipeline
includes the fit, the costs, the problem and the cut), so the rows do not add up; "other" is
the update's time outside the stages listed directly under it.

    python bench/profile_stroke.py --megapixels 4 --device cuda --model learned --strokes 10
    python bench/profile_stroke.py --megapixels 1 --device cpu --model histogram --strokes 3

The synchronisation costs a few microseconds per stage, so the update's total here is a
little above bench_learned_latency.py's.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import importlib
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_quality import add_stroke, interior_point, next_click  # noqa: E402
from quality_data import scaled_item  # noqa: E402

# (label, module, attribute path): patched where the caller looks the name up
STAGES = (
    ("update", "graphcut.segmentation._segmenter", "Segmenter.update"),
    ("  pipeline", "graphcut.segmentation._segmenter", "segment_values"),
    ("    check seeds", "graphcut.segmentation._pipeline", "check_seeds"),
    ("    seed weights", "graphcut.segmentation._pipeline", "_seed_weights"),
    ("    locality priors", "graphcut.segmentation._pipeline", "_locality_priors"),
    ("    iterate", "graphcut.segmentation._pipeline", "iterate_binary"),
    ("      costs", "graphcut.segmentation._grabcut", "_costs"),
    ("      problem", "graphcut.segmentation._grabcut", "binary_problem"),
    ("    to host", "graphcut.segmentation._pipeline", "to_host"),
)


def _synchronise(device):
    if device == "cuda":
        import cupy
        cupy.cuda.Device().synchronize()


class Timers:
    def __init__(self, device):
        self.device = device
        self.current = collections.defaultdict(float)
        self.strokes = collections.defaultdict(list)

    def wrap(self, label, function):
        def timed(*args, **kwargs):
            _synchronise(self.device)
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                _synchronise(self.device)
                self.current[label] += time.perf_counter() - started
        return timed

    def end_stroke(self):
        for label, seconds in self.current.items():
            self.strokes[label].append(seconds)
        self.current.clear()


@contextlib.contextmanager
def patched(timers, stages, extra=()):
    undo = []
    for label, module_name, path in (*stages, *extra):
        owner = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        setattr(owner, name, timers.wrap(label, original))
        undo.append((owner, name, original))
    try:
        yield
    finally:
        for owner, name, original in reversed(undo):
            setattr(owner, name, original)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megapixels", type=float, default=4.0)
    parser.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--model", default="learned")
    parser.add_argument("--strokes", type=int, default=10)
    args = parser.parse_args(argv)
    import graphcut
    item = scaled_item(args.megapixels)
    truth = item.truth
    seeds = np.zeros(truth.shape, np.uint8)
    add_stroke(seeds, truth, interior_point(truth), 1)
    add_stroke(seeds, truth, interior_point(~truth), 2)
    session = graphcut.Segmenter(item.image, model=args.model, device=args.device)
    mask = np.asarray(session.update(seeds.copy()), dtype=bool)  # the first mask: not profiled
    timers = Timers(args.device)
    model_type = type(session._options["appearance"]).__module__
    model_class = type(session._options["appearance"]).__name__
    extra = [("      fit", model_type, f"{model_class}.fit"),
             ("      model costs", model_type, f"{model_class}.costs")]
    solver = session._solver
    solve = solver.solve
    solver.solve = timers.wrap("      cut", solve)
    with patched(timers, STAGES, extra):
        for _ in range(args.strokes):
            point, label = next_click(mask, truth)
            add_stroke(seeds, truth, point, label)
            mask = np.asarray(session.update(seeds.copy()), dtype=bool)
            timers.end_stroke()
    print(f"{truth.size / 1e6:.1f} MP, {session.backend}, model {args.model}, "
          f"{args.strokes} correcting strokes: median ms per stroke")
    print("| stage | median ms | max ms |")
    print("|---|---|---|")
    order = [label for label, *_ in STAGES] + [label for label, *_ in extra] + ["      cut"]
    for label in order:
        values = timers.strokes.get(label)
        if values:
            print(f"| {label.strip()} ({len(label) - len(label.lstrip())}) | "
                  f"{statistics.median(values) * 1e3:.2f} | {max(values) * 1e3:.2f} |")


if __name__ == "__main__":
    main()
