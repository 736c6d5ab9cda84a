"""A model changed during a session (gui/solve.py): the solver makes a new segmenter and warms
it up before it solves, as when an image opens, so that the new model's first GPU stroke pays
no kernel compilation (the twelfth session measured a 4.2 s stroke after a switch to the
learned model); the answers stay those of a plain ``graphcut.segment`` with the new model.

The spy wraps the real ``warm_up``: on the CPU it returns at once (nothing to compile), on the
GPU it runs its throwaway updates, and the next job must still give the fresh answer."""

from __future__ import annotations

import numpy as np
import pytest

import graphcut
from graphcut.gui import solve as solve_module
from graphcut.gui.options import SegmentOptions
from graphcut.gui.sharing import SeedDelta
from graphcut.gui.solve import Job, Session, Solver
from test_app_hold import look_alike, stroke_states

DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


def answer(outcome, shape):
    mask = np.zeros(shape, bool)
    outcome.update.apply(mask)
    return mask


@pytest.mark.parametrize("device", DEVICES)
def test_a_model_change_warms_up_the_new_segmenter_before_it_solves(monkeypatch, device):
    if device == "cuda":
        pytest.importorskip("cupy")
    warmed = []  # (segmenter, seconds, whether it had solved before its warm-up)

    def spy(segmenter):
        solved_before = segmenter.last_result is not None
        warmed.append((segmenter, solve_module.warm_up.__wrapped__(segmenter), solved_before))
        return warmed[-1][1]

    spy.__wrapped__ = solve_module.warm_up
    monkeypatch.setattr(solve_module, "warm_up", spy)
    image, a, b, g = look_alike()
    seeds = stroke_states(g)[1]
    solver = Solver()
    assert solver.open(Session(1, image, None, device, model="histogram")).error is None
    first = solver.run(Job(1, 1, None, SeedDelta(None, seeds.copy()),
                           SegmentOptions(model="histogram")))
    assert first.error is None, first.details
    histogram_session = solver._segmenter
    learned = solver.run(Job(2, 1, None, SeedDelta(None, seeds.copy()),
                             SegmentOptions(model="learned")))
    assert learned.error is None, learned.details
    assert solver._segmenter is not histogram_session
    assert [session for session, _, _ in warmed] == [histogram_session, solver._segmenter]
    assert not any(solved_before for _, _, solved_before in warmed)  # before any real solve
    if device == "cuda":
        assert all(seconds > 0 for _, seconds, _ in warmed)  # throwaway updates were run
    else:
        assert all(seconds == 0.0 for _, seconds, _ in warmed)
    for outcome, model in ((first, "histogram"), (learned, "learned")):
        expected = graphcut.segment(image, seeds, model=model, device=device)
        np.testing.assert_array_equal(answer(outcome, image.shape) if outcome is first
                                      else _applied(first, outcome, image.shape), expected)


def _applied(first, later, shape):
    """The mask the app shows after ``first`` then ``later`` (updates are differences)."""
    mask = answer(first, shape)
    later.update.apply(mask)
    return mask
