"""Several objects in a Segmenter with ``warm_objects = True`` (off by default: then every
update equals a fresh ``segment``): each update's alpha-expansion starts from the labels the
previous update ended with (its pinned pixels set first). Checked against alpha-expansion from
that start on the fresh problem, against PyMaxflow per move, and against fresh ``segment`` where
the start must be the cheapest labels."""

from __future__ import annotations

import numpy as np
import pytest

import graphcut
from graphcut.labeling import PairWeights, alpha_expansion, expansion_network, labeling_energy
from graphcut.segmentation import _grabcut
from graphcut.solver import min_cut
from synthetic import two_objects


def _three_objects(seed=5):
    image, truth, seeds = two_objects(seed=seed, noise=0.3)
    truth[40:52, 30:42] = 4
    image[40:52, 30:42] = (230, 200, 40)
    seeds[44:47, 34:37] = 4
    return image, truth, seeds


def _fresh_problem(image, seeds, monkeypatch):
    """The integer problem and pins of a fresh ``segment`` with these seeds (captured)."""
    captured = []
    original = _grabcut.label_problem

    def capture(costs, nlinks, pinned, **kwargs):
        problem = original(costs, nlinks, pinned, **kwargs)
        captured.append((problem, np.asarray(pinned)))
        return problem

    monkeypatch.setattr(_grabcut, "label_problem", capture)
    try:
        fresh = graphcut.segment(image, seeds, device="cpu")
    finally:
        monkeypatch.setattr(_grabcut, "label_problem", original)
    (problem, pinned), = captured
    return problem, pinned, fresh


def _indices(labels, objects):
    lookup = np.zeros(256, np.int32)
    lookup[np.array(objects)] = np.arange(1, len(objects) + 1)
    return lookup[labels]


def test_an_update_continues_from_the_previous_labels(monkeypatch):
    """Update k > 0 equals alpha-expansion of the fresh problem started from update k - 1's
    labels with the new seeds set; no single expansion move (solved by a fresh PyMaxflow
    cut) lowers its energy; its energy is at most the start's. The first update, and one
    whose objects differ from the previous update's, equal a fresh ``segment``."""
    image, truth, seeds = _three_objects()
    rng = np.random.default_rng(7)
    session = graphcut.Segmenter(image, device="cpu")
    session.warm_objects = True
    previous = None
    steps = [seeds.copy()]
    for _ in range(3):  # correcting-like strokes of random true labels
        step = steps[-1].copy()
        r, c = rng.integers(4, 56), rng.integers(4, 86)
        step[r - 3:r + 3, c - 3:c + 3] = np.where(truth[r - 3:r + 3, c - 3:c + 3] == 0, 2,
                                                  truth[r - 3:r + 3, c - 3:c + 3])
        steps.append(step)
    steps.append(np.where(steps[-1] == 4, 0, steps[-1]).astype(np.uint8))  # objects 1, 3
    for k, step in enumerate(steps):
        labels = session.update(step)
        problem, pinned, fresh = _fresh_problem(image, step, monkeypatch)
        objects = sorted(int(v) for v in np.unique(step) if v not in (0, 2))
        got = _indices(labels, objects)
        if previous is None or previous[0] != objects:
            np.testing.assert_array_equal(labels, fresh)
        else:
            start = np.where(pinned >= 0, pinned, previous[1]).astype(np.int32)
            oracle = alpha_expansion(problem.costs, problem.weights, device="cpu",
                                     initial_labels=start)
            np.testing.assert_array_equal(got, oracle.labels)
            expansion = session.last_result.stats["expansion"]
            start_energy = labeling_energy(problem.costs, problem.weights, start)
            assert expansion.initial_energy == start_energy  # it started there
            assert start_energy != labeling_energy(problem.costs, problem.weights,
                                                   np.argmin(problem.costs, axis=0))
            energy = labeling_energy(problem.costs, problem.weights, got)
            assert energy == expansion.energy <= start_energy
            for alpha in range(len(objects) + 1):
                network, constant = expansion_network(problem.costs, problem.weights, got,
                                                      alpha)
                assert constant + min_cut(network, device="cpu").flow >= energy
        assert (labels[step == 2] == 0).all()
        for value in objects:
            assert (labels[step == value] == value).all()
        previous = (objects, got)


