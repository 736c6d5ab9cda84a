"""Several objects with ``previous=(seeds, labels)``: the expansion starts from the previous
update's labels (``graphcut.segmentation._previous_start``). Checked against alpha-expansion
of a fresh ``segment``'s problem from that start (the oracle), against a fresh ``segment``
given the same ``previous`` (the incremental answer is the fresh one), per move against
PyMaxflow, and on the GPU against the CPU."""

from __future__ import annotations

import numpy as np
import pytest

import graphcut
from graphcut.labeling import alpha_expansion, expansion_network, labeling_energy
from graphcut.segmentation._previous_start import CHEAPEST, fill_cheapest, previous_start
from graphcut.solver import min_cut
from test_multilabel_warm import _fresh_problem, _indices, _three_objects


def _strokes(seeds, truth, count, seed=7):
    """``count`` correcting-like strokes of true labels, each a 6 x 6 square."""
    rng = np.random.default_rng(seed)
    steps = [seeds.copy()]
    for _ in range(count):
        step = steps[-1].copy()
        r, c = rng.integers(4, 56), rng.integers(4, 86)
        block = truth[r - 3:r + 3, c - 3:c + 3]
        step[r - 3:r + 3, c - 3:c + 3] = np.where(block == 0, 2, block)
        steps.append(step)
    return steps


def test_the_start_maps_labels_to_indices_and_marks_the_rest():
    labels = np.array([[0, 1, 3, 4, 2]], np.uint8)
    np.testing.assert_array_equal(previous_start(labels, [1, 3], np),
                                  [[0, 1, 2, CHEAPEST, 0]])
    np.testing.assert_array_equal(previous_start(labels.astype(bool), [1], np),
                                  [[0, 1, 1, 1, 1]])
    costs = np.array([[[3, 0, 0]], [[1, 5, 9]], [[2, 0, 9]]], np.int32)  # (L, H, W)
    np.testing.assert_array_equal(fill_cheapest(np.array([[-1, -1, 2]], np.int32), costs),
                                  [[1, 0, 2]])  # pixel 1: labels 0 and 2 tie, the first wins


def test_an_update_given_the_previous_labels_starts_from_them(monkeypatch):
    """Each update given the previous update's (seeds, labels) equals alpha-expansion of the
    fresh problem from those labels (the new seeds set first), is a local minimum (no move,
    cut by a fresh PyMaxflow graph, lowers its energy), and equals a fresh ``segment`` given
    the same ``previous``; its moves change far fewer pixels than those from the cheapest
    labels."""
    image, truth, seeds = _three_objects()
    session = graphcut.Segmenter(image, device="cpu")
    previous = None
    changed_warm = changed_cold = 0
    for k, step in enumerate(_strokes(seeds, truth, 3)):
        labels = session.update(step, previous=previous)
        problem, pinned, cold = _fresh_problem(image, step, monkeypatch)
        objects = [1, 3, 4]
        if previous is None:
            np.testing.assert_array_equal(labels, cold)  # no previous: the cheapest labels
        else:
            start = np.where(pinned >= 0, pinned, _indices(previous[1], objects))
            oracle = alpha_expansion(problem.costs, problem.weights, device="cpu",
                                     initial_labels=start.astype(np.int32))
            got = _indices(labels, objects)
            np.testing.assert_array_equal(got, oracle.labels)
            energy = labeling_energy(problem.costs, problem.weights, got)
            for alpha in range(len(objects) + 1):
                network, constant = expansion_network(problem.costs, problem.weights, got,
                                                      alpha)
                assert constant + min_cut(network, device="cpu").flow >= energy
            fresh = graphcut.segment(image, step, device="cpu", previous=previous)
            np.testing.assert_array_equal(labels, fresh)
            expansion = session.last_result.stats["expansion"]
            assert expansion.initial_energy == labeling_energy(problem.costs, problem.weights,
                                                               start.astype(np.int32))
            changed_warm += sum(move.changed for move in expansion.moves)
            cold_session = graphcut.Segmenter(image, device="cpu")
            cold_session.update(step)
            changed_cold += sum(move.changed for move in
                                cold_session.last_result.stats["expansion"].moves)
        assert (labels[step == 2] == 0).all()
        for value in objects:
            assert (labels[step == value] == value).all()
        previous = (step, labels)
    assert changed_warm < changed_cold / 4  # the moves change few pixels


def test_labels_of_objects_no_longer_seeded_start_at_their_cheapest(monkeypatch):
    """Object 4's seeds erased: its pixels in the previous labels start at their cheapest
    label, the rest from the previous labels."""
    image, truth, seeds = _three_objects()
    before = graphcut.segment(image, seeds, device="cpu")
    step = np.where(seeds == 4, 0, seeds).astype(np.uint8)
    labels = graphcut.segment(image, step, device="cpu", previous=(seeds, before))
    problem, pinned, _ = _fresh_problem(image, step, monkeypatch)
    start = previous_start(before, [1, 3], np)
    start = np.where(pinned >= 0, pinned, start)
    start = np.where(start == CHEAPEST, np.argmin(problem.costs, axis=0), start)
    oracle = alpha_expansion(problem.costs, problem.weights, device="cpu",
                             initial_labels=start.astype(np.int32))
    np.testing.assert_array_equal(_indices(labels, [1, 3]), oracle.labels)
    assert (before == 4).any() and not (labels == 4).any()


def test_a_previous_of_another_shape_is_refused():
    image, truth, seeds = _three_objects()
    with pytest.raises(ValueError, match="previous mask must have the image's shape"):
        graphcut.segment(image, seeds, device="cpu",
                         previous=(seeds, np.zeros((3, 3), np.uint8)))


@pytest.mark.gpu
def test_gpu_updates_given_the_previous_labels_equal_the_cpu_ones():
    """The GPU Segmenter given the previous labels (moves cut on the device) gives the CPU
    Segmenter's labels, stroke after stroke."""
    pytest.importorskip("cupy")
    image, truth, seeds = _three_objects(seed=9)
    cpu = graphcut.Segmenter(image, device="cpu")
    gpu = graphcut.Segmenter(image, device="cuda")
    previous = None
    for step in _strokes(seeds, truth, 4, seed=5):
        labels = cpu.update(step, previous=previous)
        np.testing.assert_array_equal(gpu.update(step, previous=previous), labels)
        previous = (step, labels)


def test_the_table_lookup_and_the_general_path_agree():
    rng = np.random.default_rng(3)
    labels = rng.choice(np.array([0, 1, 2, 3, 4, 7], np.uint8), size=(20, 30))
    for objects in ([1, 3], [3, 4, 7], [1]):
        table = previous_start(labels, objects, np)
        general = previous_start(labels.astype(np.int64), objects, np)
        assert table.dtype == general.dtype == np.int32
        np.testing.assert_array_equal(table, general)
        assert (table[labels == 7] == (objects.index(7) + 1 if 7 in objects else CHEAPEST)).all()
