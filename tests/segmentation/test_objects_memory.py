"""Several objects hold less memory between updates: the per-label mixtures' cached costs are
dropped once the expansion is done (``PerLabelModel.release_costs``: a cache, so the answers
stay those of a fresh ``segment``), and on the GPU the one-object solver's push-relabel state
is released while the moves keep their own (``GridCuts.moves``), to be opened again by the next
one-object cut."""

from __future__ import annotations

import numpy as np
import pytest

import graphcut
from graphcut.segmentation import _solving
from graphcut.segmentation._solving import GridCuts


def _picture(rng):
    truth = np.zeros((40, 48), np.uint8)
    truth[5:18, 6:20], truth[22:35, 26:42] = 1, 3
    image = np.stack([truth * 60.0, 200 - truth * 40.0, 90 + truth * 10.0], -1)
    image = np.clip(image + rng.normal(0, 25, image.shape), 0, 255).astype(np.uint8)
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[:2], seeds[10:13, 10:14], seeds[27:30, 30:36] = 2, 1, 3
    return image, seeds


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_several_objects_keep_no_per_label_costs_and_answer_as_fresh(device):
    rng = np.random.default_rng(18)
    image, seeds = _picture(rng)
    session = graphcut.Segmenter(image, model="gmm", device=device)
    labels = session.update(seeds)
    fitted = session.model._fitted
    assert len(fitted) == 3 and all(m._evaluated is None for m in fitted)
    again = seeds.copy()
    again[30:33, 8:12] = 2
    np.testing.assert_array_equal(session.update(again),
                                  graphcut.segment(image, again, model="gmm", device=device))
    assert set(np.unique(labels)) <= {0, 1, 3}


class _Solver:
    device_name = "fake"

    def __init__(self, opened):
        self.closed = False
        opened.append(self)

    def close(self):
        self.closed = True


def test_the_gpu_moves_release_the_one_object_state(monkeypatch):
    """On the GPU (here a stand-in solver) ``moves()`` closes the incremental solver, as the
    CPU's does for its PyMaxflow graph; the next one-object cut opens a new one."""
    opened = []
    monkeypatch.setattr(_solving, "open_grid_solver",
                        lambda network, device: _Solver(opened))
    right, down = np.ones((3, 3), np.int32), np.ones((2, 4), np.int32)
    cuts = GridCuts((3, 4), (right, down), "cuda")
    first = cuts.open()
    assert cuts.moves() is None and first.closed and cuts._solver is None
    assert cuts.open() is not first and len(opened) == 2
