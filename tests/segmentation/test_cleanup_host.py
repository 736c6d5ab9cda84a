"""The host clean-up against independent formulations on random masks, over the whole image
or in a window of it (the clean-up labels only the mask's bounding box): the parts touching
an anchor (scipy's labels and ``np.isin``), and holes below the area filled (every background
part off the border and free of protected pixels, measured one by one)."""

import numpy as np
import pytest
from scipy import ndimage

from graphcut.segmentation import fill_holes, keep_connected


def _random_mask(rng, shape, share, window):
    """Random pixels of ``share`` in the whole image (window None) or only in ``window``."""
    mask = rng.random(shape) < share
    if window is not None:
        inside = np.zeros(shape, bool)
        inside[window] = True
        mask &= inside
    return mask


WINDOWS = [None, np.s_[10:25, 12:30], np.s_[0:12, 20:50], np.s_[28:40, 0:9]]


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("seed", range(4))
def test_keep_connected_equals_the_parts_that_touch_an_anchor(seed, window):
    rng = np.random.default_rng(seed)
    mask = _random_mask(rng, (40, 50), 0.45, window)
    anchors = rng.random(mask.shape) < (0.01 if seed % 3 else 0.0)
    parts, count = ndimage.label(mask)
    touched = np.unique(parts[anchors & mask])
    if touched.size:
        expected = np.isin(parts, touched) & mask
    else:
        sizes = np.bincount(parts.ravel())
        sizes[0] = 0
        expected = parts == np.argmax(sizes)
    np.testing.assert_array_equal(keep_connected(mask, anchors), expected)


@pytest.mark.parametrize("window", WINDOWS)
@pytest.mark.parametrize("seed", range(4))
def test_fill_holes_fills_exactly_the_small_inner_holes(seed, window):
    rng = np.random.default_rng(seed)
    mask = _random_mask(rng, (40, 50), 0.7, window)
    protected = rng.random(mask.shape) < 0.02
    area = [1, 3, 6, 40][seed % 4]
    holes, count = ndimage.label(~mask)
    expected = mask.copy()
    for index in range(1, count + 1):
        hole = holes == index
        rows, cols = np.nonzero(hole)
        on_border = rows.min() == 0 or cols.min() == 0 or rows.max() == 39 or cols.max() == 49
        if hole.sum() < area and not on_border and not (hole & protected).any():
            expected |= hole
    np.testing.assert_array_equal(fill_holes(mask, area, protected=protected), expected)
    if window is not None and area == 40:
        assert (expected != mask).any()  # something was filled: the test shows something
