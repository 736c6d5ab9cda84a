"""The learned model's intensity prior split locally (:class:`Learned(split="local")
<graphcut.models.Learned>`, the eighteenth session; the default from strokes since the
nineteenth, with a box or lasso Otsu's stays): the global Otsu
threshold lowered where the image is dim, but not below a share of the way to the nearest
bright peak (:func:`local_bright_side`).

One global Otsu split of the grey (:func:`~._prior.bright_side`) is too strict on most
microscopy: it misses the rims of nuclei and whole dim nuclei next to bright ones (on the
development images its object side holds 65-84 % of the truth on the DSB groups;
docs/appearance-microscopy.md, "The seventeenth session"), and the classifier, which learns
from the prior's two sides, follows it. Here the threshold of each pixel is

``min(t, max(local, (t + median) / 2, median + PEAK_SHARE (peak - median)))``

with ``t`` the global Otsu threshold, ``median`` the image's median grey, ``local`` the grey's
Gaussian mean over about :data:`BLOCK` pixels (the local background and its nuclei) and
``peak`` the largest grey (smoothed at 2 pixels) within :data:`PEAK_RADIUS` pixels. It is never
above Otsu's (only more pixels join the object's side), dim regions get a lower one down to
halfway from Otsu's to the median, and the guard of the nearby peak keeps the halo of a bright
nucleus (grey well below its peak) on the background's side. The object's side is the brighter
one when Otsu's bright side is the smaller (fluorescence), the darker one otherwise (stained
tissue): the split is written for the image's nuclei.

Its cost (the nineteenth session): once per image, in float32; the local mean filtered on the
grey averaged over 4 x 4 blocks and read back bilinearly (:func:`local_mean`; within 0.5 % of
the grey's range of the full filter), the peak's Gaussian and maximum by OpenCV where
installed (:func:`nearby_peak`), else by SciPy's filters (cupyx's on a GPU). At 2048 x 2048
on a 2-core CPU 0.04 s (0.23 s without OpenCV) against the full float64 filters' 0.81 s
(bench/RESULTS.md, "nineteenth session, micro19").
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module

from ._prior import grey_sample

#: the local mean's window (pixels): a Gaussian of sigma ``(BLOCK - 1) / 6``
BLOCK = 101
#: the nearby peak: its radius (pixels; a ``2 r + 1`` square) and the smoothing of the grey
#: before its maximum (pixels)
PEAK_RADIUS, PEAK_SIGMA = 10, 2.0
#: a pixel lies on the object's side only above this share of the way from the median grey to
#: its nearby peak
PEAK_SHARE = 0.3


#: the local mean is filtered on the grey averaged over square blocks of this many pixels a
#: side at most (then upsampled bilinearly): as many as keep the mean's Gaussian at least
#: :data:`SHRUNK_SIGMA` blocks wide (4 at :data:`BLOCK` 101, 1 below block 49)
SHRINK = 4
#: the local mean's Gaussian (sigma, in blocks) is at least this wide on the shrunk grey
SHRUNK_SIGMA = 4.0


def _ndimage(xp):
    if xp.__name__ == "numpy":
        from scipy import ndimage
    else:  # pragma: no cover - CuPy (the NumPy stand-in in the tests)
        from cupyx.scipy import ndimage
    return ndimage


def _opencv(xp, grey):
    """OpenCV where installed, the arrays NumPy's and the grey 2-D, else None (SciPy's or
    cupyx's filters then; the same values to float32 rounding)."""
    from ._features_cpu import _opencv as opencv

    return opencv() if xp.__name__ == "numpy" and grey.ndim == 2 else None


