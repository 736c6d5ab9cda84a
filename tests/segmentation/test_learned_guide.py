"""The learned prior kept on the previous mask's side (graphcut/models/_guide.py): when one
click moves the labels' bright shares past each other, the seeds' intensity prior turns round
and tells the classifier the object's look is the background's; given the previous update,
the prior stays on the side the previous mask's object lies on. Checked on a constructed
image where the turned prior makes the mask lose the nuclei (without the guide) and the
guided one keeps them; the rule against a hand count of the bright shares; incremental ==
fresh through a session where the guide turns the prior; the gate's previous classifier is
trained with the guide it is given (the last fit reused only when its prior is the same); the
CuPy stand-in decides as NumPy does."""

import numpy as np
import pytest
from scipy import ndimage

import graphcut
import graphcut.models._guide as guide_module
from graphcut.models import Learned
from graphcut.models._guide import guided_prior
from session_oracle import assert_session_updates_are_fresh_segments

from test_learned_fake_cupy import cupy  # noqa: F401 - the stand-in CuPy fixture


def _scene():
    """Bright nuclei (one dim), two bright background patches, a dark noisy background:
    uint8 image, truth, the dim nucleus and the patches."""
    rng = np.random.default_rng(1)
    shape = (90, 150)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    image = 30 + 6 * rng.standard_normal(shape)
    truth = np.zeros(shape, bool)
    for row, col in [(20, 20), (25, 75), (65, 45), (70, 120)]:
        blob = (yy - row) ** 2 + (xx - col) ** 2 < 8 ** 2
        truth |= blob
        image[blob] = 200
    dim = (yy - 45) ** 2 + (xx - 100) ** 2 < 7 ** 2
    truth |= dim
    image[dim] = 70
    patches = np.zeros(shape, bool)
    for row, col in [(20, 130), (75, 15)]:
        patch = (abs(yy - row) < 4) & (abs(xx - col) < 6)
        patches |= patch
        image[patch] = 200
    image = np.clip(ndimage.gaussian_filter(image, 1), 0, 255).astype(np.uint8)
    return image, truth, dim, patches


def _disk(seeds, row, col, label):
    yy, xx = np.mgrid[:seeds.shape[0], :seeds.shape[1]]
    seeds[(yy - row) ** 2 + (xx - col) ** 2 <= 6] = label


def _states():
    """Seeds before and after the clicks that turn the prior round (object on the dim
    nucleus, background on both bright patches), and after one more click."""
    first = np.zeros((90, 150), np.uint8)
    _disk(first, 20, 20, 1)
    _disk(first, 45, 60, 2)
    second = first.copy()
    _disk(second, 45, 100, 1)
    _disk(second, 20, 130, 2)
    _disk(second, 75, 15, 2)
    third = second.copy()
    _disk(third, 50, 140, 2)
    return first, second, third


def _iou(mask, truth):
    return (mask & truth).sum() / (mask | truth).sum()


@pytest.mark.parametrize("mode", ["mask", "follow", "off"])
def test_guide_keeps_the_nuclei_the_turned_prior_loses(monkeypatch, mode):
    image, truth, dim, patches = _scene()
    first, second, _ = _states()
    # the prior alone: no hold; Otsu's split, whose side the dim nucleus (70 on 30) is not on,
    # so that the clicks turn the prior (the default local split puts it on the nuclei's
    # side with the bright ones: nothing turns, the guide has nothing to keep)
    model = Learned(hold=0, confident_after=99, split="otsu")
    session = graphcut.Segmenter(image, model=model, device="cpu")
    before = session.update(first)
    assert before[truth & ~dim].mean() > 0.9           # the bright nuclei (and patches)
    masks = {}
    for name in ("none", mode):
        monkeypatch.setattr(guide_module, "MODE", None if name == "none" else name)
        masks[name] = session.update(second, previous=(first, before))
    # the scenario is real: the seeds' prior turned round, the object became the background
    assert _iou(masks["none"], truth) < 0.1 and masks["none"].mean() > 0.5
    assert _iou(masks[mode], truth) > {"mask": 0.7, "follow": 0.7, "off": 0.4}[mode]
    assert masks[mode].mean() < 0.2


