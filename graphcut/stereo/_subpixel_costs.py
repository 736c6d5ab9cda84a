"""Raw AD-census costs at fractional disparities, for the slanted-plane data cost.

Interpolating integer-disparity costs linearly makes a fractional disparity cost the mean of
its two neighbours' costs, more than the better of them: on a textured slanted surface the
integer staircase then has a lower data cost than the true plane. Sampling the cost itself at
``1 / steps`` pixel (the right image shifted by a fraction of a pixel, linearly interpolated
along its rows, before its census transform and colour difference, as PatchMatch stereo
interpolates the right view) leaves only the interpolation between nearby samples. A linear
shift by half a pixel averages two pixels (the right image is blurred at every fractional
disparity); ``interpolation="cubic"`` shifts by a cubic spline (``scipy.ndimage.shift``,
order 3), which barely blurs, and ``"keys"`` by Keys' cubic convolution (four pixels, in
between): at full size the spline helped the planes on venus, at half size it did not
(docs/stereo.md, "Coarse-to-fine planes").
"""

from __future__ import annotations

import numpy as np

from ._costs import (CensusParameters, _census_codes_numpy, _popcount, _tables,
                     check_census_parameters)

__all__ = ["subpixel_census_costs"]

INTERPOLATIONS = ("linear", "cubic", "keys")


def subpixel_census_costs(left_levels: np.ndarray, right_levels: np.ndarray,
                          max_disparity: int, steps: int = 4,
                          parameters: CensusParameters = CensusParameters(),
                          interpolation: str = "linear") -> np.ndarray:
    """Raw (unaggregated) AD-census costs every ``1 / steps`` pixel of disparity.

    Parameters
    ----------
    left_levels, right_levels
        (H, W, C) grey levels (0..255) of the rectified pair.
    max_disparity
        the largest disparity, pixels.
    steps
        samples per pixel of disparity (1: the integer disparities).
    parameters
        the census window and the two parts' lambdas and scale
        (:class:`~graphcut.stereo.CensusParameters`; its aggregation is not used).
    interpolation
        how the right image is shifted by a fraction of a pixel along its rows: "linear"
        (between the two nearest pixels), "cubic" (an interpolating cubic B-spline, less
        blur) or "keys" (Keys' cubic convolution, a = -0.5, four pixels).

    Returns
    -------
    numpy.ndarray
        uint8 (max_disparity * steps + 1, H, W): index ``k`` is disparity ``k / steps``;
        ``parameters.scale`` where the match lies left of the right image. Equal to
        ``census_costs`` without aggregation at ``steps=1`` for integer images.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.stereo._subpixel_costs import subpixel_census_costs
    >>> right = np.random.default_rng(0).uniform(0, 255, (6, 12, 1))
    >>> subpixel_census_costs(np.roll(right, 1, axis=1), right, 2, steps=2).shape
    (5, 6, 12)
    """
    parameters = check_census_parameters(parameters)
    if interpolation not in INTERPOLATIONS:
        raise ValueError(f"interpolation must be one of {', '.join(INTERPOLATIONS)}, got "
                         f"{interpolation!r}")
    left = np.asarray(left_levels, dtype=np.float64)
    right = np.asarray(right_levels, dtype=np.float64)
    h, w, channels = left.shape
    census_table, colour_table = _tables(parameters, channels)
    left_code = _census_codes_numpy(left.sum(axis=-1), parameters.window)
    out = np.empty((max_disparity * steps + 1, h, w), dtype=np.uint8)
    for fraction in range(steps):
        f = fraction / steps
        # right_f(x) = right(x - f): linear between right(x) and right(x - 1), or a cubic
        # spline through the row (clipped to the grey levels' range)
        shifted = right.copy()
        if interpolation == "linear" or not fraction:
            shifted[:, 1:] = (1 - f) * right[:, 1:] + f * right[:, :-1]
        elif interpolation == "keys":
            shifted = np.clip(_keys_shift(right, f), 0, 255)
        else:
            from scipy import ndimage  # only for the cubic shift
            shifted = np.clip(ndimage.shift(right, (0, f, 0), order=3, mode="nearest"),
                              0, 255)
        right_code = _census_codes_numpy(shifted.sum(axis=-1), parameters.window)
        for d in range(max_disparity + 1):
            k = d * steps + fraction
            if k >= out.shape[0]:
                break
            start = d + (1 if fraction else 0)  # right_f(x - d) needs x - d - 1 >= 0
            raw = np.full((h, w), parameters.scale, dtype=np.int32)
            if start < w:
                hamming = _popcount(left_code[:, start:] ^ right_code[:, start - d:w - d])
                difference = np.rint(np.abs(left[:, start:] - shifted[:, start - d:w - d])
                                     .sum(axis=-1)).astype(np.intp)
                raw[:, start:] = census_table[hamming.astype(np.intp)] + colour_table[difference]
            out[k] = raw
    return out


def _keys(s: float) -> float:
    """Keys' cubic convolution kernel (a = -0.5) at distance ``s`` (pixels)."""
    s, a = abs(s), -0.5
    if s <= 1:
        return (a + 2) * s ** 3 - (a + 3) * s ** 2 + 1
    return a * s ** 3 - 5 * a * s ** 2 + 8 * a * s - 4 * a if s < 2 else 0.0


def _keys_shift(image: np.ndarray, f: float) -> np.ndarray:
    """``image(x - f)`` along axis 1 for 0 < f < 1 by Keys' kernel over the pixels x - 2 .. x + 1
    (edges repeated)."""
    u = 1.0 - f                       # x - f lies u past pixel x - 1
    padded = np.pad(image, ((0, 0), (2, 1), (0, 0)), mode="edge")
    w = image.shape[1]
    taps = ((0, _keys(u + 1)), (1, _keys(u)), (2, _keys(1 - u)), (3, _keys(2 - u)))
    return sum(weight * padded[:, start:start + w] for start, weight in taps)