def shrink_factor(block):
    """The side (pixels) of the blocks the local mean is filtered on: ``SHRINK`` at most, and
    ``1`` (the full grey) when the mean's sigma ``(block - 1) / 6`` is below
    ``2 * SHRUNK_SIGMA``.

    Examples
    --------
    >>> shrink_factor(101), shrink_factor(51), shrink_factor(21)
    (4, 2, 1)
    """
    sigma = (int(block) - 1) / 6.0
    return int(max(1, min(SHRINK, sigma // SHRUNK_SIGMA)))


def _upsample(small, factor, shape, xp, cv2, offset=0):
    """``small`` (an image or a volume) read (bi- or tri-)linearly at the centres of the
    pixels ``offset .. offset + shape`` of a grid ``factor`` times finer: pixel ``i``'s centre
    lies at ``(i + 0.5) / factor - 0.5`` on the small grid, clamped to its edge pixels
    (OpenCV's ``INTER_LINEAR``); only the pixels asked for are made."""
    if cv2 is not None:
        rows, cols = small.shape
        return cv2.resize(small, (cols * factor, rows * factor), interpolation=cv2.INTER_LINEAR)[
            offset:offset + shape[0], offset:offset + shape[1]]
    out = small
    for axis, size in enumerate(shape):
        where = (xp.arange(offset, offset + size, dtype=xp.float32) + 0.5) / factor - 0.5
        where = xp.clip(where, 0, small.shape[axis] - 1)
        low = xp.floor(where).astype(xp.int64)
        high = xp.minimum(low + 1, small.shape[axis] - 1)
        weight = (where - low).astype(xp.float32).reshape(
            (-1,) + (1,) * (small.ndim - axis - 1))
        out = xp.take(out, low, axis=axis) * (1 - weight) + \
            xp.take(out, high, axis=axis) * weight
    return out


def _shrunk(grey, factor, reach, xp):
    """The block means (``factor`` a side) of ``grey`` with its edge pixels repeated
    ``reach`` pixels out (and to whole blocks), one axis at a time, the longest first (the
    padding and the mean along one axis commute with those along the others: the same values
    as padding the whole grey first, without a volume's padded copy)."""
    out = grey
    for axis in sorted(range(grey.ndim), key=lambda a: -grey.shape[a]):
        pads = [(0, 0)] * grey.ndim
        pads[axis] = (reach, reach + (-grey.shape[axis] % factor))
        out = xp.pad(out, pads, mode="edge")
        blocks = out.shape[:axis] + (out.shape[axis] // factor, factor) + out.shape[axis + 1:]
        out = out.reshape(blocks).mean(axis=axis + 1, dtype=xp.float32)
    return out


def local_mean(grey, block, xp=None):
    """The grey's Gaussian mean of sigma ``(block - 1) / 6`` pixels, border ``nearest``,
    computed on the grey averaged over :func:`shrink_factor` blocks (the grey's edge pixels
    repeated to fill the last ones) and read back bilinearly (:func:`_upsample`): at block 101
    within 0.2 % of the grey's range of the full filter on the development micrographs
    (tests/segmentation/test_local_split_fast.py), at a sixteenth of the work.

    Parameters
    ----------
    grey : array (H, W) or (D, H, W) of float32
        The grey intensity (NumPy or CuPy; any units).
    block : int
        The mean's window (pixels).

    Returns
    -------
    array of float32, the grey's shape, on its device (grey's units)
    """
    xp = array_module(grey) if xp is None else xp
    cv2 = _opencv(xp, grey)
    factor = shrink_factor(block)
    sigma = (int(block) - 1) / 6.0
    if factor == 1:
        if cv2 is not None and min(grey.shape) > int(4 * sigma + 0.5):
            from ._features_cpu import gaussian_weights

            weights = gaussian_weights(sigma, 0).astype(np.float32)
            return cv2.sepFilter2D(grey, cv2.CV_32F, weights, weights,
                                   borderType=cv2.BORDER_REPLICATE)
        return _ndimage(xp).gaussian_filter(grey, sigma, mode="nearest")
    # the grey's edge pixels repeated as far as the Gaussian reaches (SciPy's "nearest"
    # border, which the shrunk grey's own border would not give), to whole blocks
    reach = factor * (int(4.0 * sigma + 0.5) // factor + 1)
    if cv2 is not None:
        pads = tuple((reach, reach + (-size % factor)) for size in grey.shape)
        padded = cv2.copyMakeBorder(grey, pads[0][0], pads[0][1], pads[1][0], pads[1][1],
                                    cv2.BORDER_REPLICATE)
        small = cv2.resize(padded, (padded.shape[1] // factor, padded.shape[0] // factor),
                           interpolation=cv2.INTER_AREA)
    else:
        small = _shrunk(grey, factor, reach, xp)
    small = _ndimage(xp).gaussian_filter(xp.ascontiguousarray(small, dtype=xp.float32),
                                         sigma / factor, mode="nearest")
    return _upsample(small, factor, grey.shape, xp, cv2, offset=reach)


def nearby_peak(grey, radius, xp=None):
    """The largest grey, smoothed at :data:`PEAK_SIGMA` pixels (border ``reflect``), within
    ``radius`` pixels (a ``2 radius + 1`` square, border ``nearest``), in float32: OpenCV's
    separable filter with SciPy's weights and its dilation where installed, else SciPy's (or
    cupyx's) filters.

    Parameters
    ----------
    grey : array (H, W) or (D, H, W) of float32
        The grey intensity (NumPy or CuPy).
    radius : int
        The square's half side (pixels).

    Returns
    -------
    array of float32, the grey's shape, on its device
    """
    xp = array_module(grey) if xp is None else xp
    cv2 = _opencv(xp, grey)
    size = 2 * int(radius) + 1
    if cv2 is not None and min(grey.shape) > int(4 * PEAK_SIGMA + 0.5):
        from ._features_cpu import gaussian_weights

        weights = gaussian_weights(PEAK_SIGMA, 0).astype(np.float32)
        smooth = cv2.sepFilter2D(grey, cv2.CV_32F, weights, weights,
                                 borderType=cv2.BORDER_REFLECT)
        # a dilation's border is the image's own largest value nearby: SciPy's "nearest"
        return cv2.dilate(smooth, np.ones((size, size), np.uint8))
    ndimage = _ndimage(xp)
    return ndimage.maximum_filter(ndimage.gaussian_filter(grey, PEAK_SIGMA, mode="reflect"),
                                  size=size, mode="nearest")


def local_threshold(grey, *, block=BLOCK, radius=PEAK_RADIUS, share=PEAK_SHARE, sample=None):
    """The local threshold map of a grey image whose objects are its bright side (see the
    module's notes) and the image's global Otsu threshold; the local mean by
    :func:`local_mean`, the peak by :func:`nearby_peak`, in float32.

    Parameters
    ----------
    grey : array (H, W) of float
        The grey intensity (NumPy or CuPy; any units).
    block : int
        The local mean's window (pixels).
    radius : int
        The nearby peak's radius (pixels).
    share : float
        The share (0 to 1) of the way from the median to the nearby peak below which a pixel
        lies on the dark side.
    sample : array of float64, optional
        :func:`~._prior.grey_sample` of ``grey``, when the caller has it (None: taken here).

    Returns
    -------
    tuple
        ``(threshold, otsu)``: float32 array (H, W) on the grey's device (grey's units), at
        most ``otsu`` everywhere, and the global threshold (float).

    Examples
    --------
    >>> import numpy as np
    >>> grey = np.zeros((64, 64)); grey[4:28, 4:28] = 1.0; grey[40:46, 40:46] = 0.2
    >>> threshold, otsu = local_threshold(grey, block=21, radius=4)
    >>> bool((grey > threshold)[43, 43]), bool(grey[43, 43] > otsu)  # the dim square
    (True, False)
    >>> bool(threshold[29, 12] == np.float32(otsu))   # next to the bright one: Otsu's
    True
    """
    from skimage.filters import threshold_otsu

    xp = array_module(grey)
    grey = xp.ascontiguousarray(grey, dtype=xp.float32)
    if sample is None:
        sample = grey_sample(grey)
    otsu = float(threshold_otsu(sample))
    median = float(np.median(sample))
    threshold = nearby_peak(grey, radius, xp)           # median + share (peak - median)
    threshold *= np.float32(share)
    threshold += np.float32((1.0 - share) * median)
    xp.maximum(threshold, local_mean(grey, block, xp), out=threshold)
    # max with the floor halfway to the median, then min with Otsu's (numpy.clip's order)
    xp.clip(threshold, np.float32(0.5 * (otsu + median)), np.float32(otsu), out=threshold)
    return threshold, otsu


def local_bright_side(features, channels, *, block=BLOCK, radius=PEAK_RADIUS,
                      share=PEAK_SHARE):
    """The pixels on the bright side of the local split of the grey intensity smoothed at the
    first scale (bool (H, W), on the features' device): :func:`local_threshold` of the grey
    when Otsu's bright side is at most half the image, else of the negated grey (the objects
    dark), its object side then the dark side.

    Parameters
    ----------
    features : array (H, W, F)
        :func:`~graphcut.models._features.pixel_features` of an image (NumPy or CuPy).
    channels : int
        The image's channel count (the ``gauss*@1`` columns are ``channels .. 2 channels``).
    block, radius, share
        :func:`local_threshold`'s.

    Returns
    -------
    array (H, W) of bool

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.models._features import pixel_features
    >>> values = np.full((64, 64, 1), 0.9, np.float32)            # bright background
    >>> values[8:16, 8:16], values[40:48, 40:48] = 0.0, 0.6       # a dark and a pale nucleus
    >>> bright = local_bright_side(pixel_features(values, scales=(1.0,)), 1, block=21)
    >>> bool(bright[2, 2]), bool(bright[12, 12]), bool(bright[44, 44])
    (True, False, False)
    """
    from skimage.filters import threshold_otsu

    xp = array_module(features)
    if channels == 1:
        grey = xp.ascontiguousarray(features[..., 1], dtype=xp.float32)
    else:
        grey = features[..., channels:2 * channels].mean(axis=-1, dtype=xp.float32)
    sample = grey_sample(grey)  # one copy from a GPU, for both splits
    otsu = float(threshold_otsu(sample))
    if float((grey > otsu).mean()) <= 0.5:  # the objects are the bright side
        return grey > local_threshold(grey, block=block, radius=radius, share=share,
                                      sample=sample)[0]
    return ~(-grey > local_threshold(-grey, block=block, radius=radius, share=share,
                                     sample=-sample)[0])


__all__ = ["BLOCK", "PEAK_RADIUS", "PEAK_SHARE", "PEAK_SIGMA", "SHRINK", "SHRUNK_SIGMA",
           "local_bright_side", "local_mean", "local_threshold", "nearby_peak",
           "shrink_factor"]
