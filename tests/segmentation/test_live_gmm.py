"""GMM(warm=True): GrabCut's iterations once per box (and on a coarse grid for strokes alone),
then one refit and one cut per stroke; every answer equals a fresh segment()'s."""

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, model_from_settings
from graphcut.segmentation._coarse import _coarse_nlinks, coarse_factor

WARM = GMM(core=0.4, warm=True)


def _scene(shape=(60, 80), seed=0):
    """A noisy orange rectangle on a noisy blue-grey background, with its box."""
    rng = np.random.default_rng(seed)
    h, w = shape
    image = np.clip(rng.normal([0.3, 0.35, 0.5], 0.06, (h, w, 3)), 0, 1)
    r0, c0, r1, c1 = h // 4, w // 4, 3 * h // 4, 3 * w // 4
    image[r0:r1, c0:c1] = np.clip(rng.normal([0.8, 0.5, 0.2], 0.08, (r1 - r0, c1 - c0, 3)),
                                  0, 1)
    truth = np.zeros((h, w), bool)
    truth[r0:r1, c0:c1] = True
    return (image * 255).astype(np.uint8), truth, (r0 - 5, c0 - 5, r1 + 5, c1 + 5)


def _strokes(truth, rng, count):
    """``count`` random 3 x 3 strokes labelled with the truth (object 1, background 2)."""
    h, w = truth.shape
    out = []
    for _ in range(count):
        r, c = int(rng.integers(1, h - 1)), int(rng.integers(1, w - 1))
        out.append((np.s_[r - 1:r + 2, c - 1:c + 2], 1 if truth[r, c] else 2))
    return out


def test_the_box_alone_is_the_iterating_gmms_answer():
    image, _, box = _scene()
    warm, warm_result = graphcut.segment(image, box=box, model=WARM, device="cpu",
                                         return_result=True)
    cold, cold_result = graphcut.segment(image, box=box, model=GMM(core=0.4), device="cpu",
                                         return_result=True)
    np.testing.assert_array_equal(warm, cold)
    assert warm_result.flow == cold_result.flow and warm_result.stats["iterations"] > 0


