"""GrabCut-style segmentation: boxes, lassos, iterated re-estimation, clean-up, against
brute force and ground truth."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import graphcut
from graphcut.segmentation import quantize
from graphcut.segmentation import (binary_problem, box_mask, clean_labels, cut_capacity,
                                   fill_holes, keep_connected, lasso_mask)
from graphcut.solver import min_cut


def scene(h=60, w=80, seed=0, noise=0.06):
    """A textured two-colour object (ellipse) on a textured two-colour background."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:h, :w]
    truth = ((yy - h * 0.5) / (h * 0.3)) ** 2 + ((xx - w * 0.45) / (w * 0.25)) ** 2 < 1
    stripes = (xx // 6) % 2 == 0
    obj = np.where(stripes[..., None], [0.8, 0.3, 0.2], [0.9, 0.6, 0.1])
    bg = np.where(((yy // 7) % 2 == 0)[..., None], [0.2, 0.4, 0.8], [0.3, 0.7, 0.4])
    image = np.where(truth[..., None], obj, bg) + rng.normal(0, noise, (h, w, 3))
    return (np.clip(image, 0, 1) * 255).astype(np.uint8), truth


def iou(a, b):
    return float((a & b).sum() / (a | b).sum())


def bounding_box(truth, margin=3):
    rows, cols = np.nonzero(truth)
    h, w = truth.shape
    return (max(0, rows.min() - margin), max(0, cols.min() - margin),
            min(h, rows.max() + 1 + margin), min(w, cols.max() + 1 + margin))


@pytest.mark.parametrize("model", ["gmm", "histogram"])
def test_box_alone_finds_the_object(model):
    image, truth = scene()
    mask = graphcut.segment(image, box=bounding_box(truth), model=model, iterations=5,
                            device="cpu")
    assert mask.dtype == bool and iou(mask, truth) > 0.9


@pytest.mark.parametrize("model", ["gmm", "histogram"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_iterated_energy_never_increases(model, seed):
    image, truth = scene(seed=seed, noise=0.15)
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[28:32, 30:34] = 1
    for box in (bounding_box(truth, margin=8), None):
        if box is None:
            seeds[:2] = 2
        _, result = graphcut.segment(image, seeds, box=box, model=model, iterations=8, tol=0,
                                     device="cpu", return_result=True)
        energies = result.stats["energies"]
        assert len(energies) == result.stats["iterations"] + 1
        assert all(b <= a for a, b in zip(energies, energies[1:])), energies


def test_each_iteration_cuts_exactly_the_minimum_energy():
    """The reported energy is the energy of the returned mask, and no mask that meets the
    constraints has less (brute force over every mask of a 3x4 image)."""
    rng = np.random.default_rng(3)
    h, w = 3, 4
    for trial in range(20):
        cost_object = rng.normal(0, 2, (h, w))
        cost_background = rng.normal(0, 2, (h, w))
        right = quantize(rng.random((h, w - 1)) * 2, what="right")
        down = quantize(rng.random((h - 1, w)) * 2, what="down")
        constraints = rng.choice([0, 0, 0, 1, 2], size=(h, w)).astype(np.uint8)
        weights = rng.choice([1.0, 4.0], size=(h, w))
        problem = binary_problem(cost_object, cost_background, (right, down), constraints,
                                 scale=1000.0, weights=weights)
        cut = min_cut(problem.network, device="cpu")
        assert cut_capacity(problem.network, cut.source_side) == cut.flow
        best = np.inf
        for bits in itertools.product([False, True], repeat=h * w):
            mask = np.array(bits).reshape(h, w)
            if (mask[constraints == 2]).any() or (~mask[constraints == 1]).any():
                continue
            # the energy written out from its definition (floats, then compared)
            energy = (np.where(mask, cost_object, cost_background)
                      * np.where(constraints > 0, weights, 1.0)).sum()
            energy += sum(right[y, x] / 1000.0 for y in range(h) for x in range(w - 1)
                          if mask[y, x] != mask[y, x + 1])
            energy += sum(down[y, x] / 1000.0 for y in range(h - 1) for x in range(w)
                          if mask[y, x] != mask[y + 1, x])
            best = min(best, energy)
            assert problem.energy(mask) == pytest.approx(energy, abs=0.5 * h * w / 1000.0)
        assert problem.energy(cut.source_side) <= best + 0.5 * h * w / 1000.0, trial


@pytest.mark.parametrize("model", ["gmm", "histogram"])
def test_box_and_lasso_constraints_hold_exactly(model):
    image, truth = scene(seed=4, noise=0.2)
    rng = np.random.default_rng(0)
    for _ in range(6):
        r0, c0 = int(rng.integers(0, 25)), int(rng.integers(0, 35))
        box = (r0, c0, r0 + int(rng.integers(8, 35)), c0 + int(rng.integers(8, 45)))
        lasso = [(r0 - 3, c0 + 20), (r0 + 30, c0 - 5), (r0 + 40, c0 + 50)]
        inside = box_mask(truth.shape, box)
        for keep, holes in (("all", 0), ("connected", 50)):
            mask = graphcut.segment(image, box=box, model=model, keep=keep, fill_holes=holes,
                                    device="cpu")
            assert not (mask & ~inside).any()
            mask = graphcut.segment(image, lasso=lasso, model=model, keep=keep,
                                    fill_holes=holes, device="cpu")
            assert not (mask & ~lasso_mask(truth.shape, lasso)).any()


def test_seeds_inside_a_box_are_obeyed():
    image, truth = scene(seed=5)
    box = bounding_box(truth, margin=6)
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[25:35, 20:25] = 2   # a background stroke on the object
    seeds[40:42, 30:50] = 1
    mask = graphcut.segment(image, seeds, box=box, model="gmm", device="cpu")
    assert mask[seeds == 1].all() and not mask[seeds == 2].any()
    assert not (mask & ~box_mask(truth.shape, box)).any()


def test_box_helpers_check_their_input():
    assert box_mask((4, 5), (1, 2, 3, 5)).sum() == 6
    for bad in [(0, 0, 0, 3), (0, 0, 5, 3), (-1, 0, 2, 2), (0, 0, 2), (0.5, 0, 2, 2), "abcd"]:
        with pytest.raises(ValueError, match="box"):
            box_mask((4, 5), bad)
    with pytest.raises(ValueError, match="at least 3"):
        lasso_mask((4, 5), [(0, 0), (3, 3)])
    with pytest.raises(ValueError, match="no pixel"):
        lasso_mask((4, 5), [(10, 10), (10, 12), (12, 12)])
    image, truth = scene()
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[0, 0] = 1
    with pytest.raises(ValueError, match="outside the box"):
        graphcut.segment(image, seeds, box=(10, 10, 50, 60), device="cpu")
    with pytest.raises(ValueError, match="whole image"):
        graphcut.segment(image, box=(0, 0, 60, 80), device="cpu")
    with pytest.raises(ValueError, match="nothing marks the object"):
        graphcut.segment(image, None, device="cpu")
    with pytest.raises(ValueError, match="no foreground seed"):
        graphcut.segment(image, np.full(truth.shape, 2, np.uint8), device="cpu")


def test_keep_connected_and_fill_holes():
    mask = np.zeros((12, 12), bool)
    mask[1:6, 1:6] = True        # part with a seed, and a 1-pixel hole
    mask[3, 3] = False
    mask[8:11, 8:11] = True      # island
    seeds = np.zeros((12, 12), np.uint8)
    seeds[2, 2] = 1
    kept = keep_connected(mask, seeds == 1)
    assert kept[1:6, 1:6].sum() == 24 and not kept[8:11, 8:11].any()
    assert keep_connected(mask, np.zeros_like(mask))[1:6, 1:6].sum() == 24  # the largest
    assert fill_holes(kept, 2)[3, 3] and not fill_holes(kept, 1)[3, 3]
    protected = np.zeros_like(mask)
    protected[3, 3] = True
    assert not fill_holes(kept, 5, protected=protected)[3, 3]
    # a background region touching the border is never a hole
    border = np.ones((5, 5), bool)
    border[0, 2] = False
    assert not fill_holes(border, 10)[0, 2]
    labels = clean_labels(np.where(mask, 3, 0), [3], np.where(seeds == 1, 3, 0),
                          keep="connected", fill_holes_area=2)
    assert labels[3, 3] == 3 and (labels[8:11, 8:11] == 0).all()


def test_clean_up_through_segment_removes_islands():
    image, truth = scene(seed=6)
    image[5:9, 70:74] = image[30, 35]  # a small patch of the object's colour far away
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[28:32, 30:34] = 1
    seeds[:2] = 2
    plain = graphcut.segment(image, seeds, model="gmm", device="cpu")
    clean = graphcut.segment(image, seeds, model="gmm", keep="connected", device="cpu")
    assert plain[5:9, 70:74].any() and not clean[5:9, 70:74].any()
    assert iou(clean, truth) >= iou(plain, truth)


def test_histogram_model_is_todays_energy():
    image, truth = scene()
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[28:32, 30:34] = 1
    seeds[:2] = 2
    mask, result = graphcut.segment(image, seeds, model="histogram", device="cpu",
                                    return_result=True)
    network = graphcut.build_network(image, seeds)
    assert min_cut(network, device="cpu").flow == result.flow
    assert result.stats["iterations"] == 0 and result.stats["model"] == "histogram"


def test_options_are_checked():
    image, truth = scene()
    box = bounding_box(truth)
    for options, match in [({"model": "svm"}, "unknown colour model"),
                           ({"iterations": -1}, "iterations"), ({"keep": "largest"}, "keep"),
                           ({"fill_holes": -2}, "fill_holes"), ({"lam": -1}, "lam"),
                           ({"model": "gmm", "bins": 8}, "bins"),
                           ({"components": 3}, "components"), ({"seed_share": 2}, "seed_share"),
                           ({"far_cost": -1}, "far_cost"),
                           ({"far_cost": float("nan")}, "far_cost")]:
        with pytest.raises(ValueError, match=match):
            graphcut.segment(image, box=box, device="cpu", **options)


@pytest.mark.gpu
@pytest.mark.parametrize("model", ["gmm", "histogram"])
def test_cpu_and_gpu_give_the_same_masks(model):
    image, truth = scene(h=90, w=120, seed=7, noise=0.1)
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[40:44, 50:54] = 1
    seeds[:3] = 2
    for box in (bounding_box(truth, margin=5), None):
        cpu, cpu_result = graphcut.segment(image, seeds, box=box, model=model, iterations=5,
                                           device="cpu", return_result=True)
        gpu, gpu_result = graphcut.segment(image, seeds, box=box, model=model, iterations=5,
                                           device="cuda", return_result=True)
        assert gpu_result.backend == "cuda"
        np.testing.assert_array_equal(cpu, gpu)
        assert cpu_result.flow == gpu_result.flow


@pytest.mark.parametrize("model", ["gmm", "histogram"])
def test_segmenter_answers_what_segment_does(model):
    """Segmenter with a colour model, iterations, a box and clean-up: each update equals a
    fresh graphcut.segment (its cuts are incremental re-solves)."""
    image, truth = scene(seed=8, noise=0.12)
    box = bounding_box(truth, margin=6)
    options = dict(model=model, iterations=4, keep="connected", fill_holes=20)
    session = graphcut.Segmenter(image, device="cpu", **options)
    seeds = np.zeros(truth.shape, np.uint8)
    for step, (region, label) in enumerate([(None, 0), ((slice(28, 32), slice(30, 34)), 1),
                                            ((slice(5, 9), slice(10, 14)), 2)]):
        if region is not None:
            seeds[region] = label
        mask = session.update(seeds, box=box)
        fresh, result = graphcut.segment(image, seeds, box=box, device="cpu",
                                         return_result=True, **options)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.stats["energies"] == pytest.approx(
            result.stats["energies"], abs=1e-6)


def test_strokes_act_locally():
    """On an image without any colour difference, the locality bonus decides: pixels near
    the object stroke are object, pixels near the background stroke are background."""
    image = np.full((60, 90), 120, np.uint8)   # one grey: the colour models cannot decide
    seeds = np.zeros((60, 90), np.uint8)
    seeds[28:32, 10:14] = 1
    seeds[28:32, 76:80] = 2
    mask = graphcut.segment(image, seeds, model="gmm", lam=0.5, iterations=0, device="cpu")
    assert mask[26:34, 7:17].all() and not mask[26:34, 73:83].any()
    without = graphcut.segment(image, seeds, model="gmm", lam=0.5, iterations=0, locality=0,
                               far_cost=0, device="cpu")
    assert without[26:34, 73:83].sum() == 80 - 16  # no locality: ties go to the object
    from graphcut.segmentation._locality import LOCALITY_REACH, _locality_priors
    priors = _locality_priors(seeds, [1, 2], 2.0, np)
    assert priors[0][30, 12] == -2.0 and priors[1][30, 78] == -2.0
    rho = LOCALITY_REACH * np.sqrt(seeds.size)
    assert priors[0][30, 13 + int(np.ceil(4 * rho))] >= -2.0 * np.exp(-8)  # faded 4 rho away
    assert _locality_priors(seeds, [1, 2], 0.0, np) is None


def test_far_cost_keeps_regions_far_from_the_object_strokes_background():
    """On an image without any colour difference, ties go to the object everywhere but at
    the background stroke; with far_cost, pixels far from the object stroke are background
    and those near it object, and the added costs are the documented ones."""
    image = np.full((60, 90), 120, np.uint8)
    seeds = np.zeros((60, 90), np.uint8)
    seeds[28:32, 10:14] = 1
    seeds[0:2, 88:90] = 2
    options = dict(model="gmm", lam=0.5, iterations=0, locality=0, device="cpu")
    without = graphcut.segment(image, seeds, far_cost=0, **options)
    assert without.sum() == without.size - 4
    mask = graphcut.segment(image, seeds, far_cost=5, **options)
    assert mask[28:32, 10:14].all() and not mask[:, 60:].any()
    from graphcut.segmentation._locality import FAR_REACH, _locality_priors
    priors = _locality_priors(seeds, [1, 2], 0.0, np, far_cost=5.0, objects=[1])
    assert priors[1] is None and priors[0][30, 12] == 0.0
    reach = FAR_REACH * np.sqrt(seeds.size)
    d = 89 - 13                                    # (30, 89) is 76 columns from (30, 13)
    assert priors[0][30, 89] == pytest.approx(5.0 * (1 - np.exp(-d * d / (2 * reach ** 2))))
    assert (np.diff(priors[0][30, 13:]) > 0).all()  # rises with the distance
    both = _locality_priors(seeds, [1, 2], 2.0, np, far_cost=5.0, objects=[1])
    alone = _locality_priors(seeds, [1, 2], 2.0, np)
    np.testing.assert_allclose(both[0], alone[0] + priors[0])
    np.testing.assert_array_equal(both[1], alone[1])


def test_far_cost_is_ignored_with_a_box():
    """With a box the box localises the object: far_cost changes nothing."""
    image, truth = scene(seed=3, noise=0.12)
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[28:32, 30:34] = 1
    box = bounding_box(truth, margin=6)
    results = [graphcut.segment(image, seeds, box=box, model="gmm", far_cost=cost,
                                device="cpu", return_result=True) for cost in (0, 5)]
    np.testing.assert_array_equal(results[0][0], results[1][0])
    assert results[0][1].stats["energies"] == results[1][1].stats["energies"]


def test_far_cost_helps_against_a_far_region_of_the_object_colour():
    """Noisy, similar colours and a far patch of the object's colour: without far_cost the
    GMM makes everything of that colour object, with its default far_cost the far patch
    stays background."""
    h, w = 60, 120
    rng = np.random.default_rng(0)
    truth = np.zeros((h, w), bool)
    truth[20:40, 10:30] = True
    far = np.zeros((h, w), bool)
    far[20:40, 95:115] = True
    base = np.where((truth | far)[..., None], [0.6, 0.4, 0.4], [0.4, 0.4, 0.6])
    image = (np.clip(base + rng.normal(0, 0.1, (h, w, 3)), 0, 1) * 255).astype(np.uint8)
    seeds = np.zeros((h, w), np.uint8)
    seeds[28:32, 18:22] = 1
    seeds[5:9, 55:59] = 2
    options = dict(model="gmm", iterations=3, device="cpu")
    assert graphcut.segment(image, seeds, far_cost=0, **options)[far].mean() > 0.9
    mask = graphcut.segment(image, seeds, **options)
    assert not mask[far].any() and iou(mask, truth) > 0.9


def test_the_clean_ups_central_part_is_the_middle_half_of_a_box():
    from graphcut.segmentation._cleanup import central_part
    box = box_mask((40, 60), (8, 10, 32, 50))          # 24 rows x 40 columns
    core = central_part(box)
    rows, cols = np.nonzero(core)
    assert (rows.min(), rows.max(), cols.min(), cols.max()) == (14, 25, 20, 39)


def test_the_closed_form_core_of_a_box_is_the_distance_transform_core():
    """The learned model's box core without a distance transform (_regions.box_core) equals
    the core found by SciPy's exact Euclidean distance transform of the box (the image border
    counting as outline), on random boxes, images and fractions."""
    from scipy import ndimage

    from graphcut.segmentation._regions import region_core
    rng = np.random.default_rng(11)
    for _ in range(400):
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        r0, c0 = int(rng.integers(0, h)), int(rng.integers(0, w))
        box = (r0, c0, int(rng.integers(r0 + 1, h + 1)), int(rng.integers(c0 + 1, w + 1)))
        fraction = float(rng.choice([0.0, 0.3, 0.5, 0.7, 1.0, rng.random()]))
        region = box_mask((h, w), box)
        distance = ndimage.distance_transform_edt(np.pad(region, 1))[1:-1, 1:-1]
        expected = (distance >= fraction * distance.max()) & region
        np.testing.assert_array_equal(region_core(region, fraction, box=box), expected)
        np.testing.assert_array_equal(region_core(region, fraction), expected)


@pytest.mark.gpu
def test_gpu_segmenter_with_a_box_matches_the_cpu():
    """The GPU Segmenter's pipeline (incremental GPU re-solves in every iteration) gives the
    CPU's masks, update after update."""
    image, truth = scene(h=90, w=120, seed=10, noise=0.1)
    box = bounding_box(truth, margin=6)
    session = graphcut.Segmenter(image, device="cuda", model="gmm", keep="connected")
    seeds = np.zeros(truth.shape, np.uint8)
    for region, label in [(None, 0), ((slice(44, 48), slice(52, 56)), 1),
                          ((slice(8, 12), slice(20, 24)), 2)]:
        if region is not None:
            seeds[region] = label
        mask = session.update(seeds, box=box)
        expected = graphcut.segment(image, seeds, box=box, model="gmm", keep="connected",
                                    device="cpu")
        np.testing.assert_array_equal(mask, expected)
