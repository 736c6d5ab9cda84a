"""The hold's release (graphcut/segmentation/_hold.py, ``RELEASE_FROM`` / ``RELEASE_FULL``):
from ``after`` strokes, a new stroke whose pixels the previous update's classifier gave the
other label discredits that classifier, and the hold (gated and ungated) is scaled down, so
that a mask left wrong by an earlier click is not kept against the newest seeds. On a
constructed image: a wrong background click is undone and an object click placed; a far
nucleus the wrong click had turned follows the new click with the release and stays wrong
without it; the costs follow their formula on the CPU and the GPU stand-in; incremental ==
fresh."""


import numpy as np
import pytest
from scipy import ndimage

import graphcut
from graphcut.models import Learned
from graphcut.segmentation import _hold
from graphcut.segmentation._hold import (GATE_FROM, GATE_FULL, RELEASE_FROM, RELEASE_FULL,
                                         hold_costs, release, thickness)
from test_learned_fake_cupy import cupy  # noqa: F401 - the stand-in CuPy fixture
from test_learned_gated_hold import stand_in_scene


def _undone_click():
    """A bright nucleus A, three dim ones E, C and D (E debris, truly background), a dark
    background; the first seeds mark A object, the background and E background (the dim look
    taught as background: C and D are lost), the second erase E's click and mark D object.
    Returns the uint8 image, C's pixels, and the two seed images."""
    rng = np.random.default_rng(1)
    shape = (80, 340)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    image = 20 + 4 * rng.standard_normal(shape)
    a, e, c, d = ((yy - 40) ** 2 + (xx - col) ** 2 < 81 for col in (20, 100, 200, 300))
    image[a], image[e], image[c], image[d] = 200, 60, 60, 60
    image = np.clip(ndimage.gaussian_filter(image, 1), 0, 255).astype(np.uint8)
    first = np.zeros(shape, np.uint8)
    first[38:43, 18:23] = 1
    first[5:10, 60:65] = 2
    first[70:75, 150:155] = 2
    first[36:45, 96:105] = 2         # the wrong click: on E, which looks like C and D
    second = first.copy()
    second[36:45, 96:105] = 0        # undone
    second[36:45, 296:305] = 1       # and D marked object
    return image, c, first, second


def _model():
    """The learned model without its prior; the hold (both kinds) from the second stroke."""
    return Learned(prior=0, confident_after=1, hold_after=2)


def test_a_far_region_the_newest_seeds_contradict_is_not_held(monkeypatch):
    image, c, first, second = _undone_click()
    joined = {}
    for name, release in (("release", RELEASE_FROM), ("no release", None)):
        monkeypatch.setattr(_hold, "RELEASE_FROM", release)
        session = graphcut.Segmenter(image, model=_model(), device="cpu")
        before = session.update(first)
        assert not before[c].any()   # the wrong click lost C
        joined[name] = session.update(second, previous=(first, before))[c].mean()
    fresh = graphcut.segment(image, second, model=_model(), device="cpu")[c].mean()
    assert fresh > 0.7               # the newest seeds alone take C
    assert joined["no release"] < 0.1   # the hold keeps the wrong side
    assert joined["release"] > 0.9 * fresh   # released: C follows the newest seeds


def test_release_scales_the_hold_by_the_new_strokes_evidence():
    shape = (40, 120)
    mask = np.zeros(shape, bool)
    mask[10:30, 80:110] = True
    before = np.zeros(shape, np.uint8)
    before[20, 5], before[20, 60] = 2, 1
    before[2, 2] = 2                 # erased below: not part of the new stroke's evidence
    seeds = before.copy()
    seeds[2, 2] = 0
    seeds[18:23, 40:45] = 1          # the new object stroke
    distance = ndimage.distance_transform_edt(seeds == before)
    r = max(10.0, 3 * thickness(mask))
    weight = -np.expm1(-distance ** 2 / (2 * r * r))
    new = seeds == 1
    new[20, 60] = False
    for against in (0.0, RELEASE_FROM, 0.5 * (RELEASE_FROM + RELEASE_FULL), RELEASE_FULL,
                    RELEASE_FULL + 3):
        odds = np.linspace(-6, 6, shape[0] * shape[1]).reshape(shape)
        odds[new] = -against         # the previous classifier: the stroke's pixels background
        odds[2, 2] = 50.0            # the erased pixel would count 50 nats the other way
        scale = np.clip((RELEASE_FULL - against) / (RELEASE_FULL - RELEASE_FROM), 0, 1)
        assert release(odds, before, seeds) == pytest.approx(scale)
        sure = np.clip((np.where(mask, odds, -odds) - GATE_FROM) / (GATE_FULL - GATE_FROM),
                       0, 1)
        signed, _ = hold_costs((before, mask), seeds, hold=6.0, reach=10.0, after=3,
                               confident_after=2, margin=lambda: odds, confident_hold=12.0)
        expected = weight * np.maximum(12.0 * sure, 6.0) * scale
        np.testing.assert_allclose(signed, np.where(mask, -expected, expected), atol=1e-12)
        # before ``after`` strokes the gated hold is not released
        early, _ = hold_costs((before, mask), seeds, hold=6.0, reach=10.0, after=4,
                              confident_after=2, margin=lambda: odds, confident_hold=12.0)
        expected = weight * 12.0 * sure
        np.testing.assert_allclose(early, np.where(mask, -expected, expected), atol=1e-12)


def test_incremental_equals_fresh_segment_with_the_release():
    image, c, first, second = _undone_click()
    session = graphcut.Segmenter(image, model=_model(), device="cpu")
    before = session.update(first)
    mask = session.update(second, previous=(first, before))
    fresh, result = graphcut.segment(image, second, model=_model(), device="cpu",
                                     previous=(first, before), return_result=True)
    np.testing.assert_array_equal(mask, fresh)
    assert session.last_result.flow == result.flow


def test_gpu_stand_in_gives_the_same_released_costs(cupy):  # noqa: F811
    mask, odds, before, seeds = stand_in_scene(3)
    odds[30:34, 10:14] = 0.5 * (RELEASE_FROM + RELEASE_FULL)   # half released
    options = dict(hold=8.0, reach=30.0, after=2, confident_after=1)
    cpu = hold_costs((before, mask), seeds, margin=lambda: odds, **options)
    gpu = hold_costs((cupy.asarray(before), cupy.asarray(mask)), cupy.asarray(seeds),
                     margin=lambda: cupy.asarray(odds), **options)
    assert type(gpu[0]).__module__.split(".")[0] == "cupy"
    np.testing.assert_allclose(np.asarray(gpu[0]), cpu[0], rtol=1e-12, atol=1e-12)
    unreleased = hold_costs((before, mask), seeds, margin=lambda: odds,
                            **{**options, "after": 4})
    assert 0 < np.abs(cpu[0]).max() < np.abs(unreleased[0]).max()
