"""A box's inner ring as the learned model's background (``Learned(ring=...)``,
graphcut/segmentation/_ring.py): the ring is the region's pixels within min(0.35 d_max, 4)
pixels of its outline (checked against a distance transform, for boxes and a lasso), object
seeds stay out of it, and on a small blurred nucleus in a box drawn with a margin the
classifier trained with it finds the margin's halo less like the object."""

import numpy as np
import pytest
from scipy import ndimage

from graphcut.models import Learned
from graphcut.segmentation._regions import allowed_region
from graphcut.segmentation._ring import ring_of, with_ring


def _by_distance(region, reach=0.35, pixels=4.0):
    depth = ndimage.distance_transform_edt(np.pad(region, 1))[1:-1, 1:-1]
    return region & (depth <= min(reach * depth.max(), pixels))


@pytest.mark.parametrize("seed", range(6))
def test_the_ring_of_a_box_is_its_pixels_near_the_outline(seed):
    rng = np.random.default_rng(seed)
    shape = (60, 70)
    r0, c0 = int(rng.integers(1, 20)), int(rng.integers(1, 20))
    box = (r0, c0, r0 + int(rng.integers(3, 38)), c0 + int(rng.integers(3, 48)))
    region = allowed_region(shape, box=box)
    np.testing.assert_array_equal(ring_of(region, box=box), _by_distance(region))


def test_the_ring_of_a_lasso():
    lasso = [(5, 5), (5, 50), (40, 60), (45, 10)]
    region = allowed_region((60, 70), lasso=lasso)
    np.testing.assert_array_equal(ring_of(region), _by_distance(region))


def test_object_seeds_stay_out_of_the_ring():
    region = allowed_region((20, 20), box=(2, 2, 18, 18))
    is_object = np.zeros((20, 20), bool)
    is_object[2:4, 8:10] = True
    outside = ~region
    _, background = with_ring((region, outside), region, is_object, 1.0, np)
    assert not background[is_object].any()
    ring = ring_of(region, box=(2, 2, 18, 18)) & ~is_object
    np.testing.assert_allclose(background[ring].sum(), outside.sum())  # weighs as much


def _small_blurred_nucleus():
    rng = np.random.default_rng(2)
    yy, xx = np.mgrid[:80, :80]
    truth = (yy - 40) ** 2 + (xx - 40) ** 2 < 4 ** 2
    image = 20 + 3 * rng.standard_normal((80, 80))
    for row, col in [(12, 15), (65, 60), (15, 65)]:   # other nuclei outside the box
        image[(yy - row) ** 2 + (xx - col) ** 2 < 4 ** 2] += 180
    image[truth] += 180
    image = ndimage.gaussian_filter(image, 1.5)
    return np.clip(image, 0, 255).astype(np.uint8), truth


def test_the_ring_teaches_the_classifier_the_margin_is_background():
    """The classifier trained with the ring (as the pipeline builds the samples) finds the
    box's margin, the halo around the nucleus, less like the object than without it; the
    nucleus itself stays object."""
    from graphcut._arrays import image_as_float
    from graphcut.segmentation._regions import region_core
    image, truth = _small_blurred_nucleus()
    box = (33, 33, 48, 48)
    region = allowed_region(truth.shape, box=box)
    core = region_core(region, 0.5, box=box)
    ring = ring_of(region, box=box)
    margins = []
    for share in (0.0, 1.0):
        model = Learned(ring=share)
        features = model.features(image_as_float(image))
        samples = with_ring((core, ~region), region, np.zeros_like(region), share, np)
        cost_object, cost_background = model.fit(features, list(samples)).costs(features)
        margins.append((cost_object - cost_background)[ring & ~truth].mean())
        assert (cost_object < cost_background)[truth & core].all()
    assert margins[1] > margins[0] + 1.0
