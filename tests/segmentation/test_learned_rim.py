"""The learned model's costs weighed more near the previous mask's outline
(graphcut/models/_rim.py, ``Learned(rim=, rim_band=)``). Checked: the band against a
brute-force count of each pixel's square neighbourhood; when the weights apply (a previous
mask, ``rim`` not 1, one object) and when not; the costs exactly the weights times the
unweighted model's and the log-odds (the hold's gate) untouched; the ungated hold's costs
weighed alike, the gated hold's not; the cut equal to that of a model given the brute-force
weights by hand; on soft-rimmed nuclei whose previous mask misses the rims, the rims come
back; incremental == fresh through a session; the CuPy stand-in weighs as NumPy does."""

import numpy as np
import pytest
from scipy import ndimage

import graphcut
from graphcut.models import Learned
from graphcut.models._rim import RIM, RIM_BAND, rim_weights
from graphcut.segmentation._hold import hold_costs
from session_oracle import assert_session_updates_are_fresh_segments

from test_learned_fake_cupy import cupy  # noqa: F401 - the stand-in CuPy fixture


def _band_by_hand(guide, band):
    """Pixels with a pixel of the other side within Chebyshev distance ``band`` (inside the
    image), by looping over the offsets."""
    rows, cols = guide.shape
    found = np.zeros(guide.shape, bool)
    for dr in range(-band, band + 1):
        for dc in range(-band, band + 1):
            for r in range(rows):
                for c in range(cols):
                    rr, cc = r + dr, c + dc
                    if 0 <= rr < rows and 0 <= cc < cols and guide[rr, cc] != guide[r, c]:
                        found[r, c] = True
    return found


@pytest.mark.parametrize("seed,band", [(0, 1), (1, 1), (2, 2), (3, 3)])
def test_band_equals_a_brute_force_count(seed, band):
    rng = np.random.default_rng(seed)
    guide = ndimage.binary_opening(rng.random((17, 23)) < 0.45)
    guide[0, :5] = True                     # an object touching the image's border
    weights = rim_weights(guide, 3.5, band)
    expected = np.where(_band_by_hand(guide, band), 3.5, 1.0)
    assert weights.dtype == np.float64 and (expected == 3.5).any() and (expected == 1).any()
    np.testing.assert_array_equal(weights, expected)


def test_weights_are_off_without_a_guide_or_at_one():
    guide = np.zeros((6, 7), bool)
    guide[2:4, 2:5] = True
    assert rim_weights(None, 4.0, 1) is None
    assert rim_weights(guide, 1.0, 1) is None
    assert rim_weights(guide, 4.0, 0) is None
    np.testing.assert_array_equal(rim_weights(np.ones((6, 7), bool), 4.0, 1), 1.0)
    assert RIM > 1 and RIM_BAND >= 1      # on by default (chosen on the dev trajectories)


def _scene():
    """Small nuclei with soft rims (blurred) on a noisy background: uint8 image and truth."""
    rng = np.random.default_rng(3)
    shape = (80, 120)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    sharp = np.zeros(shape)
    truth = np.zeros(shape, bool)
    for row, col in [(15, 15), (20, 50), (18, 95), (45, 30), (50, 70), (62, 105), (65, 45)]:
        disk = (yy - row) ** 2 + (xx - col) ** 2 < 6 ** 2
        truth |= disk
        sharp[disk] = 1.0
    image = 40 + 120 * ndimage.gaussian_filter(sharp, 1.5) + 12 * rng.standard_normal(shape)
    return np.clip(image, 0, 255).astype(np.uint8), truth


def _disk(seeds, row, col, label):
    yy, xx = np.mgrid[:seeds.shape[0], :seeds.shape[1]]
    seeds[((yy - row) ** 2 + (xx - col) ** 2 <= 5) & (seeds == 0)] = label


def _states():
    """Seeds after clicks 2 to 6 (object, background, ...)."""
    seeds = np.zeros((80, 120), np.uint8)
    states = []
    for row, col, label in [(15, 15, 1), (35, 60, 2), (50, 70, 1), (5, 70, 2),
                            (65, 45, 1), (75, 5, 2)]:
        _disk(seeds, row, col, label)
        states.append(seeds.copy())
    return states[1:]


