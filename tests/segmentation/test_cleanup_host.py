"""The host clean-up against independent formulations on random masks: the parts touching an
anchor (scipy's labels and ``np.isin``), and holes below the area filled (every background
part off the border, measured one by one)."""

import numpy as np
import pytest
from scipy import ndimage

from graphcut.segmentation import fill_holes, keep_connected


@pytest.mark.parametrize("seed", range(6))
def test_keep_connected_equals_the_parts_that_touch_an_anchor(seed):
    rng = np.random.default_rng(seed)
    mask = rng.random((40, 50)) < 0.45
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


@pytest.mark.parametrize("seed", range(6))
def test_fill_holes_fills_exactly_the_small_inner_holes(seed):
    rng = np.random.default_rng(seed)
    mask = rng.random((30, 40)) < 0.7
    area = [1, 3, 6][seed % 3]
    holes, count = ndimage.label(~mask)
    expected = mask.copy()
    for index in range(1, count + 1):
        hole = holes == index
        rows, cols = np.nonzero(hole)
        on_border = rows.min() == 0 or cols.min() == 0 or rows.max() == 29 or cols.max() == 39
        if hole.sum() < area and not on_border:
            expected |= hole
    np.testing.assert_array_equal(fill_holes(mask, area), expected)