def test_the_start_can_change_the_local_minimum_reached():
    """Why the start is part of the definition: on small random problems alpha-expansion
    from a random labelling sometimes ends in another local minimum than from the cheapest
    labels (here 3 of 40); every result is one (no move, solved by a fresh PyMaxflow cut,
    lowers its energy)."""
    differ = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        costs = rng.integers(0, 12, (3, 6, 7)).astype(np.int32)
        weights = PairWeights(rng.integers(0, 12, (6, 6)), rng.integers(0, 12, (5, 7)))
        start = rng.integers(0, 3, (6, 7)).astype(np.int32)
        fresh = alpha_expansion(costs, weights, device="cpu")
        warm = alpha_expansion(costs, weights, device="cpu", initial_labels=start)
        differ += not np.array_equal(fresh.labels, warm.labels)
        for result in (fresh, warm):
            assert result.converged
            for alpha in range(3):
                network, constant = expansion_network(costs, weights, result.labels, alpha)
                assert constant + min_cut(network, device="cpu").flow >= result.energy
    assert differ == 3


@pytest.mark.gpu
def test_gpu_strokes_of_several_objects_equal_the_cpu_ones():
    """The GPU Segmenter (its expansion and every move's cut on the device) gives the CPU
    Segmenter's labels, stroke after stroke, both starting from their last labels."""
    pytest.importorskip("cupy")
    image, truth, seeds = _three_objects(seed=9)
    cpu = graphcut.Segmenter(image, device="cpu")
    cpu.warm_objects = True
    gpu = graphcut.Segmenter(image, device="cuda")
    gpu.warm_objects = True
    rng = np.random.default_rng(5)
    for _ in range(4):
        np.testing.assert_array_equal(gpu.update(seeds), cpu.update(seeds))
        r, c = rng.integers(4, 56), rng.integers(4, 86)
        seeds[r - 3:r + 3, c - 3:c + 3] = np.where(truth[r - 3:r + 3, c - 3:c + 3] == 0, 2,
                                                   truth[r - 3:r + 3, c - 3:c + 3])


def test_kept_starts_are_per_lam_and_objects_and_dropped_by_one_object():
    """The start kept for the next update: per lam (at most two, the automatic lam's guard
    cuts at two), used only for the same objects; a one-object update drops them all."""
    from graphcut.segmentation._pipeline import keep_start, kept_start

    starts = {}
    first, second, third = (np.full((2, 3), k, np.int32) for k in range(3))
    keep_start(starts, 10, [1, 3], first)
    keep_start(starts, 20.0, [1, 3], second)
    assert kept_start(starts, 10.0, [1, 3]) is first
    assert kept_start(starts, 20, [1, 3]) is second
    assert kept_start(starts, 10, [1, 3, 4]) is None      # other objects: the cheapest labels
    assert kept_start(None, 10, [1, 3]) is None
    keep_start(starts, 10, [1, 3], third)                 # the newest of 10 replaces it
    keep_start(starts, 35, [1, 3], first)                 # a third lam drops the oldest (20)
    assert set(starts) == {10.0, 35.0} and kept_start(starts, 10, [1, 3]) is third

    image, truth, seeds = _three_objects()
    session = graphcut.Segmenter(image, device="cpu")
    session.warm_objects = True
    session.update(seeds)
    assert list(session._solver.starts) == [session.lam]
    session.update(np.where(seeds > 2, 0, seeds).astype(np.uint8))
    assert session._solver.starts == {}


def test_by_default_every_update_equals_a_fresh_segment():
    """``warm_objects`` is off by default: each several-object update starts from the
    cheapest labels, so it equals a fresh ``segment`` with the same seeds, stroke after
    stroke (the promise the app's and batch's results rest on)."""
    image, truth, seeds = _three_objects()
    rng = np.random.default_rng(11)
    session = graphcut.Segmenter(image, device="cpu")
    assert session.warm_objects is False
    step = seeds.copy()
    for _ in range(4):
        np.testing.assert_array_equal(session.update(step),
                                      graphcut.segment(image, step, device="cpu"))
        r, c = rng.integers(4, 56), rng.integers(4, 86)
        step = step.copy()
        step[r - 3:r + 3, c - 3:c + 3] = np.where(truth[r - 3:r + 3, c - 3:c + 3] == 0, 2,
                                                  truth[r - 3:r + 3, c - 3:c + 3])
