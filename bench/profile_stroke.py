"""Where a correcting stroke's time goes, through graphcut.Segmenter: each stage of the
pipeline wrapped with a timer that synchronises the GPU before and after it (so a stage's
time includes the kernels it queued), medians over the strokes. Stages nest (the pipeline
includes the fit, the costs, the problem and the cut), so the rows do not add up; "other" is
the update's time outside the stages listed directly under it.

    python bench/profile_stroke.py --megapixels 4 --device cuda --model learned --strokes 10
    python bench/profile_stroke.py --megapixels 1 --device cpu --model histogram --strokes 3
    python bench/profile_stroke.py --app --size 2048x2048 --device cuda --model auto --strokes 8

``--app``: the app's own solver (``gui/solve.py``'s ``Solver``, in this process: no solver
process, no pipes) on the astronaut sample scaled to ``--size``, with the app's clean-up and
bench_interactive.py's correcting strokes, each sent as the app sends it (the changed
rectangle of the seeds); the stages then include the app's layers around ``Segmenter``
(the job, the clean-up, the mask's difference to the last answer).

The synchronisation costs a few microseconds per stage, so the update's total here is a
little above bench_learned_latency.py's. Each stage also gets this process's CPU seconds
(``time.process_time``, all threads): on a shared machine the wall time waits for other
jobs, the CPU time much less; the load average at the end is printed with the table.
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

from bench_quality import (add_stroke, apply_patch, interior_point, next_click,  # noqa: E402
                           truth_box)
from quality_data import scaled_item  # noqa: E402

# (label, module, attribute path): patched where the caller looks the name up
STAGES = (
    ("update", "graphcut.segmentation._segmenter", "Segmenter.update"),
    ("  pipeline", "graphcut.segmentation._segmenter", "segment_values"),
    ("    check previous", "graphcut.segmentation._pipeline", "check_previous"),
    ("    check seeds", "graphcut.segmentation._pipeline", "checked_objects"),
    ("    seed weights", "graphcut.segmentation._pipeline", "seed_weights"),
    ("    locality priors", "graphcut.segmentation._pipeline", "_locality_priors"),
    ("    iterate", "graphcut.segmentation._pipeline", "iterate_binary"),
    ("      costs", "graphcut.segmentation._grabcut", "_costs"),
    ("      problem", "graphcut.segmentation._grabcut", "binary_problem"),
    ("    to host", "graphcut.segmentation._pipeline", "to_host"),
)
# the live GMM's parts (model "auto" on colour images) and the pipeline's other steps
PIPELINE_STAGES = (
    ("    object labels", "graphcut.segmentation._pipeline", "object_labels"),
    ("    hold costs", "graphcut.segmentation._pipeline", "hold_costs"),
    ("    warm (box)", "graphcut.segmentation._pipeline", "warm_binary"),
    ("    coarse loop", "graphcut.segmentation._warm", "coarse_grabcut"),
    ("    refit and cut", "graphcut.segmentation._warm", "refit_and_cut"),
    ("      blocks sample", "graphcut.segmentation._warm", "blocks_sample"),
    ("      coarse iterations", "graphcut.segmentation._coarse", "iterate_binary"),
    ("      box iterations", "graphcut.segmentation._warm", "iterate_binary"),
    ("        energy check", "graphcut.segmentation._problems", "BinaryProblem.energy"),
    ("        GMM evaluate", "graphcut.models._gmm", "GMMModel._evaluate"),
    ("        GMM moments", "graphcut.models._gmm", "_moments"),
    ("        GMM split", "graphcut.models._gmm", "principal_axis_split"),
    ("  result", "graphcut.segmentation._segmenter", "result_of"),
)
# the app's layers around Segmenter.update (--app)
APP_STAGES = (
    ("job", "graphcut.gui.solve", "Solver.run"),
    ("  segment", "graphcut.gui.solve", "Solver._segment"),
    ("  clean up", "graphcut.gui.solve", "clean_up"),
    ("  on device", "graphcut.gui.solve", "_on_device_of"),
    ("  mask update", "graphcut.gui.sharing", "MaskUpdate.between"),
    ("  coverage", "graphcut.gui.solve", "mask_fraction"),
)


def _synchronise(device):
    if device == "cuda":
        import cupy
        cupy.cuda.Device().synchronize()


class Timers:
    """Wall seconds and this process's CPU seconds (``time.process_time``: all its threads,
    which a busy shared machine inflates less than the wall time) per stage and stroke."""

    def __init__(self, device):
        self.device = device
        self.current = collections.defaultdict(float)
        self.current_cpu = collections.defaultdict(float)
        self.strokes = collections.defaultdict(list)
        self.strokes_cpu = collections.defaultdict(list)

    def wrap(self, label, function):
        def timed(*args, **kwargs):
            _synchronise(self.device)
            started, cpu = time.perf_counter(), time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                _synchronise(self.device)
                self.current[label] += time.perf_counter() - started
                self.current_cpu[label] += time.process_time() - cpu
        return timed

    def end_stroke(self):
        for label, seconds in self.current.items():
            self.strokes[label].append(seconds)
            self.strokes_cpu[label].append(self.current_cpu[label])
        self.current.clear()
        self.current_cpu.clear()


@contextlib.contextmanager
def patched(timers, stages, extra=()):
    undo = []
    for label, module_name, path in (*stages, *extra):
        owner = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for parent in parents:
            owner = getattr(owner, parent)
        # a class's own attribute, or one it inherits (GMM.fit is PerLabelModel's)
        own = not isinstance(owner, type) or name in owner.__dict__
        original = owner.__dict__[name] if isinstance(owner, type) and own else \
            getattr(owner, name)
        if isinstance(original, classmethod):
            wrapped = classmethod(timers.wrap(label, original.__func__))
        else:
            wrapped = timers.wrap(label, original)
        setattr(owner, name, wrapped)
        undo.append((owner, name, original, own))
    try:
        yield
    finally:
        for owner, name, original, own in reversed(undo):
            if own:
                setattr(owner, name, original)
            else:
                delattr(owner, name)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megapixels", type=float, default=4.0)
    parser.add_argument("--device", default="cuda", choices=("cpu", "cuda"))
    parser.add_argument("--model", default="learned")
    parser.add_argument("--strokes", type=int, default=10)
    parser.add_argument("--box", action="store_true",
                        help="Segmenter only: start from the object's box (bench_quality)")
    parser.add_argument("--new-boxes", action="store_true",
                        help="with --box: profile new boxes drawn on the prepared session "
                             "(moved by a few pixels, no seeds; bench_learned_latency's "
                             "'a new box') instead of strokes after the box")
    parser.add_argument("--app", action="store_true",
                        help="profile the app's solver (gui/solve.py) on the astronaut sample")
    parser.add_argument("--size", default="2048x2048", help="--app: ROWSxCOLS")
    parser.add_argument("--preview", action="store_true",
                        help="--app: the app's preview solver (the image reduced to at most "
                             "250 000 pixels, no clean-up) instead of the exact one")
    parser.add_argument("--warm", action="store_true",
                        help="the live GMM's warm strokes (each stroke's coarse loop from the "
                             "last one's: gui/solve.py WARM_STROKES)")
    parser.add_argument("--settled", type=float, default=None,
                        help="strokes alone: the coarse loop ends after an iteration that "
                             "changes at most this share of its pixels (COARSE_SETTLED; 0: it "
                             "runs all its iterations)")
    parser.add_argument("--full-fit", action="store_true",
                        help="the first fit reads every pixel, not only the seeds' "
                             "(segmentation._grabcut.COMPACT_FIT = 0)")
    parser.add_argument("--previous", action="store_true",
                        help="--app: each job carries the previous update shown (the solver's "
                             "last answer, by number, as the app sends it: the learned "
                             "model's hold from the 7th stroke on)")
    parser.add_argument("--fresh-cuts", action="store_true",
                        help="every full-size cut from scratch (graphcut.solver.min_cut), "
                             "not from the last cut's flow: how much the flow reuse saves")
    parser.add_argument("--patch", action="append", default=[], metavar="MODULE.NAME=VALUE",
                        help="set a module constant before the run, as bench_quality.py's "
                             "--patch (e.g. graphcut.segmentation._coarse.COARSE_PIXELS=16384); "
                             "repeatable")
    args = parser.parse_args(argv)
    for change in args.patch:
        apply_patch(change)
    _switches(args)
    timers = Timers(args.device)
    if args.app:
        title, stages = _profile_app(args, timers)
    else:
        title, stages = _profile_segmenter(args, timers)
    print(f"{title}, {args.strokes} correcting strokes: median ms per stroke")
    if COARSE_RUNS:
        print(f"coarse loop iterations, every call (first job included): {COARSE_RUNS}")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    print("| stage | median ms | max ms | median CPU ms |")
    print("|---|---|---|---|")
    for label in stages:
        values = timers.strokes.get(label)
        if values:
            print(f"| {label.strip()} ({len(label) - len(label.lstrip())}) | "
                  f"{statistics.median(values) * 1e3:.2f} | {max(values) * 1e3:.2f} | "
                  f"{statistics.median(timers.strokes_cpu[label]) * 1e3:.2f} |")


def _switches(args):
    """``--warm`` / ``--settled``: this session's speed-ups turned on, off or changed, for an
    A/B run in one process."""
    from graphcut.gui import solve
    from graphcut.segmentation import _coarse, _grabcut

    if args.warm:
        solve.WARM_STROKES = True
    if args.settled is not None:
        _coarse.COARSE_SETTLED = args.settled
    if args.full_fit:
        _grabcut.COMPACT_FIT = 0.0
    if args.fresh_cuts:
        _fresh_full_size_cuts()
    print(f"warm strokes {solve.WARM_STROKES}, coarse settled at {_coarse.COARSE_SETTLED}, "
          f"compact fit {_grabcut.COMPACT_FIT}")
    iterate = _coarse.iterate_binary

    def counted(*a, **k):  # the coarse loop's iterations per call, printed at the end
        run = iterate(*a, **k)
        COARSE_RUNS.append(run.iterations)
        return run
    _coarse.iterate_binary = counted


COARSE_RUNS = []


def _fresh_full_size_cuts():
    """GridCuts.solve of a grid larger than the coarse one: a fresh minimum cut."""
    import math

    from graphcut.segmentation import _coarse, _solving
    from graphcut.solver import GridNetwork, min_cut

    solve = _solving.GridCuts.solve

    def fresh(self, source, sink, **kwargs):
        if math.prod(self.shape) <= _coarse.COARSE_PIXELS:
            return solve(self, source, sink, **kwargs)
        network = GridNetwork(source, sink, forward=tuple(self._nlinks)[::-1])
        return min_cut(network, device=self.backend)
    _solving.GridCuts.solve = fresh


def _model_stages(model):
    """The fit, refit and costs of ``model``'s class (inherited ones included)."""
    owner, name = type(model).__module__, type(model).__name__
    return [(f"      model {what}", owner, f"{name}.{what}") for what in ("fit", "refit", "costs")
            if callable(getattr(model, what, None))]


