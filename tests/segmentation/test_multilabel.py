"""Several objects: seed labels 1, 3, 4, ... plus background 2 -> a label image, by
alpha-expansion with one colour model per label; checked against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import graphcut
from synthetic import two_objects
from graphcut.segmentation import quantize
from graphcut.segmentation import label_problem
from graphcut.io import check_seeds, object_labels
from graphcut.labeling import alpha_expansion, labeling_energy



@pytest.mark.parametrize("model", ["gmm", "histogram"])
def test_two_objects_are_labelled(model):
    image, truth, seeds = two_objects()
    labels, result = graphcut.segment(image, seeds, model=model, device="cpu",
                                      return_result=True)
    assert labels.dtype == np.uint8 and set(np.unique(labels)) == {0, 1, 3}
    assert (labels == truth).mean() > 0.98
    assert (labels[seeds == 1] == 1).all() and (labels[seeds == 3] == 3).all()
    assert (labels[seeds == 2] == 0).all()
    energies = result.stats["energies"]
    assert all(b <= a for a, b in zip(energies, energies[1:]))
    np.testing.assert_array_equal(result.source_side, labels != 0)


def test_one_object_labelled_3_gives_a_label_image():
    image, truth, seeds = two_objects()
    seeds[seeds == 1] = 0
    labels = graphcut.segment(image, seeds, model="gmm", device="cpu")
    assert labels.dtype == np.uint8 and set(np.unique(labels)) == {0, 3}
    assert ((labels == 3) == (truth == 3)).mean() > 0.98


def test_box_applies_to_every_object():
    image, truth, seeds = two_objects()
    box = (10, 5, 50, 70)
    labels = graphcut.segment(image, seeds, box=box, model="gmm", device="cpu")
    assert (labels[:10] == 0).all() and (labels[:, 70:] == 0).all()
    assert (labels[28:32, 65:69] == 3).all()


def test_clean_up_per_object():
    image, truth, seeds = two_objects()
    image[50:54, 5:9] = image[30, 22]   # an island of object 1's colour
    image[30:33, 70:73] = image[5, 5]   # a background-coloured hole in object 3
    labels = graphcut.segment(image, seeds, model="gmm", lam=5, device="cpu")
    cleaned = graphcut.segment(image, seeds, model="gmm", lam=5, keep="connected",
                               fill_holes=20, device="cpu")
    assert (labels[50:54, 5:9] == 1).any() and not (cleaned[50:54, 5:9] == 1).any()
    assert (labels[30:33, 70:73] == 0).any() and (cleaned[30:33, 70:73] == 3).all()


def all_energies(costs, weights):
    """Every labelling of the (L, H, W) problem, (L**(H*W), H, W), and its exact energy
    written out from the definition (vectorised brute force)."""
    num_labels, h, w = costs.shape
    labels = np.array(list(itertools.product(range(num_labels), repeat=h * w)))
    labels = labels.reshape(-1, h, w)
    rows, cols = np.mgrid[:h, :w]
    energy = costs[labels, rows, cols].astype(np.int64).sum(axis=(1, 2))
    horizontal, vertical = (np.asarray(x, np.int64) for x in weights)
    energy += (horizontal * (labels[:, :, 1:] != labels[:, :, :-1])).sum(axis=(1, 2))
    energy += (vertical * (labels[:, 1:, :] != labels[:, :-1, :])).sum(axis=(1, 2))
    return labels, energy


def test_expansion_on_tiny_images_against_brute_force():
    rng = np.random.default_rng(11)
    h, w = 3, 3
    for trial in range(12):
        num_labels = 3
        float_costs = rng.normal(0, 1.5, (num_labels, h, w))
        right = quantize(rng.random((h, w - 1)) * 1.5, what="right")
        down = quantize(rng.random((h - 1, w)) * 1.5, what="down")
        pinned = np.where(rng.random((h, w)) < 0.2, rng.integers(0, num_labels, (h, w)), -1)
        problem = label_problem(float_costs, (right, down), pinned, scale=1000.0)
        result = alpha_expansion(problem.costs, problem.weights, device="cpu")
        labels = result.labels
        # hard constraints hold
        assert ((labels == pinned) | (pinned < 0)).all()
        # the pinning costs make every optimum respect the pins: the brute-force minimum over
        # all labellings equals the one over the labellings that respect them
        every, energies = all_energies(problem.costs, problem.weights)
        respects = ((every == pinned) | (pinned < 0)).all(axis=(1, 2))
        best = int(energies[respects].min())
        assert best == int(energies.min())
        # Potts alpha-expansion: within a factor 2 of the optimum, and a local minimum
        energy = result.energy
        base = int(problem.costs.min(axis=0).sum())
        assert energy - base <= 2 * (best - base), trial
        assert labeling_energy(problem.costs, problem.weights, labels) == energy
        for alpha in range(num_labels):
            # every labelling reachable by one expansion move of alpha from the result
            reachable = ((every == labels) | (every == alpha)).all(axis=(1, 2))
            assert energies[reachable].min() == energy


def test_two_labels_are_solved_exactly():
    """One object: a single minimum cut, equal to the brute-force optimum of its energy."""
    rng = np.random.default_rng(2)
    image = (rng.random((3, 4, 3)) * 255).astype(np.uint8)
    seeds = np.zeros((3, 4), np.uint8)
    seeds[0, 0] = 1
    seeds[2, 3] = 2
    for lam in (0.5, 2.0, 8.0):
        mask, result = graphcut.segment(image, seeds, model="gmm", lam=lam, iterations=0,
                                        locality=0, far_cost=0, texture=0, device="cpu",
                                        return_result=True)
        from graphcut._arrays import image_as_float
        from graphcut.segmentation import nlink_weights
        from graphcut.models import GMMModel
        from graphcut.segmentation import binary_problem
        values = image_as_float(image)
        share = 0.1 * 12
        weights = np.where(seeds > 0, max(1.0, share), 1.0)
        models = [GMMModel().fit(values, np.where(seeds == label, weights, 0.0))
                  for label in (1, 2)]
        right, down = (quantize(lam * x, what="n") for x in nlink_weights(image))
        problem = binary_problem(models[0].costs(values), models[1].costs(values),
                                 (right, down), seeds, scale=1000.0, weights=weights)
        best = min(problem.energy(np.array(bits).reshape(3, 4))
                   for bits in itertools.product([False, True], repeat=12)
                   if bits[0] and not bits[11])
        assert result.stats["energies"][0] == pytest.approx(best, abs=1e-9)
        assert problem.energy(mask) == pytest.approx(best, abs=1e-9)


def test_seed_labels_convention():
    seeds = np.array([[0, 1, 2], [3, 4, 254]], np.uint8)
    assert check_seeds(seeds, multi=True) is not None
    assert object_labels(seeds) == [1, 3, 4, 254]
    with pytest.raises(ValueError, match="unknown label values 3, 4, 254"):
        check_seeds(seeds)
    with pytest.raises(ValueError, match="255 looks like a 0/255 mask"):
        check_seeds(np.array([[0, 255, 2]], np.uint8), multi=True)
    with pytest.raises(ValueError, match="no background seed"):
        check_seeds(np.array([[0, 3, 4]], np.uint8), multi=True)


@pytest.mark.gpu
def test_cpu_and_gpu_give_the_same_labels():
    image, truth, seeds = two_objects(seed=3, noise=0.1)
    cpu = graphcut.segment(image, seeds, model="gmm", device="cpu")
    gpu = graphcut.segment(image, seeds, model="gmm", device="cuda")
    np.testing.assert_array_equal(cpu, gpu)


def test_reused_move_graph_gives_the_fresh_graphs_flows_and_cuts():
    """The CPU expansion solves every move on one emptied-and-refilled PyMaxflow graph: on
    random move networks (several of one shape, then another shape) its flows and source sides
    equal a fresh ``min_cut``'s, and a whole expansion run makes the same moves."""
    from graphcut.labeling import PairWeights, expansion_network
    from graphcut.labeling._host_cuts import HostMoveCuts
    from graphcut.solver import min_cut

    rng = np.random.default_rng(31)
    cuts = HostMoveCuts()
    for shape in [(17, 23)] * 4 + [(9, 5)] * 2:
        costs = rng.integers(0, 50, (3, *shape)).astype(np.int32)
        weights = PairWeights(rng.integers(0, 30, (shape[0], shape[1] - 1)),
                              rng.integers(0, 30, (shape[0] - 1, shape[1])))
        labels = rng.integers(0, 3, shape).astype(np.int32)
        network, _ = expansion_network(costs, weights, labels, int(rng.integers(0, 3)))
        reused, fresh = cuts(network), min_cut(network, device="cpu")
        assert reused.flow == fresh.flow
        np.testing.assert_array_equal(reused.source_side, fresh.source_side)
    # brute force on a tiny move: the flow is the cheapest cut
    costs = rng.integers(0, 20, (2, 2, 3)).astype(np.int32)
    weights = PairWeights(rng.integers(0, 9, (2, 2)), rng.integers(0, 9, (1, 3)))
    labels = np.zeros((2, 3), np.int32)
    network, constant = expansion_network(costs, weights, labels, 1)
    best = min(labeling_energy(costs, weights, np.array(bits).reshape(2, 3))
               for bits in itertools.product([0, 1], repeat=6))
    assert constant + cuts(network).flow == best