def _fit(image, seeds, guide, **knobs):
    model = Learned(**knobs)
    features = model.features(image[..., None] / 255.0)
    model.guide = guide
    return model.fit(features, (seeds == 1, seeds == 2)), features


def test_costs_are_the_weights_times_the_classifiers_and_log_odds_unchanged():
    image, truth = _scene()
    seeds = _states()[-1]
    guide = ndimage.binary_erosion(truth, iterations=2)
    weighed, features = _fit(image, seeds, guide, rim=2.5, rim_band=2)
    plain, _ = _fit(image, seeds, guide, rim=1.0)
    weights = np.where(_band_by_hand(guide, 2), 2.5, 1.0)
    for high, low in zip(weighed.costs(features), plain.costs(features)):
        np.testing.assert_array_equal(high, weights * low)
    assert float(np.abs(plain.costs(features)[0]).max()) > 1.0
    np.testing.assert_array_equal(weighed.log_odds(features, (seeds == 1, seeds == 2)),
                                  plain.log_odds(features, (seeds == 1, seeds == 2)))
    unguided, _ = _fit(image, seeds, None, rim=2.5)
    again, _ = _fit(image, seeds, None, rim=1.0)
    for one, other in zip(unguided.costs(features), again.costs(features)):
        np.testing.assert_array_equal(one, other)


def test_several_objects_are_not_weighed():
    """The guide is the previous mask of one object's update (several objects' updates leave
    it as it was): costs of three labels are the unweighted classifier's."""
    image, truth = _scene()
    seeds = _states()[-1].copy()
    seeds[40:44, 100:104] = 3
    features = Learned().features(image[..., None] / 255.0)
    samples = tuple(seeds == label for label in (1, 2, 3))
    plain = Learned(rim=1.0).fit(features, samples).costs(features)
    stale = Learned()
    stale.guide = truth
    for one, other in zip(stale.fit(features, samples).costs(features), plain):
        np.testing.assert_array_equal(one, other)
    pair = (seeds == 1, seeds == 2)    # the same guide for one object: weighed
    assert (stale.fit(features, pair).costs(features)[0] !=
            Learned(rim=1.0).fit(features, pair).costs(features)[0]).any()


class _ByHand(Learned):
    """The unweighted learned model whose costs are multiplied by weights given by hand."""

    weights = None

    def costs(self, features):
        return [c * self.weights for c in super().costs(features)]


def test_the_cut_is_the_one_of_the_costs_weighed_by_hand():
    """The segmentation with the rim on equals that of an unweighted model whose costs are
    multiplied by the brute-force band's weights (no hold, so the previous mask acts only
    through the weights and the prior's guide); and the weights change the cut (a heavy
    boundary term, lam 32, that the band's weights lighten)."""
    image, truth = _scene()
    states = _states()
    previous = (states[-2], ndimage.binary_erosion(truth, iterations=2))
    seeds = states[-1]
    on = graphcut.segment(image, seeds, model=Learned(rim=8.0, rim_band=1, hold=0),
                          previous=previous, lam=32.0)
    by_hand = _ByHand(rim=1.0, hold=0)
    by_hand.weights = np.where(_band_by_hand(previous[1], 1), 8.0, 1.0)
    np.testing.assert_array_equal(on, graphcut.segment(image, seeds, model=by_hand,
                                                       previous=previous, lam=32.0))
    off = graphcut.segment(image, seeds, model=Learned(rim=1.0, hold=0), previous=previous,
                           lam=32.0)
    assert (on != off).sum() >= 10


def _iou(mask, truth):
    return (mask & truth).sum() / (mask | truth).sum()


def test_the_rims_come_back():
    """A previous mask that misses a 2-pixel rim of every nucleus (the truth eroded), held by
    a heavy boundary term (lam 32, no hold): with the rim weights the cut gives rims back and
    is closer to the truth than without."""
    image, truth = _scene()
    states = _states()
    rimless = ndimage.binary_erosion(truth, iterations=2)
    previous = (states[-2], rimless)

    def mask(rim):
        # Otsu's split: the default local split gives most rims back without the weights
        # (the rims' share 0.89 against 0.82; with the weights 0.92, the IoU the same)
        model = Learned(rim=rim, rim_band=1, hold=0, split="otsu")
        return graphcut.segment(image, states[-1], model=model, previous=previous, lam=32.0)
    on, off = mask(16.0), mask(1.0)
    rims = truth & ~rimless
    assert on[rims].mean() > off[rims].mean() + 0.03
    assert _iou(on, truth) > _iou(off, truth) + 0.01


