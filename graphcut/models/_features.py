"""Per-pixel features for the learned appearance model: a small bank of multi-scale filters.

The bank is the one ilastik and scikit-image's ``multiscale_basic_features`` popularised,
computed with the same formulas on the CPU (NumPy / SciPy, or OpenCV's filters where
installed: :mod:`graphcut.models._features_cpu`, a faster path for NumPy arrays) and on the
GPU (CuPy / ``cupyx.scipy.ndimage``: :func:`generic_pixel_features`), once per image:

- every channel's own value (colour: R, G, B; grey: the intensity);
- for each scale ``s`` of :data:`DEFAULT_SCALES` (pixels, the Gaussian's standard deviation):
  every channel smoothed with a Gaussian of ``s``; and, of the grey intensity (the channels'
  mean), the gradient magnitude ``s * |grad G_s * I|``, and the two (three in a volume)
  eigenvalues of the Hessian ``s^2 * H(G_s * I)`` (whose sum is the Laplacian of Gaussian),
  all scale-normalised so that one structure gives similar numbers at every scale.

Features are then standardised over the image (each one minus its mean over the pixels,
divided by its standard deviation, a constant feature left at 0; above
:data:`STATISTICS_PIXELS` pixels the statistics come from a regular subsample of them), so that a classifier's
regularisation means the same on dark 16-bit fluorescence and on bright photographs.

The spatial axes are all axes but the last: ``values`` is ``(H, W, C)`` or ``(D, H, W, C)``
(float, e.g. :func:`graphcut.energy.image_as_float`). Borders are mirrored (``"reflect"``).
The result is float32 ``(*spatial, F)`` on the values' device; :func:`feature_names` says
what each of the ``F`` columns is.
"""

from __future__ import annotations

from graphcut._arrays import array_module

#: Gaussian scales (pixels) of the filter bank (chosen on bench/bench_quality.py's dev split)
DEFAULT_SCALES = (1.0, 2.0, 4.0, 8.0)
#: pixels at most whose statistics standardise a feature (a regular subsample: every k-th
#: pixel in memory order; all of them up to this size)
STATISTICS_PIXELS = 1 << 20


def _ndimage(xp):
    if xp.__name__ == "numpy":
        from scipy import ndimage
    else:  # cupy
        from cupyx.scipy import ndimage
    return ndimage


def feature_names(channels: int, dims: int = 2, scales=DEFAULT_SCALES) -> list[str]:
    """Names of the columns of :func:`pixel_features` for ``channels`` channels and ``dims``
    spatial axes.

    Examples
    --------
    >>> feature_names(1, scales=(1.0,))
    ['value0', 'gauss0@1', 'gradient@1', 'hessian0@1', 'hessian1@1']
    """
    names = [f"value{c}" for c in range(channels)]
    for s in scales:
        names += [f"gauss{c}@{s:g}" for c in range(channels)]
        names.append(f"gradient@{s:g}")
        names += [f"hessian{i}@{s:g}" for i in range(dims)]
    return names


#: 3x3 Hessians whose eigenvalues are found in one batched call at most (volumes)
EIGEN_CHUNK = 1 << 16


def _hessian_eigenvalues(xp, ndimage, grey, sigma):
    """Eigenvalues (ascending) of ``sigma^2 * Hessian(G_sigma * grey)``, a list of arrays."""
    dims = grey.ndim
    second = {}
    for i in range(dims):
        for j in range(i, dims):
            order = [0] * dims
            order[i] += 1
            order[j] += 1
            second[i, j] = ndimage.gaussian_filter(grey, sigma, order=order,
                                                   mode="reflect") * (sigma * sigma)
    if dims == 2:  # closed form: (a + c) / 2 -+ sqrt(((a - c) / 2)^2 + b^2)
        a, b, c = second[0, 0], second[0, 1], second[1, 1]
        mean = (a + c) * 0.5
        root = xp.sqrt(((a - c) * 0.5) ** 2 + b * b)
        return [mean - root, mean + root]
    matrix = xp.empty(grey.shape + (dims, dims), dtype=grey.dtype)
    for (i, j), value in second.items():
        matrix[..., i, j] = value
        matrix[..., j, i] = value
    flat = matrix.reshape(-1, dims, dims)
    eigen = xp.empty(flat.shape[:2], dtype=flat.dtype)
    for start in range(0, flat.shape[0], EIGEN_CHUNK):  # cuSOLVER's batched solver refuses
        eigen[start:start + EIGEN_CHUNK] = xp.linalg.eigvalsh(flat[start:start + EIGEN_CHUNK])
    eigen = eigen.reshape(grey.shape + (dims,))  # (128^3 matrices at once: INVALID_VALUE)
    return [eigen[..., k] for k in range(dims)]