@pytest.mark.parametrize("model", ["histogram", "gmm"])
def test_strokes_of_several_objects_equal_fresh_segments_with_one_graph_held(model):
    """A Segmenter going from two objects to three, back to one and to two again: every
    update equals a fresh ``segment`` with the same seeds (labels and flow); while several
    objects are segmented only the moves' PyMaxflow graph is held (kept from stroke to
    stroke), while one object is, only the incremental solver's."""
    image, truth, seeds = two_objects(seed=5, noise=0.12)
    truth[40:52, 30:42] = 4
    image[40:52, 30:42] = (230, 200, 40)
    rng = np.random.default_rng(3)
    session = graphcut.Segmenter(image, model=model, device="cpu")
    session.prepare()
    steps = [seeds.copy()]
    with_four = seeds.copy()
    with_four[44:47, 34:37] = 4
    steps.append(with_four)
    stroked = with_four.copy()
    r, c = rng.integers(5, 55), rng.integers(5, 85)
    stroked[r - 2:r + 2, c - 2:c + 2] = np.where(truth[r - 2:r + 2, c - 2:c + 2] == 0, 2,
                                                 truth[r - 2:r + 2, c - 2:c + 2])
    steps.append(stroked)
    steps.append(np.where(stroked > 2, 0, stroked).astype(np.uint8))  # object 1 only
    steps.append(seeds.copy())
    graphs = []
    for step in steps:
        labels = session.update(step)
        _, fresh = graphcut.segment(image, step, model=model, device="cpu",
                                    return_result=True)
        expected = graphcut.segment(image, step, model=model, device="cpu")
        np.testing.assert_array_equal(labels, expected)
        assert session.last_result.flow == fresh.flow
        cuts = session._solver
        graphs.append((cuts._solver is not None, cuts._moves))
    several = [graphs[i] for i in (0, 1, 2, 4)]
    assert all(not incremental and moves is not None for incremental, moves in several)
    assert graphs[0][1] is graphs[1][1] is graphs[2][1]  # one cutter for the strokes
    assert graphs[3][0] and graphs[3][1] is None
