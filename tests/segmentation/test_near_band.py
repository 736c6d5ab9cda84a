"""A box's near band (graphcut/segmentation/_ring.py, sixteenth session): the pixels outside an
image's box within half its smaller side of it weigh ``near`` times the background sample's
total more in the learned model's training. Checked: the band against a brute-force frame
(boxes at the image border too), the weights added exactly, a volume's box and a lasso left
alone, a Segmenter's boxes equal fresh segments, the box holding exactly, the GPU's array
code (the NumPy stand-in for CuPy; a real GPU marked ``gpu``) equal to NumPy's, and the
model's ``near`` reaching the classifier's training sample."""

import numpy as np
import pytest
from scipy import ndimage
from test_device_seeds import gpu  # noqa: F401  (the stand-in / GPU fixture)

import graphcut
from graphcut.models import Learned
from graphcut.segmentation import _ring
from graphcut.segmentation._regions import allowed_region
from graphcut.segmentation._ring import near_frame, ring_of, with_ring
from session_oracle import assert_box_updates_are_fresh_segments


def _brute_band(shape, box, width):
    """The pixels outside ``box`` within ``round(width * smaller side)`` of it (Chebyshev)."""
    r0, c0, r1, c1 = box
    pixels = int(round(width * min(r1 - r0, c1 - c0)))
    band = np.zeros(shape, bool)
    for r in range(shape[0]):
        for c in range(shape[1]):
            dr = max(r0 - r, 0, r - (r1 - 1))
            dc = max(c0 - c, 0, c - (c1 - 1))
            band[r, c] = 0 < max(dr, dc) <= pixels
    return band


@pytest.mark.parametrize("seed", range(8))
def test_the_near_frame_is_the_boxes_surroundings(seed):
    rng = np.random.default_rng(seed)
    shape = (30, 40)
    r0, c0 = int(rng.integers(0, 20)), int(rng.integers(0, 30))
    box = (r0, c0, min(r0 + int(rng.integers(1, 15)), 30), min(c0 + int(rng.integers(1, 15)), 40))
    width = float(rng.choice([0.25, 0.5, 1.0]))
    counts = np.zeros(shape, int)
    for strip in near_frame(shape, box, width):
        counts[strip] += 1
    assert counts.max() <= 1  # disjoint strips
    np.testing.assert_array_equal(counts.astype(bool), _brute_band(shape, box, width))


def test_the_band_adds_its_share_of_the_background():
    shape, box = (40, 50), (10, 12, 22, 30)
    region = allowed_region(shape, box=box)
    is_object = np.zeros(shape, bool)
    background = (~region).astype(np.float64)
    total = background.sum()
    _, weighted = with_ring((region, background.copy()), region, is_object, 0.0, np, box=box,
                            near=2.0, near_width=0.5)
    band = _brute_band(shape, box, 0.5)
    added = weighted - background
    np.testing.assert_allclose(added[band].sum(), 2.0 * total)
    np.testing.assert_allclose(added[band], added[band][0])  # evenly
    assert not added[~band].any() and not weighted[region].any()
    # with the ring: the ring's share is of the total after the band
    _, both = with_ring((region, background.copy()), region, is_object, 1.0, np, box=box,
                        near=2.0, near_width=0.5)
    ring = ring_of(region, box=box)
    np.testing.assert_allclose(both[ring].sum(), 3.0 * total)
    np.testing.assert_array_equal(both[~ring], weighted[~ring])


def test_a_lasso_and_a_volumes_box_have_no_band():
    region = allowed_region((30, 30), lasso=[(5, 5), (5, 25), (25, 15)])
    background = (~region).astype(np.float64)
    _, weighted = with_ring((region, background.copy()), region, np.zeros((30, 30), bool),
                            0.0, np, near=1.0)
    np.testing.assert_array_equal(weighted, background)
    volume = np.zeros((4, 12, 12), bool)
    volume[1:3, 3:9, 3:9] = True
    _, weighted = with_ring((volume, (~volume).astype(np.float64)), volume,
                            np.zeros_like(volume), 0.0, np, box=(1, 3, 3, 3, 9, 9), near=1.0)
    np.testing.assert_array_equal(weighted, (~volume).astype(np.float64))


def test_the_gpus_array_code_equals_numpys(gpu):  # noqa: F811
    shape, box = (40, 50), (0, 12, 22, 50)  # on two image borders
    region = allowed_region(shape, box=box)
    is_object = np.zeros(shape, bool)
    is_object[10, 20] = True
    background = (~region).astype(np.float64)
    expected = with_ring((region, background.copy()), region, is_object, 1.0, np, box=box,
                         near=1.0)[1]
    got = with_ring((gpu.asarray(region), gpu.asarray(background)), gpu.asarray(region),
                    gpu.asarray(is_object), 1.0, gpu, box=box, near=1.0)[1]
    got = got.get() if hasattr(got, "get") else np.asarray(got)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def _scene():
    """A blurred small nucleus in its box inside a ring of cytoplasm; other nuclei elsewhere."""
    rng = np.random.default_rng(5)
    yy, xx = np.mgrid[:90, :90]
    image = 20 + 4 * rng.standard_normal((90, 90))
    cytoplasm = (yy - 45) ** 2 + (xx - 45) ** 2 < 14 ** 2
    image[cytoplasm] = 65 + 4 * rng.standard_normal(int(cytoplasm.sum()))
    truth = (yy - 45) ** 2 + (xx - 45) ** 2 < 4.5 ** 2
    image[truth] = 120
    for row, col in [(12, 15), (70, 70), (15, 70), (72, 14)]:
        image[(yy - row) ** 2 + (xx - col) ** 2 < 4.5 ** 2] += 100
    image = ndimage.gaussian_filter(image, 1.0)
    return np.clip(image, 0, 255).astype(np.uint8), truth, (38, 38, 53, 53)


@pytest.mark.parametrize("near", [None, 0.0, 2.0])
def test_the_models_near_reaches_the_training_and_the_box_holds(monkeypatch, near):
    """The model's ``near`` (default :data:`NEAR_SHARE`) is the band's share in the
    background sample the classifier is trained on; the mask stays in the box."""
    import graphcut.segmentation._pipeline as pipeline

    image, truth, box = _scene()
    seen = []

    def spy(*args, **kwargs):
        samples = with_ring(*args, **kwargs)
        seen.append(np.array(samples[1], dtype=np.float64))
        return samples

    monkeypatch.setattr(pipeline, "with_ring", spy)
    model = Learned(near=near)  # a knob: None is the default
    assert model.settings() == ({"model": "learned"} if near is None else
                                {"model": "learned", "near": near})
    mask = graphcut.segment(image, box=box, model=model, device="cpu")
    region = allowed_region(image.shape, box=box)
    assert not mask[~region].any() and (mask & truth).sum() / (mask | truth).sum() > 0.6
    background = seen[-1]
    band = _brute_band(image.shape, box, _ring.NEAR_WIDTH)
    rest = ~region & ~band
    share = _ring.NEAR_SHARE if near is None else near
    # every background pixel weighs 1; the band adds ``share`` times their count evenly
    np.testing.assert_allclose(background[rest], 1.0)
    np.testing.assert_allclose(background[band].sum(), band.sum() + share * (~region).sum())


def test_segmenter_updates_with_boxes_equal_fresh_segments():
    image, truth, box = _scene()
    seeds = np.zeros(image.shape, np.uint8)
    seeds[45, 44:47] = 1
    assert_box_updates_are_fresh_segments(image, box, seeds, margin=3)