@pytest.mark.parametrize("with_box", [True, False])
def test_segmenter_strokes_equal_fresh_segments(with_box):
    """Each stroke is one refit and one cut (no iterations at full resolution), the seeds and
    the outside of the box are obeyed, and the mask and the flow equal a fresh segment()'s."""
    shape = (200, 400) if not with_box else (60, 80)  # strokes alone: a coarse grid (f = 2)
    image, truth, box = _scene(shape, seed=1)
    box = box if with_box else None
    rng = np.random.default_rng(2)
    seeds = np.zeros(truth.shape, np.uint8)
    if not with_box:
        seeds[shape[0] // 2, shape[1] // 2] = 1
        seeds[2, 2] = 2
    session = graphcut.Segmenter(image, model=WARM, device="cpu")
    for step, (where, label) in enumerate(_strokes(truth, rng, 4)):
        if box is not None and label == 1 and not truth[where].all():
            continue
        seeds[where] = label
        mask = session.update(seeds, box=box)
        fresh, result = graphcut.segment(image, seeds, box=box, model=WARM, device="cpu",
                                         return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow
        assert session.last_result.stats["iterations"] == 0
        assert mask[seeds == 1].all() and not mask[seeds == 2].any()
        if box is not None:
            assert not mask[:box[0]].any() and not mask[:, :box[1]].any()


def test_strokes_in_another_order_give_the_same_mask():
    image, truth, box = _scene(seed=3)
    strokes = [s for s in _strokes(truth, np.random.default_rng(4), 6) if s[1] == 2]
    masks = []
    for order in (strokes, strokes[::-1]):
        session = graphcut.Segmenter(image, model=WARM, device="cpu")
        seeds = np.zeros(truth.shape, np.uint8)
        session.update(seeds, box=box)
        for where, label in order:
            seeds[where] = label
            mask = session.update(seeds, box=box)
        masks.append(mask)
    np.testing.assert_array_equal(*masks)


def test_a_new_box_starts_over():
    image, truth, box = _scene(seed=5)
    session = graphcut.Segmenter(image, model=WARM, device="cpu")
    session.update(None, box=box)
    other = (box[0] + 2, box[1] + 2, box[2] - 1, box[3] - 1)
    np.testing.assert_array_equal(session.update(None, box=other),
                                  graphcut.segment(image, box=other, model=WARM, device="cpu"))


def test_coarse_nlinks_are_the_fine_links_across_block_sides_per_area():
    rng = np.random.default_rng(6)
    h, w, f = 9, 10, 3
    right = rng.integers(0, 1000, (h, w - 1)).astype(np.int32)
    down = rng.integers(0, 1000, (h - 1, w)).astype(np.int32)
    coarse_right, coarse_down = _coarse_nlinks((right, down), f, (h, w), np)
    assert coarse_right.shape == (3, 3) and coarse_down.shape == (2, 4)
    for r in range(3):  # blocks (r, c) | (r, c + 1): the right-links of fine column 3c + 2
        for c in range(3):
            expected = right[3 * r:3 * r + 3, min(3 * c + 2, w - 2)].sum() / 9
            assert coarse_right[r, c] == np.rint(expected)
    for r in range(2):
        for c in range(4):
            expected = down[3 * r + 2, 3 * c:3 * c + 3].sum() / 9
            assert coarse_down[r, c] == np.rint(expected)


def test_coarse_factor_bounds_the_grid():
    for shape in ((10, 10), (256, 256), (257, 256), (300, 400), (2000, 3000), (4000, 3000)):
        f = coarse_factor(shape)
        assert -(-shape[0] // f) * -(-shape[1] // f) <= 1 << 16
        assert f == 1 or -(-shape[0] // (f - 1)) * -(-shape[1] // (f - 1)) > 1 << 16


def test_warm_round_trips_and_is_checked():
    assert WARM.settings() == {"model": "gmm", "core": 0.4, "warm": True}
    assert model_from_settings(WARM.settings()) == WARM
    assert GMM().settings() == {"model": "gmm"}  # a file naming gmm reproduces what it did
    for bad in (1, "yes", 0.5):
        with pytest.raises(ValueError, match="warm must be true or false"):
            GMM(warm=bad)


@pytest.mark.gpu
@pytest.mark.parametrize("with_box", [True, False])
def test_the_gpu_gives_the_cpus_masks_and_flows(with_box):
    """Segmenter on the GPU (the box's kept start, the coarse grid's kept solver) against a
    fresh segment() on the CPU, stroke by stroke."""
    shape = (60, 80) if with_box else (200, 400)
    image, truth, box = _scene(shape, seed=7)
    box = box if with_box else None
    seeds = np.zeros(truth.shape, np.uint8)
    if not with_box:
        seeds[shape[0] // 2, shape[1] // 2] = 1
        seeds[2, 2] = 2
    session = graphcut.Segmenter(image, model=WARM, device="cuda")
    for step, (where, label) in enumerate(_strokes(truth, np.random.default_rng(8), 4)):
        if box is not None and label == 1 and not truth[where].all():
            continue
        seeds[where] = label
        mask = session.update(seeds, box=box)
        cpu, result = graphcut.segment(image, seeds, box=box, model=WARM, device="cpu",
                                       return_result=True)
        assert session.last_result.backend == "cuda"
        np.testing.assert_array_equal(mask, cpu, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow


@pytest.mark.gpu
@pytest.mark.parametrize("grey", [True, False])
def test_the_default_on_the_gpu_gives_the_cpus_mask(grey):
    image, truth, box = _scene(seed=9)
    image = image.mean(axis=-1).astype(np.uint8) if grey else image
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[28:32, 38:42] = 1
    seeds[:3] = 2
    for given in (dict(box=box), dict(seeds=seeds), dict(seeds=seeds, box=box)):
        gpu = graphcut.segment(image, given.get("seeds"), box=given.get("box"), device="cuda")
        cpu = graphcut.segment(image, given.get("seeds"), box=given.get("box"), device="cpu")
        np.testing.assert_array_equal(gpu, cpu)


def test_block_locality_costs_are_near_the_exact_ones():
    """A live model's locality costs come from distances between blocks: within the bound
    that a distance error of 2 sqrt(2) block sides allows (the costs' slope is at most
    strength e^-1/2 / rho)."""
    from graphcut.segmentation._locality import FAR_REACH, LOCALITY_REACH, _locality_priors
    rng = np.random.default_rng(10)
    seeds = np.zeros((90, 120), np.uint8)
    seeds[rng.integers(0, 90, 6), rng.integers(0, 120, 6)] = 1
    seeds[rng.integers(0, 90, 6), rng.integers(0, 120, 6)] = 2
    exact = _locality_priors(seeds, [1, 2], 2.0, np, far_cost=5.0, objects=[1])
    for block in (2, 3):
        near = _locality_priors(seeds, [1, 2], 2.0, np, far_cost=5.0, objects=[1],
                                block=block)
        size = np.sqrt(seeds.size)
        slope = (2.0 / (LOCALITY_REACH * size) + 5.0 / (FAR_REACH * size)) * np.exp(-0.5)
        for a, b in zip(exact, near):
            assert a.shape == b.shape
            assert np.abs(a - b).max() <= slope * 2 * np.sqrt(2) * block


def test_several_objects_read_block_distances_and_equal_fresh_segments(monkeypatch):
    """Several objects with a live model (no iterations a stroke): the strokes' locality costs
    come from block distances as for one object (a full-size transform per label took about a
    second at 4 MP), and every update still equals a fresh segment()."""
    from scipy import ndimage
    image, truth, _ = _scene((300, 400), seed=4)
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[140:150, 150:160], seeds[140:150, 240:250] = 1, 3  # two objects in the rectangle
    seeds[:4] = 2
    shapes = []
    transform = ndimage.distance_transform_edt
    monkeypatch.setattr(ndimage, "distance_transform_edt",
                        lambda array, *a, **k: shapes.append(array.shape) or
                        transform(array, *a, **k))
    session = graphcut.Segmenter(image, model=WARM, device="cpu")
    labels = session.update(seeds)
    assert shapes and all(shape[0] < 300 and shape[1] < 400 for shape in shapes)
    assert set(np.unique(labels)) == {0, 1, 3}
    seeds[250:255, 10:20] = 2
    np.testing.assert_array_equal(session.update(seeds),
                                  graphcut.segment(image, seeds, model=WARM, device="cpu"))
