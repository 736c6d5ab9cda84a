"""The learned model's intensity prior (``Learned(prior=...)``): the Otsu split of the image
gives each label the side its sample lies on (checked against the truth of a synthetic image),
none when both samples lie on one side, and a segmentation from one click per label then finds
every bright object, not only the clicked one. The graded rule (:func:`graded_prior`): the
strength is the difference of the labels' bright shares, so a click on a dim object weakens the
prior instead of switching it off, and the IoU does not fall."""

import numpy as np
import pytest
from scipy import ndimage

import graphcut
from graphcut.models import Learned, model_from_settings
from graphcut.models._features import pixel_features
from graphcut.models._prior import bright_side, graded_prior, intensity_prior


def _nuclei(seed=0, shape=(96, 112), dim_first=False):
    """Bright blobs of several brightnesses on a dark, noisy background; uint16 and truth
    (``dim_first``: the first blob barely brighter than the background, on Otsu's dark
    side)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    truth = np.zeros(shape, bool)
    image = 200 + 40 * rng.standard_normal(shape)
    for index, (r, c) in enumerate([(20, 20), (25, 70), (60, 40), (75, 90), (50, 95)]):
        blob = (yy - r) ** 2 + (xx - c) ** 2 < 8 ** 2
        truth |= blob
        image[blob] += 150 if dim_first and index == 0 else 1500 + 500 * index
    image = ndimage.gaussian_filter(image, 1)
    return np.clip(image, 0, 65535).astype(np.uint16), truth


def _clicks(truth):
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[18:23, 18:23] = 1         # inside the first (dimmest) blob
    seeds[40:45, 5:10] = 2          # background
    return seeds


def test_prior_sides_follow_the_samples():
    image, truth = _nuclei()
    features = pixel_features(image[..., None].astype(np.float32))
    seeds = _clicks(truth)
    obj, bg = intensity_prior(features, (seeds == 1, seeds == 2), 1)
    assert (obj == ~bg).all()
    assert (obj == truth).mean() > 0.97          # the bright side is the nuclei
    swapped = intensity_prior(features, (seeds == 2, seeds == 1), 1)
    assert (swapped[0] == bg).all()
    both_dark = intensity_prior(features, (seeds == 2, seeds == 2), 1)
    assert both_dark == (None, None)


def test_one_click_each_finds_every_bright_object():
    """Every blob whole, and nothing farther than a pixel from one: the default local split
    puts each blob's rim on the object's side (Otsu's missed a fifth of one blob) and a pixel
    of halo round these sharp blobs (IoU 0.84; Otsu's 0.88); without the prior two blobs
    lose a fifth and 65 pixels lie farther out."""
    image, truth = _nuclei(seed=1)
    seeds = _clicks(truth)
    mask = graphcut.segment(image, seeds, model=Learned(prior=1.0), device="cpu")
    labels, count = ndimage.label(truth)
    assert count == 5 and min(mask[labels == k].mean() for k in range(1, 6)) > 0.95
    assert not (mask & ~ndimage.binary_dilation(truth)).any()
    assert (mask & truth).sum() / (mask | truth).sum() > 0.8
    assert mask[seeds == 1].all() and not mask[seeds == 2].any()


def test_prior_incremental_equals_fresh_and_round_trips():
    image, truth = _nuclei(seed=2)
    model = Learned(prior=0.5)
    assert model_from_settings(model.settings()) == model
    session = graphcut.Segmenter(image, model=model, device="cpu")
    seeds = _clicks(truth)
    for stroke in (None, np.s_[73:77, 88:92]):
        if stroke is not None:
            seeds[stroke] = 1
        fresh = graphcut.segment(image, seeds, model=model, device="cpu")
        np.testing.assert_array_equal(np.asarray(session.update(seeds.copy())), fresh)
    with pytest.raises(ValueError, match="prior"):
        Learned(prior=-1)


def test_kept_split_follows_the_image():
    """The bright/dark split is kept per image (bright_side once per features array): one
    model fitted on a second image gives the costs a fresh model gives there, and the kept
    split equals the split of the features it was made from (the model's ``split``: the
    local one by default, Otsu's as a knob)."""
    from graphcut.models._local_split import local_bright_side
    from graphcut.models._prior import bright_side
    for split, side in (("local", local_bright_side), ("otsu", bright_side)):
        _kept_split_follows_the_image(split, side)


def _kept_split_follows_the_image(split, side):
    model = Learned(prior=0.5, split=split)
    for seed in (3, 4):
        image, truth = _nuclei(seed=seed)
        values = image[..., None].astype(np.float32)
        features = model.features(values)
        seeds = _clicks(truth)
        samples = (seeds == 1, seeds == 2)
        costs = model.fit(features, samples).costs(features)
        fresh = Learned(prior=0.5, split=split)
        expected = fresh.fit(fresh.features(values), samples).costs(features)
        for got, want in zip(costs, expected):
            np.testing.assert_array_equal(got, want)
        assert model._split[0] is features and model._split[3]  # the sides drawn, kept
        np.testing.assert_array_equal(model._split[2], side(features, 1))


def test_graded_prior_strength_is_the_difference_of_bright_shares():
    image, truth = _nuclei()
    features = pixel_features(image[..., None].astype(np.float32))
    bright = bright_side(features, 1)
    rng = np.random.default_rng(5)
    for _ in range(5):
        first = rng.random(truth.shape) < 0.02
        second = (rng.random(truth.shape) < 0.01) & ~first
        weights = rng.random(truth.shape) * first
        (mask0, mask1), strength = graded_prior(features, (weights, second), 1)
        share0 = (weights * bright).sum() / weights.sum()   # the oracle: shares by hand
        share1 = bright[second].mean()
        assert strength == pytest.approx(abs(share0 - share1), abs=1e-12)
        np.testing.assert_array_equal(mask0, bright if share0 > share1 else ~bright)
        np.testing.assert_array_equal(mask1, ~mask0)
    # a tie or an empty sample: no prior
    assert graded_prior(features, (truth, truth), 1) == ((None, None), 0.0)
    assert graded_prior(features, (truth, np.zeros_like(truth)), 1) == ((None, None), 0.0)


def test_click_on_a_dim_object_weakens_the_prior_instead_of_dropping_it():
    """Half the object's sample on a dim blob (Otsu's dark side): the all-or-nothing rule
    has no prior (both samples mostly dark), the graded one keeps half of it, and the IoU
    stays where it was before that click (without a prior it falls by ~0.25)."""
    for seed in range(2):
        image, truth = _nuclei(seed=seed, dim_first=True)
        seeds = np.zeros(truth.shape, np.uint8)
        seeds[58:63, 38:43] = 1         # a bright blob
        seeds[40:45, 5:10] = 2          # background
        features = pixel_features(image[..., None].astype(np.float32))

        def iou(mask):
            return (mask & truth).sum() / (mask | truth).sum()

        before = iou(graphcut.segment(image, seeds, model="learned", device="cpu"))
        seeds[18:23, 18:23] = 1         # the dim blob
        samples = (seeds == 1, seeds == 2)
        assert not bright_side(features, 1)[18:23, 18:23].any()
        assert intensity_prior(features, samples, 1) == (None, None)
        assert graded_prior(features, samples, 1)[1] == pytest.approx(0.5)
        after = iou(graphcut.segment(image, seeds, model="learned", device="cpu"))
        no_prior = iou(graphcut.segment(image, seeds, model=Learned(prior=0), device="cpu"))
        assert after >= before - 0.02
        assert after > no_prior + 0.15


def test_graded_prior_is_full_while_the_shares_lie_apart():
    """``full_at``: the strength is min(1, difference / full_at) (the oracle: the shares by
    hand); the learned model trains with prior * that strength, so a click on a dim object
    (object share 1 -> 0.5 against the background's 0) leaves the prior's weight as it was,
    and a background click far from every blob changes no blob's pixels."""
    from graphcut.models._prior import FULL_AT
    image, truth = _nuclei(dim_first=True)
    features = pixel_features(image[..., None].astype(np.float32))
    bright = bright_side(features, 1)
    rng = np.random.default_rng(8)
    for full_at in (0.25, 0.6):
        for _ in range(5):
            first = rng.random(truth.shape) < 0.02
            second = (rng.random(truth.shape) < 0.01) & ~first
            difference = abs(bright[first].mean() - bright[second].mean())
            strength = graded_prior(features, (first, second), 1, full_at=full_at)[1]
            assert strength == pytest.approx(min(1.0, difference / full_at), abs=1e-12)
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[58:63, 38:43] = 1         # a bright blob
    seeds[40:45, 5:10] = 2          # background
    model = Learned()
    weights = []
    for dim_click in (False, True):
        if dim_click:
            seeds[18:23, 18:23] = 1     # the dim blob: half the object's sample dark
        model.fit(model.features(image[..., None].astype(np.float64)),
                  (seeds == 1, seeds == 2))
        weights.append(model._views[0]._shared.prior_weight)
    assert graded_prior(features, (seeds == 1, seeds == 2), 1)[1] == pytest.approx(0.5)
    assert weights == [pytest.approx(Learned.prior)] * 2 and FULL_AT <= 0.5
    before = graphcut.segment(image, seeds, model="learned", device="cpu")
    blobs = ndimage.label(truth)[0]
    far = ndimage.distance_transform_edt(~truth) > 15
    for point in np.argwhere(far)[rng.choice(int(far.sum()), 4, replace=False)]:
        clicked = seeds.copy()
        clicked[max(0, point[0] - 2):point[0] + 3, max(0, point[1] - 2):point[1] + 3] = 2
        after = graphcut.segment(image, clicked, model="learned", device="cpu")
        for index in range(1, blobs.max() + 1):
            blob = blobs == index
            assert abs(int(after[blob].sum()) - int(before[blob].sum())) <= 0.05 * blob.sum()


def test_outline_cost_against_brute_force_distances():
    from graphcut.models._prior import outline_cost
    rng = np.random.default_rng(7)
    region = ndimage.binary_opening(rng.random((20, 24)) < 0.8, iterations=1)
    region[:, -1] = True                 # the image border counts as outline
    outside = [(r, c) for r in range(-1, 21) for c in range(-1, 25)
               if not (0 <= r < 20 and 0 <= c < 24) or not region[r, c]]
    points = np.array(outside, float)
    distance = np.zeros(region.shape)
    for r, c in zip(*np.nonzero(region)):
        distance[r, c] = np.sqrt(((points - (r, c)) ** 2).sum(axis=1)).min()
    expected = np.where(region, 3.0 * np.clip(1 - distance / (0.5 * distance.max()), 0, 1), 0)
    np.testing.assert_allclose(outline_cost(region, 3.0, 0.5), expected, atol=1e-12)
    capped = np.where(region, 3.0 * np.clip(1 - distance / 1.2, 0, 1), 0)
    np.testing.assert_allclose(outline_cost(region, 3.0, 0.5, max_reach=1.2), capped,
                               atol=1e-12)
    assert 1.2 < 0.5 * distance.max()          # the cap is what binds
    assert not outline_cost(np.zeros((4, 4), bool), 3.0, 0.5).any()


def _small_nucleus(seed):
    """A small bright blob (a Gaussian of 5 pixels) with its halo, among other blobs; uint16
    and its truth (the centre blob above half its peak)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:80, :80]
    image = 300 + 30 * rng.standard_normal((80, 80))
    truth = (yy - 40) ** 2 + (xx - 40) ** 2 < 2 * 5.0 ** 2 * np.log(2)
    for r, c in ((40, 40), (15, 15), (15, 65), (65, 20), (62, 62)):
        image += 1200 * np.exp(-((yy - r) ** 2 + (xx - c) ** 2) / (2 * 5.0 ** 2))
    image = ndimage.gaussian_filter(image, 1.5)
    return np.clip(image, 0, 65535).astype(np.uint16), truth


def test_outline_cost_tightens_a_box_around_a_small_nucleus():
    """A tight box (2 pixels of margin) around a small blurred blob: the classifier alone
    takes the halo up to the box's sides and corners as object; with the outline cost the
    mask is close to the truth, and the box constraint holds exactly."""
    gains = []
    for seed in range(3):
        image, truth = _small_nucleus(seed)
        box = (33, 33, 48, 48)
        with_cost = graphcut.segment(image, box=box, model="learned", device="cpu")
        without = graphcut.segment(image, box=box, model=Learned(outline=0), device="cpu")
        inside = np.zeros(truth.shape, bool)
        inside[33:48, 33:48] = True
        assert not with_cost[~inside].any() and not without[~inside].any()

        def iou(mask):
            return (mask & truth).sum() / (mask | truth).sum()
        gains.append(iou(with_cost) - iou(without))
        assert iou(with_cost) > 0.85
    assert min(gains) > 0.1


def test_outline_cost_incremental_equals_fresh_and_round_trips():
    image, truth = _small_nucleus(3)
    model = Learned(outline=2.5)
    assert model_from_settings(model.settings()) == model
    assert model.settings()["outline"] == 2.5 and "outline" not in Learned().settings()
    session = graphcut.Segmenter(image, model=model, device="cpu")
    seeds = np.zeros(truth.shape, np.uint8)
    box = (30, 30, 51, 51)
    for stroke in (None, np.s_[33:35, 33:35]):
        if stroke is not None:
            seeds[stroke] = 2
        fresh = graphcut.segment(image, seeds, box=box, model=model, device="cpu")
        np.testing.assert_array_equal(
            np.asarray(session.update(seeds.copy(), box=box)), fresh)
    with pytest.raises(ValueError, match="outline"):
        Learned(outline=-1)


def test_box_cut_with_outline_cost_is_the_minimum_energy():
    """The pipeline's mask from a box is the minimum of E = sum of (the classifier's costs +
    the outline cost on the object) + lam * sum of cut n-link weights, with everything outside
    the box pinned to the background: checked against PyMaxflow on the same float energy
    (equal up to the pipeline's integer rounding)."""
    maxflow = pytest.importorskip("maxflow")
    from graphcut._arrays import image_as_float
    from graphcut.segmentation import nlink_weights
    from graphcut.segmentation._regions import allowed_region, region_core

    image, truth = _small_nucleus(4)
    box = (33, 33, 48, 48)
    model = Learned()
    mask = graphcut.segment(image, box=box, model=model, device="cpu")
    region = allowed_region(truth.shape, box=box, lasso=None)
    values = image_as_float(image)
    features = model.features(values)
    core = region_core(region, model.core, box=box)
    model.region = True  # as the pipeline's fit with a box: the box's prior and split
    # the background's sample: the outside, and the box's inner ring (the pixels at most
    # min(0.35 d_max, 4) from the outline, by a distance transform) weighing as much
    depth = ndimage.distance_transform_edt(np.pad(region, 1))[1:-1, 1:-1]
    ring = region & (depth <= min(0.35 * depth.max(), 4))
    outside = (~region).astype(float)
    background = outside + ring * (model.ring * outside.sum() / ring.sum())
    cost_object, cost_background = model.fit(features, [core, background]).costs(features)
    cost_object = cost_object + model.outline_costs(region)
    right, down = nlink_weights(image)

    def energy(m):
        return (np.where(m, cost_object, cost_background).sum()
                + model.lam * (right * (m[:, 1:] != m[:, :-1])).sum()
                + model.lam * (down * (m[1:] != m[:-1])).sum())

    graph = maxflow.Graph[float]()
    nodes = graph.add_grid_nodes(truth.shape)
    h, w = truth.shape
    for r in range(h):
        for c in range(w):
            if c + 1 < w:
                graph.add_edge(nodes[r, c], nodes[r, c + 1], model.lam * right[r, c],
                               model.lam * right[r, c])
            if r + 1 < h:
                graph.add_edge(nodes[r, c], nodes[r + 1, c], model.lam * down[r, c],
                               model.lam * down[r, c])
    pinned = np.where(region, cost_object, 1e9)   # outside: never the object
    graph.add_grid_tedges(nodes, cost_background, pinned)
    graph.maxflow()
    oracle = ~graph.get_grid_segments(nodes)
    assert not mask[~region].any()
    assert energy(mask) == pytest.approx(energy(oracle), abs=0.5)   # rounding to integers
    assert ((mask != oracle).sum()) <= 3
    assert model.outline_costs(region)[~region].max() == 0


@pytest.mark.gpu
def test_gpu_graded_prior_and_outline_cost_equal_cpu():
    """On the GPU the graded prior (CuPy sums of the bright shares) and the outline cost
    (host distances moved to the device) give the CPU's masks, to a few pixels; a GPU
    Segmenter's box update equals a fresh GPU segment."""
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001
        pytest.skip("no GPU")
    image, truth = _nuclei(seed=1, dim_first=True)
    seeds = _clicks(truth)
    seeds[58:63, 38:43] = 1
    cpu = graphcut.segment(image, seeds, model="learned", device="cpu")
    gpu = graphcut.segment(image, seeds, model="learned", device="cuda")
    assert (cpu != gpu).sum() <= 0.002 * cpu.size
    image, truth = _small_nucleus(1)
    box = (33, 33, 48, 48)
    cpu = graphcut.segment(image, box=box, model="learned", device="cpu")
    gpu = graphcut.segment(image, box=box, model="learned", device="cuda")
    assert (cpu != gpu).sum() <= 3
    session = graphcut.Segmenter(image, model="learned", device="cuda")
    np.testing.assert_array_equal(np.asarray(session.update(None, box=box)), gpu)
