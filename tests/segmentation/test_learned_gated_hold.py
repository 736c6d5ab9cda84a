"""The confidence-gated hold (``Learned(confident_after=...)``, graphcut/segmentation/_hold.py):
from ``confident_after`` strokes (before ``hold_after``) a pixel far from the new stroke holds
its previous side only as much as the classifier trained on the previous seeds was sure of it.
On constructed images: far pixels the previous classifier was sure of do not flip (they do
without a hold); far pixels it was unsure of follow a new click (the ungated hold keeps them);
the costs follow their formula on the CPU and the GPU stand-in; the previous classifier's
log-odds are the same whether reused or retrained; incremental == fresh."""

import numpy as np
import pytest
from scipy import ndimage

import graphcut
from graphcut.models import Learned, model_from_settings
from graphcut.segmentation._hold import GATE_FROM, GATE_FULL, hold_costs, thickness

from test_learned_fake_cupy import cupy  # noqa: F401 - the stand-in CuPy fixture
from test_learned_hold import _clicks, _first_seeds, _look_alike, _nuclei, outline_band


def _only_gated(**knobs):
    """The learned model without its prior, the gated hold from the first stroke on and never
    the ungated one."""
    return Learned(prior=0, confident_after=0, hold_after=99, **knobs)


def test_far_pixels_the_classifier_was_sure_of_do_not_flip():
    image, a, b, g = _look_alike()
    seeds = _first_seeds(image.shape)
    features = Learned(prior=0).features(image[..., None] / 255.0)
    odds = Learned(prior=0).log_odds(features, (seeds == 1, seeds == 2))
    assert np.percentile(odds[a], 5) > GATE_FULL          # sure of A
    new = seeds.copy()
    new[g] = 2                       # the gap marked background: it looks like B
    kept, inner = {}, {}
    for name, model in (("none", Learned(prior=0, hold=0)), ("gated", _only_gated(rim=1.0)),
                        ("gated, rim", _only_gated())):
        session = graphcut.Segmenter(image, model=model, device="cpu")
        before = session.update(seeds)
        after = session.update(new, previous=(seeds, before))
        assert not after[g].any()    # the click corrects its own region exactly
        kept[name] = (after & a).sum() / (before & a).sum()
        core = a & before & ~outline_band(before)
        inner[name] = (after & core).sum() / core.sum()
    assert kept["none"] < 0.8        # the scenario is real: A, 80 px away, loses pixels
    assert kept["gated"] == 1.0      # with the gated hold it stands
    # with the rim weights (the default) it stands but for a pixel of its outline
    assert inner["gated, rim"] == 1.0 and kept["gated, rim"] > 0.8


def _unsure_region(level=160):
    """A bright nucleus A (seeded), a background, and two far nuclei C and D of a middle
    brightness the first classifier is unsure of; uint8 image and the regions, seeds."""
    rng = np.random.default_rng(0)
    shape = (80, 260)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    image = 20 + 4 * rng.standard_normal(shape)
    a, c, d = ((yy - 40) ** 2 + (xx - col) ** 2 < 81 for col in (20, 130, 240))
    image[a], image[c], image[d] = 200, level, level
    image = np.clip(ndimage.gaussian_filter(image, 1), 0, 255).astype(np.uint8)
    seeds = np.zeros(shape, np.uint8)
    seeds[38:43, 18:23] = 1
    seeds[5:10, 100:105] = 2
    seeds[70:75, 60:65] = 2
    return image, c, d, seeds


def test_far_pixels_the_classifier_was_unsure_of_follow_a_new_click():
    image, c, d, seeds = _unsure_region()
    new = seeds.copy()
    new[38:43, 238:243] = 1          # an object click on D: C, 110 px away, looks like it
    joined = {}
    for name, model in (("none", Learned(prior=0, hold=0)),
                        ("ungated", Learned(prior=0, hold_after=0)),
                        ("gated", _only_gated())):
        session = graphcut.Segmenter(image, model=model, device="cpu")
        before = session.update(seeds)
        assert not before[c].any()   # C starts as background
        joined[name] = session.update(new, previous=(seeds, before))[c].mean()
    assert joined["none"] > 0.6      # the new classifier takes C
    assert joined["ungated"] == 0    # the ungated hold keeps it out
    assert joined["gated"] > 0.5 * joined["none"]   # the gated one lets much of it follow


