"""The app's seed layer colours (gui/overlay.py, no Qt)."""

from __future__ import annotations

import numpy as np

from graphcut.gui.overlay import SEED_COLOURS, seed_layer


def test_seed_layer_is_the_colour_of_every_label():
    rng = np.random.default_rng(0)
    table = rng.integers(0, 256, size=(7, 4), dtype=np.uint8)
    for shape in [(1, 1), (5, 9), (64, 33)]:
        labels = rng.integers(0, 7, size=shape, dtype=np.uint8)
        rgba = seed_layer(labels, table)
        assert rgba.shape == shape + (4,) and rgba.dtype == np.uint8
        for index in np.ndindex(shape):
            np.testing.assert_array_equal(rgba[index], table[labels[index]])
    strided = np.arange(24, dtype=np.uint8).reshape(4, 6)[:, ::2] % 3  # a view, not contiguous
    np.testing.assert_array_equal(seed_layer(strided), SEED_COLOURS[strided])