def test_the_ungated_hold_weighs_as_much_more_in_the_band():
    """The hold's costs (graphcut/segmentation/_hold.py) from ``hold_after`` strokes on are
    the rim weights times the unweighted ones (the hold keeps its balance with the classifier
    in the band); before (the gated hold alone) they are not weighed."""
    image, truth = _scene()
    states = _states()                       # 2, 3, 4, 5, 6 strokes
    previous = (states[-2], ndimage.binary_erosion(truth, iterations=2))
    model = Learned(rim=16.0, rim_band=1)
    model.guide = previous[1]
    weights = np.where(_band_by_hand(previous[1], 1), 16.0, 1.0)
    np.testing.assert_array_equal(model.rim_weights(), weights)
    odds = np.full(truth.shape, 3.0)
    for after, factors in ((6, weights), (7, 1.0)):
        knobs = dict(hold=8.0, reach=30.0, after=after, confident_after=3,
                     margin=lambda: np.where(previous[1], odds, -odds))
        plain = hold_costs(previous, states[-1], **knobs)[0]
        scaled = hold_costs(previous, states[-1], scale=model.rim_weights, **knobs)[0]
        assert float(np.abs(plain).max()) > 1.0
        np.testing.assert_array_equal(scaled, plain * factors)


def test_incremental_equals_fresh_through_a_session():
    image, _ = _scene()
    masks = assert_session_updates_are_fresh_segments(image, Learned(), _states())
    assert len(masks) == 5 and all(m.any() for m in masks)


def test_knobs_round_trip_and_are_checked():
    model = Learned(rim=3.0, rim_band=2)
    assert model.settings() == {"model": "learned", "rim": 3.0, "rim_band": 2}
    assert graphcut.models.model_from_settings(model.settings()) == model
    assert "rim" not in Learned().settings()
    for bad in ({"rim": 0.0}, {"rim": -1.0}, {"rim": float("inf")}, {"rim_band": 1.5},
                {"rim_band": -1}):
        with pytest.raises(ValueError):
            Learned(**bad)


def _with_square_filters(monkeypatch):
    """The stand-in's ``cupyx.scipy.ndimage`` given SciPy's square maximum and minimum
    filters (what :func:`rim_weights` calls on a GPU)."""
    import sys
    import fake_cupy

    stand_in = sys.modules["cupyx.scipy.ndimage"]
    for name in ("maximum_filter", "minimum_filter"):
        scipy_filter = getattr(ndimage, name)
        monkeypatch.setattr(stand_in, name, lambda values, *args, _f=scipy_filter, **kw:
                            fake_cupy._wrap(_f(np.asarray(values), *args, **kw)),
                            raising=False)


def test_gpu_stand_in_weighs_like_numpy(cupy, monkeypatch):  # noqa: F811
    _with_square_filters(monkeypatch)
    guide = ndimage.binary_opening(np.random.default_rng(5).random((30, 40)) < 0.5)
    weights = rim_weights(cupy.asarray(guide), 4.0, 1)
    assert type(weights).__module__.split(".")[0] == "cupy"
    np.testing.assert_array_equal(np.asarray(weights), rim_weights(guide, 4.0, 1))


@pytest.mark.gpu
def test_gpu_weights_and_session_like_the_cpu():
    """On a GPU (CuPy's own square filters) the weights equal NumPy's, and a session with the
    rim on answers as a fresh GPU segment given the previous update."""
    real = pytest.importorskip("cupy")
    guide = ndimage.binary_opening(np.random.default_rng(6).random((300, 340)) < 0.5)
    weights = rim_weights(real.asarray(guide), 16.0, 1)
    np.testing.assert_array_equal(real.asnumpy(weights), rim_weights(guide, 16.0, 1))
    image, _ = _scene()
    assert_session_updates_are_fresh_segments(image, Learned(), _states(), device="cuda")