def test_gated_hold_costs_follow_the_formula():
    shape = (40, 120)
    mask = np.zeros(shape, bool)
    mask[10:30, 80:110] = True
    before = np.zeros(shape, np.uint8)
    before[20, 5], before[20, 60] = 2, 1
    seeds = before.copy()
    seeds[18:23, 40:45] = 1          # the third stroke
    odds = np.linspace(-6, 6, shape[0] * shape[1]).reshape(shape)
    calls = []

    def margin():
        calls.append(1)
        return odds
    signed, _ = hold_costs((before, mask), seeds, hold=6.0, reach=10.0, after=4,
                           confident_after=3, margin=margin, confident_hold=12.0)
    distance = ndimage.distance_transform_edt(seeds == before)
    r = max(10.0, 3 * thickness(mask))
    sure = np.clip((np.where(mask, odds, -odds) - GATE_FROM) / (GATE_FULL - GATE_FROM), 0, 1)
    expected = 12.0 * -np.expm1(-distance ** 2 / (2 * r * r)) * sure
    np.testing.assert_allclose(signed, np.where(mask, -expected, expected))
    # from ``after`` strokes each pixel holds the larger of the two
    later, _ = hold_costs((before, mask), seeds, hold=6.0, reach=10.0, after=3,
                          confident_after=2, margin=margin, confident_hold=12.0)
    larger = -np.expm1(-distance ** 2 / (2 * r * r)) * np.maximum(12.0 * sure, 6.0)
    np.testing.assert_allclose(later, np.where(mask, -larger, larger))
    # ``confident_after`` not below ``after``: the ungated hold alone, no margin asked for
    calls.clear()
    full, _ = hold_costs((before, mask), seeds, hold=6.0, reach=10.0, after=3,
                         confident_after=3, margin=margin, confident_hold=12.0)
    assert not calls
    ungated = 6.0 * -np.expm1(-distance ** 2 / (2 * r * r))
    np.testing.assert_allclose(full, np.where(mask, -ungated, ungated))
    # before ``confident_after`` strokes, or no margin known: no hold
    assert hold_costs((before, mask), seeds, hold=6.0, reach=10.0, after=5,
                      confident_after=4, margin=margin) is None
    assert hold_costs((before, mask), seeds, hold=6.0, reach=10.0, after=5,
                      confident_after=3, margin=lambda: None) is None


def test_log_odds_reused_from_the_last_fit_equal_a_fresh_classifiers():
    image, truth = _nuclei()
    first, second = _clicks(truth, 3, seed=0)[:2]
    model = Learned()
    features = model.features(image[..., None] / 255.0)
    samples = [(s == 1, s == 2) for s in (first, second)]
    fresh = Learned().log_odds(features, samples[0])
    model.fit(features, samples[0])
    costs = model.costs(features)
    np.testing.assert_array_equal(model.log_odds(features, tuple(s.copy() for s in samples[0])),
                                  fresh)
    other = model.log_odds(features, samples[1])    # other samples: retrained aside
    np.testing.assert_array_equal(other, Learned().log_odds(features, samples[1]))
    assert not np.array_equal(other, fresh)
    for kept, now in zip(costs, model.costs(features)):   # the model's own fit unchanged
        np.testing.assert_array_equal(kept, now)


@pytest.mark.parametrize("confident_after", [2, 3])
def test_incremental_equals_fresh_segment_with_the_gated_hold(confident_after):
    image, truth = _nuclei(seed=9)
    model = Learned(confident_after=confident_after, hold_after=6)
    session = graphcut.Segmenter(image, model=model, device="cpu")
    previous = None
    for seeds in _clicks(truth, 8, seed=3):
        mask = session.update(seeds, previous=previous)
        fresh, result = graphcut.segment(image, seeds, model=Learned(
            confident_after=confident_after, hold_after=6), device="cpu", previous=previous,
            return_result=True)
        np.testing.assert_array_equal(mask, fresh)
        assert session.last_result.flow == result.flow
        previous = (seeds, mask)


