"""The learned model's intensity prior weighed by the number of marks (``Learned(prior_marks=...)``,
:func:`graphcut.models._prior.prior_weight`): the marks are counted as SciPy's connected
components (on a coarse grid for large images), the weight is 1 while the clicks are few and
falls to ``prior`` as they add up, the classifier trains with that weight, and the incremental
result equals a fresh ``segment``."""

import numpy as np
import pytest
from scipy import ndimage

import graphcut
from graphcut.models import Learned, model_from_settings
from graphcut.models._prior import count_marks, graded_prior, prior_weight


def _disks(shape, centres, radius=3):
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    mask = np.zeros(shape, bool)
    for r, c in centres:
        mask |= (yy - r) ** 2 + (xx - c) ** 2 <= radius ** 2
    return mask


def test_count_marks_equals_connected_components():
    rng = np.random.default_rng(0)
    for _ in range(20):
        sample = ndimage.binary_dilation(rng.random((90, 120)) < 0.003, iterations=2)
        expected = ndimage.label(sample, structure=np.ones((3, 3)))[1]
        assert count_marks(sample) == expected
        assert count_marks(sample * rng.random(sample.shape) * 5.0) == expected  # weights
    assert count_marks(np.zeros((30, 30), bool)) == 0
    volume = np.zeros((6, 40, 40), bool)
    volume[1, 2:5, 2:5] = volume[4, 30:33, 30:33] = volume[5, 30:33, 30:33] = True
    assert count_marks(volume) == 2


def test_count_marks_on_a_large_image_uses_the_grid():
    """3000 x 2000 pixels: each cell is 12 pixels (3000 / 256, rounded up); clicks far apart
    count one each, a stroke with gaps shorter than a cell counts once, and two clicks in
    neighbouring cells count as one mark."""
    shape = (3000, 2000)
    clicks = _disks(shape, [(100, 100), (1500, 900), (2900, 1900), (400, 1700)], radius=5)
    assert count_marks(clicks) == 4
    stroke = np.zeros(shape, bool)
    stroke[1000, 200:1200] = True
    stroke[1000, 500:505] = stroke[1000, 800:808] = False     # gaps of 5 and 8 pixels
    assert ndimage.label(stroke)[1] == 3 and count_marks(stroke) == 1
    assert count_marks(_disks(shape, [(600, 600), (600, 615)], radius=2)) == 1


def test_prior_weight_falls_with_the_marks():
    shape = (120, 120)
    grid = [(10 + 25 * i, 10 + 25 * j) for i in range(4) for j in range(4)]
    samples = {n: _disks(shape, grid[:n]) for n in (1, 2, 3, 4, 8, 16)}
    assert prior_weight((samples[1], samples[1]), 0.3, 0) == 0.3   # off: always prior
    assert prior_weight((samples[1], samples[2]), 0.3, 2) == 1.0
    assert prior_weight((samples[2], samples[2]), 0.3, 2) == 1.0
    assert prior_weight((samples[4], samples[4]), 0.3, 2) == pytest.approx(0.5)
    assert prior_weight((samples[2], samples[4]), 0.3, 2) == pytest.approx(2 / 3)
    assert prior_weight((samples[8], samples[16]), 0.3, 2) == 0.3  # down to prior
    weights = [prior_weight((samples[n], samples[n]), 0.3, 3) for n in (1, 2, 3, 4, 8, 16)]
    assert weights == sorted(weights, reverse=True)                # never rises with marks


def _nuclei(seed=0, shape=(96, 112)):
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:shape[0], :shape[1]]
    truth = np.zeros(shape, bool)
    image = 200 + 40 * rng.standard_normal(shape)
    for index, (r, c) in enumerate([(20, 20), (25, 70), (60, 40), (75, 90), (50, 95)]):
        blob = (yy - r) ** 2 + (xx - c) ** 2 < 8 ** 2
        truth |= blob
        image[blob] += 600 + 500 * index
    image = ndimage.gaussian_filter(image, 1)
    return np.clip(image, 0, 65535).astype(np.uint16), truth


def test_classifier_trains_with_the_marks_weight():
    image, truth = _nuclei()
    model = Learned(prior=0.3, prior_marks=2)
    features = model.features(image[..., None].astype(np.float64))
    for objects, backgrounds in (([(60, 40)], [(5, 5)]),
                                 ([(60, 40), (20, 20), (25, 70), (75, 90)],
                                  [(5, 5), (90, 5), (5, 105), (90, 50)])):
        samples = (_disks(truth.shape, objects), _disks(truth.shape, backgrounds))
        model.fit(features, samples)
        strength = graded_prior(features, samples, 1)[1]
        expected = max(0.3, min(1.0, 2 / len(objects))) * strength
        assert model._views[0]._shared.prior_weight == pytest.approx(expected)


def test_prior_marks_incremental_equals_fresh_and_round_trips():
    image, truth = _nuclei(seed=2)
    model = Learned(prior_marks=3)
    assert model_from_settings(model.settings()) == model
    assert model.settings() == {"model": "learned", "prior_marks": 3.0}
    session = graphcut.Segmenter(image, model=model, device="cpu")
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[58:63, 38:43] = 1
    seeds[40:45, 5:10] = 2
    for stroke, label in ((None, 0), (np.s_[73:77, 88:92], 1), (np.s_[85:90, 20:25], 2),
                          (np.s_[5:9, 100:104], 2)):
        if stroke is not None:
            seeds[stroke] = label
        fresh = graphcut.segment(image, seeds, model=model, device="cpu")
        np.testing.assert_array_equal(np.asarray(session.update(seeds.copy())), fresh)
    with pytest.raises(ValueError, match="prior_marks"):
        Learned(prior_marks=-1)


@pytest.mark.gpu
def test_gpu_prior_marks_equal_cpu_and_incremental_equals_fresh():
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001
        pytest.skip("no GPU")
    sample = _disks((700, 530), [(10, 10), (300, 200), (690, 520)])
    assert count_marks(cupy.asarray(sample)) == count_marks(sample) == 3
    image, truth = _nuclei(seed=4)
    model = Learned(prior_marks=3)
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[58:63, 38:43] = 1
    seeds[40:45, 5:10] = 2
    session = graphcut.Segmenter(image, model=model, device="cuda")
    for stroke, label in ((None, 0), (np.s_[73:77, 88:92], 1), (np.s_[85:90, 20:25], 2)):
        if stroke is not None:
            seeds[stroke] = label
        cpu = graphcut.segment(image, seeds, model=model, device="cpu")
        gpu = graphcut.segment(image, seeds, model=model, device="cuda")
        assert (np.asarray(cpu) != np.asarray(gpu)).sum() <= 0.002 * cpu.size
        np.testing.assert_array_equal(np.asarray(session.update(seeds.copy())), gpu)