def pixel_features(values, *, scales=DEFAULT_SCALES, standardise=True):
    """The filter bank of this module for every pixel (or voxel) of ``values``.

    Parameters
    ----------
    values : array (H, W, C) or (D, H, W, C), float
        The image with its channels last (NumPy or CuPy); e.g.
        :func:`graphcut.energy.image_as_float` of an image, any value range.
    scales : tuple of float
        Gaussian standard deviations in pixels, each > 0.
    standardise : bool
        Subtract each feature's mean over the image and divide by its standard deviation.

    Returns
    -------
    array (*spatial, F), float32
        On the values' device; column ``k`` is ``feature_names(C, ndim)[k]``.

    Raises
    ------
    ValueError
        ``values`` has fewer than 3 dimensions, or a scale is not > 0.

    Examples
    --------
    >>> import numpy as np
    >>> pixel_features(np.random.default_rng(0).random((32, 40, 3))).shape
    (32, 40, 27)
    """
    if values.ndim < 3:
        raise ValueError(f"values must be (H, W, C) or (D, H, W, C), got shape {values.shape}")
    if not scales or any(not float(s) > 0 for s in scales):
        raise ValueError(f"scales must be numbers > 0, got {scales!r}")
    xp = array_module(values)
    if xp.__name__ == "numpy":  # the same features, faster: _features_cpu's docstring
        from graphcut.models._features_cpu import cpu_pixel_features
        return cpu_pixel_features(values, tuple(float(s) for s in scales), standardise,
                                  STATISTICS_PIXELS)
    return generic_pixel_features(values, scales=scales, standardise=standardise)


def generic_pixel_features(values, *, scales=DEFAULT_SCALES, standardise=True):
    """:func:`pixel_features` in array-module-generic code: what CuPy runs, and the reference
    that the CPU's fast path (:mod:`graphcut.models._features_cpu`) is tested against.

    Parameters
    ----------
    values : array (H, W, C) or (D, H, W, C), float
        NumPy or CuPy; checked by :func:`pixel_features`.
    scales : tuple of float
        Gaussian standard deviations in pixels, each > 0.
    standardise : bool
        Subtract each feature's mean over the image and divide by its standard deviation.

    Returns
    -------
    array (*spatial, F), float32
        As :func:`pixel_features`'s.
    """
    xp = array_module(values)
    ndimage = _ndimage(xp)
    values = xp.asarray(values, dtype=xp.float32)
    count = values.shape[-1]
    grey = values.mean(axis=-1)
    dims = grey.ndim
    features = xp.empty(grey.shape + (len(feature_names(count, dims, scales)),),
                        dtype=xp.float32)
    columns = iter(range(features.shape[-1]))

    def put(column):
        features[..., next(columns)] = column

    for c in range(count):
        put(values[..., c])
    for s in scales:
        s = float(s)
        for c in range(count):
            put(ndimage.gaussian_filter(values[..., c], s, mode="reflect"))
        squared = 0
        for axis in range(dims):
            order = [0] * dims
            order[axis] = 1
            squared = squared + ndimage.gaussian_filter(grey, s, order=order,
                                                        mode="reflect") ** 2
        put(xp.sqrt(squared) * s)
        for eigenvalue in _hessian_eigenvalues(xp, ndimage, grey, s):
            put(eigenvalue)
    if standardise:  # one column at a time: float64 statistics without a float64 copy
        flat = features.reshape(-1, features.shape[-1])
        stride = -(-flat.shape[0] // STATISTICS_PIXELS)  # a regular subsample of the pixels
        for k in range(features.shape[-1]):
            column = features[..., k]
            sample = flat[::stride, k]
            mean = float(sample.mean(dtype=xp.float64))
            std = float(sample.std(dtype=xp.float64))
            column -= mean
            if std > 1e-12:
                column /= std
    return features


_last = [None, None]   # (values, features) of the last image_features call


def image_features(values):
    """:func:`pixel_features` of ``values`` with the default scales, computed once per image:
    the features of the last ``values`` object passed are kept and returned again while the
    same object comes back (a :class:`graphcut.Segmenter` passes its image's values on every
    update, so a stroke re-trains the classifier without recomputing the filters).

    An equal array (same shape, dtype, device and values) counts as the same image, so
    repeated :func:`graphcut.segment` calls on one image compute its features once too.

    Parameters
    ----------
    values : array (H, W, C) or (D, H, W, C), float
        As for :func:`pixel_features`; must not be modified in place between calls.

    Returns
    -------
    array (*spatial, F), float32
        Standardised features on the values' device.
    """
    if _last[0] is not values and not _same(_last[0], values):
        _last[0], _last[1] = None, None  # drop the old image's features first (memory)
        _last[1] = pixel_features(values)
        _last[0] = values
    return _last[1]


def _same(kept, values) -> bool:
    if kept is None or kept.shape != values.shape or kept.dtype != values.dtype:
        return False
    if array_module(kept) is not array_module(values):
        return False
    return bool(array_module(values).array_equal(kept, values))