def test_guided_prior_against_a_hand_count(monkeypatch):
    bright = np.zeros((10, 10), bool)
    bright[:, :4] = True                               # 40 bright pixels
    mask = np.zeros((10, 10), bool)
    mask[:5, :6] = True                                # 30 pixels, 20 of them bright
    # the mask's bright share 20 / 30 against the rest's 20 / 70: the object is bright, the
    # shares 8 / 21 apart
    clear = 20 / 30 - 20 / 70
    turned, same = (~bright, bright), (bright, ~bright)
    (first, second), difference, changed = guided_prior(turned, 0.2, bright, mask, "mask")
    assert first is bright and second is turned[0] and changed
    assert difference == pytest.approx(clear)
    assert guided_prior(same, 0.2, bright, mask, "mask") == (same, pytest.approx(clear), True)
    (first, _), difference, changed = guided_prior(turned, 0.2, bright, mask, "follow")
    assert first is bright and difference == 0.2 and changed
    assert guided_prior(same, 0.2, bright, mask, "follow") == (same, 0.2, False)
    assert guided_prior(turned, 0.2, bright, mask, "off") == ((None, None), 0.0, True)
    # the seeds' shares lie further apart than the mask's: the seeds' prior stands
    for mode in ("mask", "follow", "off"):
        assert guided_prior(turned, 0.39, bright, mask, mode) == (turned, 0.39, False)
        assert guided_prior(turned, 0.38, bright, mask, mode)[2] is True
        assert guided_prior(turned, 0.2, bright, None, mode) == (turned, 0.2, False)
        assert guided_prior(turned, 0.2, bright, np.ones((10, 10), bool), mode)[2] is False
    assert guided_prior((None, None), 0.0, bright, mask, "mask") == ((None, None), 0.0, False)
    monkeypatch.setattr(guide_module, "MODE", None)    # the guide off: nothing changes
    assert guided_prior(turned, 0.2, bright, mask)[2] is False
    even = np.zeros((10, 10), bool)
    even[:, 3:5] = True                                # bright share 1 / 2, the rest's 3 / 8
    assert guided_prior(turned, 0.1, bright, even, "follow")[2] is True
    even[:, 5] = True                                  # 10 / 30 against 30 / 70
    assert guided_prior(turned, 0.05, bright, even, "follow")[2] is False
    (first, _), difference, _ = guided_prior(turned, 0.05, bright, even, "mask")
    assert first is turned[0] and difference == pytest.approx(30 / 70 - 10 / 30)


@pytest.mark.parametrize("mode", ["mask", "follow", "off"])
def test_incremental_equals_fresh_when_the_guide_changed_the_fit(monkeypatch, mode):
    monkeypatch.setattr(guide_module, "MODE", mode)
    changed = []

    def recorded(*args, **kwargs):
        out = guided_prior(*args, **kwargs)
        changed.append(out[2])
        return out
    monkeypatch.setattr(guide_module, "guided_prior", recorded)
    image, truth, _, _ = _scene()
    # the gate reads the guided fit's seeds; Otsu's split turns the prior (as above)
    model = Learned(hold_after=3, confident_after=2, split="otsu")
    assert_session_updates_are_fresh_segments(image, model, _states())
    assert any(changed)          # the guide turned the prior in this session


def test_log_odds_follow_the_guide_they_are_given():
    """The previous classifier (the gate's) is trained with the guide the pipeline gives it
    (the previous mask): the last fit's costs are reused only when its prior is the same."""
    image, truth, _, _ = _scene()
    _, second, _ = _states()
    samples = (second == 1, second == 2)
    model = Learned()
    features = model.features(image[..., None] / 255.0)
    model.guide = ~truth                     # the object has been the dark side: turned
    model.fit(features, samples)
    model.guide = truth                      # now the bright side: another prior
    fresh = Learned()
    fresh.features(image[..., None] / 255.0)
    fresh.guide = truth
    np.testing.assert_array_equal(model.log_odds(features, samples),
                                  fresh.log_odds(features, samples))
    turned = Learned()
    turned.features(image[..., None] / 255.0)
    turned.guide = ~truth
    assert np.abs(turned.log_odds(features, samples) - fresh.log_odds(features, samples)
                  ).max() > 1.0          # the two guides train different classifiers


def _guided_fit(features, guide):
    model = Learned()
    model._channels = 1
    model.guide = guide
    first, second, _ = _states()
    return model.fit(features, (second == 1, second == 2))


def test_gpu_stand_in_guides_like_numpy(cupy, monkeypatch):  # noqa: F811
    """The guide on the CuPy stand-in (features on the device, the previous mask on the host
    as the pipeline gives it): the same decision and the same costs as NumPy's."""
    image, truth, _, _ = _scene()
    values = image[..., None] / 255.0
    cpu = _guided_fit(Learned().features(values), truth)
    gpu_features = Learned().features(cupy.asarray(values))
    gpu = _guided_fit(gpu_features, truth)
    assert type(gpu_features).__module__.split(".")[0] == "cupy"
    assert cpu._fitted_on[2] == gpu._fitted_on[2] == (False, True, 1.0)   # the mask's side
    np.testing.assert_allclose(np.asarray(gpu.costs(gpu_features)[0]),
                               cpu.costs(Learned().features(values))[0], atol=1e-4)


@pytest.mark.gpu
def test_gpu_session_guides_like_the_cpu():
    """A Segmenter on the GPU through the clicks that turn the prior round: incremental ==
    fresh on the GPU, and the CPU's masks to a few pixels."""
    pytest.importorskip("cupy")
    image, truth, _, _ = _scene()
    model = Learned(hold_after=3, confident_after=2)
    session = graphcut.Segmenter(image, model=model, device="cuda")
    previous = None
    for seeds in _states():
        mask = session.update(seeds, previous=previous)
        fresh = graphcut.segment(image, seeds, model=model, device="cuda", previous=previous)
        np.testing.assert_array_equal(mask, fresh)
        cpu = graphcut.segment(image, seeds, model=model, device="cpu", previous=previous)
        assert (cpu != mask).sum() <= 0.002 * mask.size
        previous = (seeds, mask)
