"""Texture channels for the colour models: the local contrast around every pixel.

Where an object and its background share their colours (a grey object on a grey background,
a dark object on a dark, starry sky), the colours alone cannot tell them apart, but their
textures often can: bark against a smooth sky, a painted surface against sparse stars. The
*local contrast* of a pixel is the standard deviation of the grey intensity (the mean of the
channels, [0, 1] units) over the ``(2 r + 1) x (2 r + 1)`` window centred on it, the image
mirrored at its borders. :func:`with_texture` appends it to the values as one more channel,
so a colour model (the GMM) fits colour and texture jointly; the boundary term keeps using
the image's own colours.

Whole-array NumPy / CuPy code (summed-area tables), so the CPU and GPU paths compute the same
numbers (to rounding).
"""

from __future__ import annotations

from graphcut._arrays import array_module


def local_contrast(values, radius: int):
    """Standard deviation of the channels' mean over each pixel's ``(2 radius + 1)``-square
    window (mirror padding): float64 (H, W) on ``values``' device; ``values`` (H, W, C)."""
    xp = array_module(values)
    grey = values.mean(axis=-1)
    size = 2 * radius + 1

    def window_mean(array):
        if array.ndim != 2:  # a volume: the cube's mean, one axis at a time
            return _separable_window_mean(xp, array, radius)
        padded = xp.pad(array, radius, mode="symmetric")
        table = xp.zeros((padded.shape[0] + 1, padded.shape[1] + 1), dtype=xp.float64)
        table[1:, 1:] = padded.cumsum(axis=0).cumsum(axis=1)
        h, w = array.shape
        total = (table[size:size + h, size:size + w] - table[:h, size:size + w]
                 - table[size:size + h, :w] + table[:h, :w])
        return total / (size * size)

    mean = window_mean(grey)
    variance = window_mean(grey * grey) - mean * mean
    return xp.sqrt(xp.maximum(variance, 0.0))


def _separable_window_mean(xp, array, radius: int):
    """The mean over each voxel's ``(2 radius + 1)``-cube (mirror padding), one axis at a
    time with running sums."""
    size = 2 * radius + 1
    for axis in range(array.ndim):
        padded = xp.pad(array, [(radius, radius) if a == axis else (0, 0)
                                for a in range(array.ndim)], mode="symmetric")
        sums = xp.cumsum(padded, axis=axis, dtype=xp.float64)
        zero = xp.zeros_like(xp.take(sums, [0], axis=axis))
        sums = xp.concatenate([zero, sums], axis=axis)
        n = array.shape[axis]
        array = (xp.take(sums, xp.arange(size, size + n), axis=axis)
                 - xp.take(sums, xp.arange(n), axis=axis)) / size
    return array


def with_texture(values, radius: int):
    """``values`` (H, W, C) with :func:`local_contrast` appended as channel C + 1; the values
    themselves when ``radius`` is 0."""
    if radius <= 0:
        return values
    xp = array_module(values)
    return xp.concatenate([values, local_contrast(values, radius)[..., None]], axis=-1)