CUT = ("      cut (every GridCuts solve)", "graphcut.segmentation._solving", "GridCuts.solve")


def _profile_segmenter(args, timers):
    import graphcut
    item = scaled_item(args.megapixels)
    truth = item.truth
    seeds = np.zeros(truth.shape, np.uint8)
    box = truth_box(truth) if args.box else None
    if box is None:
        add_stroke(seeds, truth, interior_point(truth), 1)
        add_stroke(seeds, truth, interior_point(~truth), 2)
    session = graphcut.Segmenter(item.image, model=args.model, device=args.device)
    mask = np.asarray(session.update(seeds.copy(), box=box), dtype=bool)  # not profiled
    extra = [*PIPELINE_STAGES, *_model_stages(session.model), CUT]
    with patched(timers, STAGES, extra):
        for index in range(args.strokes):
            if args.new_boxes:  # bench_learned_latency's moved boxes, no seeds
                shift = (-2, 2, -4)[index % 3] * (index // 3 + 1)
                session.update(None, box=tuple(max(0, v + shift) for v in box))
            else:
                point, label = next_click(mask, truth)
                add_stroke(seeds, truth, point, label)
                mask = np.asarray(session.update(seeds.copy(), box=box), dtype=bool)
            timers.end_stroke()
    title = f"{truth.size / 1e6:.1f} MP, {session.backend}, model {args.model}" + \
        (", new boxes" if args.new_boxes else ", box" if box is not None else "")
    return title, [label for label, *_ in (*STAGES, *extra)]


def _profile_app(args, timers):
    """The app's Solver on the astronaut sample, correcting strokes, the app's clean-up."""
    import dataclasses

    from bench_interactive import paint, parse_size, scaled_inputs
    from stroke_scripts import script_for

    from graphcut.gui.options import APP_DEFAULTS
    from graphcut.gui.previous_update import Previous
    from graphcut.gui.solve import Job, Session, Solver, preview_factor
    from graphcut.gui.sharing import SeedDelta, from_slices
    from graphcut.gui.strokes import SeedCanvas

    image, bundled = scaled_inputs(parse_size(args.size))
    start, script = script_for("correcting", image, bundled, args.strokes + 1, args.device)
    canvas = SeedCanvas(start.shape)
    canvas.begin_edit()
    canvas.replace(start)
    canvas.end_edit()
    paint(canvas, script[0])
    solver = Solver()
    factor = preview_factor(image.shape[:2]) if args.preview else 1
    opened = solver.open(Session(1, image, None, args.device, preview_factor=factor))
    if opened.error:
        raise RuntimeError(opened.error)
    options = dataclasses.replace(APP_DEFAULTS, model=args.model)
    number = 1
    first = solver.run(Job(number, 1, None, SeedDelta(None, canvas.labels.copy()), options))
    if first.error:
        raise RuntimeError(first.details)
    # Segmenter's stages under the job's segment
    stages = [("    " + label, *where) for label, *where in STAGES]
    extra = [*APP_STAGES, *[("    " + label, *where) for label, *where in PIPELINE_STAGES],
             *[("    " + label, *where) for label, *where in
               (*_model_stages(solver._segmenter.model), CUT)]]
    with patched(timers, stages, extra):
        for stroke in script[1:args.strokes + 1]:
            region = paint(canvas, stroke)
            number += 1
            delta = SeedDelta(from_slices(region), canvas.labels[region].copy())
            previous = Previous(number - 1) if args.previous else None
            outcome = solver.run(Job(number, 1, None, delta, options, previous))
            if outcome.error:
                raise RuntimeError(outcome.details)
            timers.end_stroke()
    title = (f"app {'preview (factor %d)' % factor if factor > 1 else 'exact'} solver, "
             f"{image.shape[0]}x{image.shape[1]}, {solver._segmenter.backend}, "
             f"model {args.model}, clean-up {options.keep}/{options.fill_holes}"
             f"{', previous update sent' if args.previous else ''}")
    order = [label for label, *_ in (*APP_STAGES[:2], *stages, *extra[len(APP_STAGES):],
                                     *APP_STAGES[2:])]
    return title, order


if __name__ == "__main__":
    main()