def test_knob_round_trips_and_is_checked():
    model = Learned(confident_after=4)
    assert model.settings() == {"model": "learned", "confident_after": 4}
    assert model_from_settings(model.settings()) == model
    assert Learned().confident_after == 3
    with pytest.raises(ValueError, match="confident_after"):
        Learned(confident_after=2.5)


def stand_in_scene(seed):
    """A previous mask, the previous classifier's log-odds, the previous seeds and the new
    ones (a background click) on a (60, 70) grid, for the CuPy stand-in's hold tests."""
    shape = (60, 70)
    rng = np.random.default_rng(seed)
    mask = ndimage.gaussian_filter(rng.random(shape), 4) > 0.5
    odds = 4 * rng.standard_normal(shape)
    before = np.zeros(shape, np.uint8)
    before[5:9, 5:9] = 1
    before[-9:-5, -9:-5] = 2
    seeds = before.copy()
    seeds[30:34, 10:14] = 2
    return mask, odds, before, seeds


def test_gpu_stand_in_gives_the_same_gated_costs(cupy):  # noqa: F811
    mask, odds, before, seeds = stand_in_scene(2)
    options = dict(hold=8.0, reach=30.0, after=7, confident_after=3)
    cpu = hold_costs((before, mask), seeds, margin=lambda: odds, **options)
    gpu = hold_costs((cupy.asarray(before), cupy.asarray(mask)), cupy.asarray(seeds),
                     margin=lambda: cupy.asarray(odds), **options)
    assert type(gpu[0]).__module__.split(".")[0] == "cupy"
    np.testing.assert_allclose(np.asarray(gpu[0]), cpu[0], rtol=1e-12, atol=1e-12)


@pytest.mark.gpu
def test_gpu_session_with_the_gated_hold_is_a_fresh_segment_and_the_cpus():
    """On the GPU, the gated hold's session masks equal a fresh GPU segment given the previous
    update (the previous classifier reused there, retrained here) and the CPU's to a few
    pixels; the previous classifier's log-odds are the CPU's to float32 rounding."""
    cupy = pytest.importorskip("cupy")
    image, truth = _nuclei(seed=11, shape=(300, 340))
    model = Learned(confident_after=2, hold_after=7)
    session = graphcut.Segmenter(image, model=model, device="cuda")
    previous = None
    for seeds in _clicks(truth, 8, seed=4):
        mask = session.update(seeds, previous=previous)
        fresh = graphcut.segment(image, seeds, model=Learned(confident_after=2, hold_after=7),
                                 device="cuda", previous=previous)
        np.testing.assert_array_equal(mask, fresh)
        cpu = graphcut.segment(image, seeds, model=model, device="cpu", previous=previous)
        assert (cpu != mask).sum() <= 0.002 * mask.size
        previous = (seeds, mask)
    values = image[..., None] / 255.0
    samples = (seeds == 1, seeds == 2)
    on_cpu = Learned().log_odds(Learned().features(values), samples)
    on_gpu = Learned().log_odds(Learned().features(cupy.asarray(values)),
                                tuple(cupy.asarray(s) for s in samples))
    assert np.abs(cupy.asnumpy(on_gpu) - on_cpu).max() < 1e-3 * max(1.0, np.abs(on_cpu).max())


def test_log_odds_after_a_fit_on_dense_samples_are_retrained():
    """A dense sample (a box's inside) is not recorded: log_odds trains aside, same numbers."""
    image, truth = _nuclei(seed=4)
    model = Learned()
    features = model.features(image[..., None] / 255.0)
    dense = (~truth, truth.copy())   # the object's sample covers most of the image
    model.fit(features, dense)
    assert model._fitted_on[1][0] is None
    np.testing.assert_array_equal(model.log_odds(features, dense),
                                  Learned().log_odds(features, dense))
