"""The learned model's filter bank (:mod:`graphcut.models._features`) on the CPU, fast.

The same features as the array-generic path that CuPy runs (the same Gaussian-derivative
filters, scale normalisation, closed-form 2x2 eigenvalues and standardisation, in the same
float32 operations), computed for NumPy arrays with less time and memory traffic:

- with OpenCV installed (``opencv-python-headless``, optional: the ``fast`` extra) each filter
  is ``cv2.sepFilter2D`` with SciPy's own Gaussian-derivative weights and SciPy's
  ``"reflect"`` border (OpenCV's ``BORDER_REFLECT``), several times faster than
  ``scipy.ndimage.gaussian_filter``; without OpenCV (or on an image smaller than a kernel)
  SciPy's 1-D filters, the passes along the first axes shared between one image's filters;
- the image is done in strips of rows, each with its Gaussians' context rows (so that its
  rows get what filtering the whole image gives them): one strip per thread, or one strip's
  filters and bands on the threads (both libraries' filters release the GIL); a strip's
  features are written into the pixel-major feature array once, in cache-sized bands, and
  standardised in place afterwards, band by band;
- a volume's 3x3 Hessian eigenvalues in closed form (float64), not a batched ``eigvalsh``.

With SciPy's filters the result equals the generic path's bit for bit (2-D and 3-D); OpenCV's
filters sum in float32 (SciPy's in float64), which moves a feature by about 1e-5 of its
largest magnitude. A feature whose standard deviation is float32 rounding noise
(:data:`ROUNDING_FLOOR`) is left at 0, as the generic path leaves a constant one.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import ndimage

#: bytes of the feature array one band of rows spans in the band-by-band passes (cache-sized)
BAND_BYTES = 1 << 20
#: bytes of the feature array a strip of rows spans at most (its features are computed
#: together, then written once), unless the strip must be longer: at least four times the
#: widest Gaussian's reach (the context rows filtered with it)
STRIP_BYTES = 32 << 20
#: threads at most (one strip each at a time)
MAX_THREADS = 8
#: Gaussian standard deviations are truncated at this many sigmas (SciPy's default)
TRUNCATE = 4.0
#: a feature whose standard deviation over the image is at most this fraction of the image's
#: largest magnitude is float32 rounding noise (OpenCV's float32 sums make a constant image's
#: Hessians vary by ~1e-6 of its value) and is left at 0, as a constant feature is
ROUNDING_FLOOR = 1e-5


def _opencv():
    try:
        import cv2
    except ImportError:
        return None
    return cv2


def _thread_count() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


def gaussian_weights(sigma: float, order: int) -> np.ndarray:
    """SciPy's 1-D Gaussian-derivative weights as a correlation kernel (float64).

    ``scipy.ndimage.gaussian_filter1d(x, sigma, order=order)`` is the correlation of ``x``
    (its border extended) with these ``2 * int(4 * sigma + 0.5) + 1`` weights: they are read
    off SciPy's filter applied to a unit impulse, so they are SciPy's own.

    Parameters
    ----------
    sigma : float
        The Gaussian's standard deviation in pixels, > 0.
    order : int
        The derivative's order (0, 1 or 2).

    Returns
    -------
    numpy.ndarray (2 * radius + 1,), float64
        ``weights[k]`` multiplies the sample ``k - radius`` pixels away.

    Examples
    --------
    >>> w = gaussian_weights(1.0, 0)
    >>> w.shape, round(float(w.sum()), 6)
    ((9,), 1.0)
    """
    radius = int(TRUNCATE * float(sigma) + 0.5)
    impulse = np.zeros(2 * radius + 1)
    impulse[radius] = 1.0
    response = ndimage.gaussian_filter1d(impulse, sigma, order=order, mode="constant",
                                         truncate=TRUNCATE)
    return np.ascontiguousarray(response[::-1])


def _scipy_filters(image, sigma, jobs):
    """``target[...] = gaussian_filter(image, sigma, order=orders, mode="reflect")`` for each
    ``(orders, target)`` of ``jobs``, bit for bit: SciPy's filter is its 1-D filter along each
    axis in turn, in float32, so filters whose orders begin alike share those passes."""
    done = {(): image}
    for orders, target in jobs:
        for depth in range(1, len(orders) + 1):
            key = orders[:depth]
            if key not in done:
                out = target if depth == len(orders) else np.empty(image.shape, np.float32)
                ndimage.gaussian_filter1d(done[key[:-1]], sigma, axis=depth - 1,
                                          order=key[-1], output=out, mode="reflect",
                                          truncate=TRUNCATE)
                done[key] = out
        if done[orders] is not target:
            target[...] = done[orders]


def _filter(image, orders, output, sigma, cv2):
    """``output[...] = gaussian_filter(image, sigma, order=orders, mode="reflect")`` (float32,
    ``image`` and ``output`` C-contiguous), by OpenCV where it applies."""
    radius = int(TRUNCATE * sigma + 0.5)
    if cv2 is None or image.ndim not in (2, 3) or min(image.shape) <= radius:
        ndimage.gaussian_filter(image, sigma, order=list(orders), mode="reflect",
                                output=output, truncate=TRUNCATE)
        return
    kernels = [gaussian_weights(sigma, order).astype(np.float32) for order in orders]
    border = cv2.BORDER_REFLECT  # (c b a | a b c | c b a): SciPy's "reflect"
    if image.ndim == 2:
        cv2.sepFilter2D(image, cv2.CV_32F, kernels[1], kernels[0], dst=output,
                        borderType=border)
        return
    # a volume: along axis 0 as a (D, H * W) image, then each slice along its two axes
    depth = image.shape[0]
    cv2.sepFilter2D(image.reshape(depth, -1), cv2.CV_32F, np.ones(1, np.float32), kernels[0],
                    dst=output.reshape(depth, -1), borderType=border)
    slice_buffer = np.empty(image.shape[1:], np.float32)
    for z in range(depth):
        cv2.sepFilter2D(output[z], cv2.CV_32F, kernels[2], kernels[1], dst=slice_buffer,
                        borderType=border)
        output[z] = slice_buffer


def _derivative_orders(dims):
    """The grey image's filters of one scale: the gradient's ``dims`` first derivatives, then
    the Hessian's second derivatives ``(i, j)``, ``i <= j``, as per-axis derivative orders."""
    first, second = [], []
    for i in range(dims):
        order = [0] * dims
        order[i] = 1
        first.append(tuple(order))
        for j in range(i, dims):
            order = [0] * dims
            order[i] += 1
            order[j] += 1
            second.append(((i, j), tuple(order)))
    return first, second


def _eigenvalues_2x2(a, b, c, low):
    """Ascending eigenvalues of ``[[a, b], [b, c]]`` into ``low`` and ``a``, in the generic
    path's float32 operations (``b`` is overwritten; additions commute exactly)."""
    np.subtract(a, c, out=low)
    low *= 0.5
    np.square(low, out=low)
    np.multiply(b, b, out=b)
    b += low
    np.sqrt(b, out=b)             # the root
    a += c
    a *= 0.5                      # the mean of the eigenvalues
    np.subtract(a, b, out=low)
    a += b


def eigenvalues_3x3(h00, h01, h02, h11, h12, h22):
    """Ascending eigenvalues of symmetric 3x3 matrices, in closed form (float64).

    The trigonometric solution of the characteristic cubic (Smith, 1961): with
    ``q = trace / 3`` and ``p`` the root mean square of ``A - qI``'s entries times
    ``sqrt(3/2)``, the eigenvalues are ``q + 2 p cos(phi + 2 pi k / 3)``, where
    ``cos(3 phi) = det((A - qI) / p) / 2``.

    Parameters
    ----------
    h00, h01, h02, h11, h12, h22 : numpy.ndarray
        The matrices' upper triangles, one array per entry, all of one shape.

    Returns
    -------
    tuple of numpy.ndarray
        The three eigenvalues (smallest first), float64, of the entries' shape.

    Examples
    --------
    >>> low, mid, high = eigenvalues_3x3(*(np.array([v]) for v in (2., 0., 0., 3., 0., 1.)))
    >>> [round(float(x[0]), 12) for x in (low, mid, high)]
    [1.0, 2.0, 3.0]
    """
    a, b, c, d, e, f = (np.asarray(h, dtype=np.float64) for h in (h00, h01, h02, h11, h12, h22))
    q = (a + d + f) / 3.0
    a, d, f = a - q, d - q, f - q
    p = np.sqrt((a * a + d * d + f * f + 2.0 * (b * b + c * c + e * e)) / 6.0)
    flat = p <= 1e-300 * (1.0 + np.abs(q))  # a multiple of the identity: every eigenvalue q
    p_safe = np.where(flat, 1.0, p)
    determinant = (a * (d * f - e * e) - b * (b * f - e * c) + c * (b * e - d * c))
    r = np.clip(determinant / (2.0 * p_safe ** 3), -1.0, 1.0)
    r[flat] = 0.0
    phi = np.arccos(r) / 3.0
    p = np.where(flat, 0.0, p)
    high = q + 2.0 * p * np.cos(phi)
    low = q + 2.0 * p * np.cos(phi + 2.0 * math.pi / 3.0)
    middle = 3.0 * q - high - low
    ordered = np.sort(np.stack([low, middle, high]), axis=0)  # rounding may swap near-ties
    return ordered[0], ordered[1], ordered[2]


def cpu_pixel_features(values, scales, standardise, statistics_pixels):
    """The filter bank of :func:`graphcut.models._features.pixel_features` for a NumPy array.

    Parameters
    ----------
    values : numpy.ndarray (H, W, C) or (D, H, W, C)
        The image, channels last, any float or integer dtype (computed in float32).
    scales : sequence of float
        Gaussian standard deviations in pixels, each > 0 (checked by the caller).
    standardise : bool
        Subtract each feature's mean and divide by its standard deviation (both from every
        k-th pixel in memory order, at most ``statistics_pixels`` of them).
    statistics_pixels : int
        The most pixels whose values give a feature's mean and standard deviation.

    Returns
    -------
    numpy.ndarray (*spatial, F), float32
        Column ``k`` is ``feature_names(C, ndim)[k]``.

    Examples
    --------
    >>> cpu_pixel_features(np.ones((8, 9, 3)), (1.0,), True, 1 << 20).shape
    (8, 9, 9)
    """
    values = np.asarray(values)
    count, spatial = values.shape[-1], values.shape[:-1]
    total = count + len(scales) * (count + 1 + len(spatial))
    features = np.empty(spatial + (total,), dtype=np.float32)
    row_pixels = math.prod(spatial[1:])
    stride = -(-math.prod(spatial) // statistics_pixels)
    halo = max(int(TRUNCATE * s + 0.5) for s in scales)
    rows = max(1, STRIP_BYTES // max(1, row_pixels * total * 4), 4 * halo)
    strips = [(start, min(start + rows, spatial[0])) for start in range(0, spatial[0], rows)]
    band = max(1, BAND_BYTES // max(1, row_pixels * total * 4))
    sampling = stride if standardise else None
    cv2 = _opencv()
    threads = _thread_count()
    with ThreadPoolExecutor(threads) as pool:

        def in_parallel(work, items):
            return list(pool.map(work, items))

        def in_turn(work, items):
            return [work(item) for item in items]

        if len(strips) >= threads:  # a strip per thread
            samples = in_parallel(lambda strip: _strip(values, features, strip, scales, halo,
                                                       band, sampling, cv2, in_turn), strips)
        else:  # a strip at a time, its filters and bands on the threads
            samples = [_strip(values, features, strip, scales, halo, band, sampling, cv2,
                              in_parallel) for strip in strips]
        if standardise:
            sample = np.concatenate(samples, axis=1)
            floor = max(1e-12, ROUNDING_FLOOR * float(np.abs(sample[:count]).max(initial=0.0)))
            statistics = list(pool.map(lambda k: _mean_and_deviation(sample[k], floor),
                                       range(total)))
            means = np.array([mean for mean, _ in statistics], np.float32)
            deviations = np.array([deviation or 1.0 for _, deviation in statistics], np.float32)
            constant = [k for k, (_, deviation) in enumerate(statistics) if deviation is None]
            bands = [(start, min(start + band, spatial[0]))
                     for start in range(0, spatial[0], band)]
            list(pool.map(lambda rows: _standardise(features[slice(*rows)], means, deviations,
                                                    constant), bands))
    return features


def _strip(values, features, strip, scales, halo, band, stride, cv2, run_each):
    """Every feature of the rows ``strip = (first, stop)`` (raw, not standardised) into
    ``features``, filtering the strip with ``halo`` rows of context on either side (so that
    its rows are what filtering the whole image gives them); returns the strip's pixels of
    the statistics' subsample (every ``stride``-th pixel of the image), ``(F, n)`` float32
    (None if ``stride`` is None).
    ``run_each(work, items)`` runs the strip's filters and bands (in turn or on threads)."""
    first, stop = strip
    spatial = values.shape[:-1]
    count, dims = values.shape[-1], len(spatial)
    low, high = max(0, first - halo), min(spatial[0], stop + halo)
    part = np.asarray(values[low:high], dtype=np.float32)
    grey = _channel_mean(part)
    channels = [grey] if count == 1 else [np.ascontiguousarray(part[..., c])
                                          for c in range(count)]
    derivatives, second = _derivative_orders(dims)
    per_scale = count + 1 + dims
    store = np.empty((count + len(scales) * per_scale, stop - first) + spatial[1:], np.float32)
    store[:count] = np.moveaxis(part[first - low:stop - low], -1, 0)
    # per scale: the C smoothed channels, the dims first derivatives, the second ones; then
    # the scale's C + 1 + dims columns are the first buffers (see _finish_scale)
    buffers = np.empty((count + dims + len(second), high - low) + spatial[1:], np.float32)
    for number, sigma in enumerate(float(s) for s in scales):
        reach = int(TRUNCATE * sigma + 0.5)  # this scale's context rows, within the strip's
        start, end = max(low, first - reach) - low, min(high, stop + reach) - low
        jobs = [(image, (0,) * dims, c) for c, image in enumerate(channels)]
        jobs += [(grey, order, count + k) for k, order in enumerate(derivatives)]
        jobs += [(grey, order, count + dims + k) for k, (_, order) in enumerate(second)]
        jobs = [(image[start:end], orders, buffers[target, start:end])
                for image, orders, target in jobs]
        if cv2 is not None:
            run_each(lambda job: _filter(*job, sigma, cv2), jobs)
        else:  # SciPy: the passes along the first axes shared between an image's filters
            groups = {}
            for image, orders, target in jobs:
                groups.setdefault(id(image.base), (image, []))[1].append((orders, target))
            run_each(lambda group: _scipy_filters(group[0], sigma, group[1]),
                     list(groups.values()))
        hessian = {pair: buffers[count + dims + k] for k, (pair, _) in enumerate(second)}
        gradient = buffers[count:count + dims]
        run_each(lambda row: _finish_scale((row, min(row + band, stop - low)), sigma, gradient,
                                           hessian), range(first - low, stop - low, band))
        column = count + number * per_scale
        store[column:column + per_scale] = buffers[:per_scale, first - low:stop - low]
    for row in range(0, stop - first, band):  # pixel-major, a cache-sized band at a time
        end = min(row + band, stop - first)
        features[first + row:first + end] = np.moveaxis(store[:, row:end], 0, -1)
    if stride is None:
        return None
    offset = (-first * math.prod(spatial[1:])) % stride
    return store.reshape(store.shape[0], -1)[:, offset::stride].copy()


def _channel_mean(part):
    """``part.mean(axis=-1)``, C-contiguous, bit for bit: below 8 channels NumPy's sum is the
    channels added in turn (its pairwise sum starts at 8), here without a reduction's small
    inner loops (~10x faster for 3 channels)."""
    count = part.shape[-1]
    if count >= 8:
        return np.ascontiguousarray(part.mean(axis=-1))
    total = part[..., 0].copy()
    for c in range(1, count):
        total += part[..., c]
    total /= count
    return total


def _mean_and_deviation(sample, floor):
    """A feature's mean and standard deviation over its sample (float64, as the generic path
    computes them); the deviation is None for a constant feature (at most ``floor``)."""
    mean = float(sample.mean(dtype=np.float64))
    deviation = float(sample.std(dtype=np.float64))
    return mean, (deviation if deviation > floor else None)


def _standardise(block, means, deviations, constant):
    """``(block - means) / deviations`` in place (the generic path's float32 operations), the
    constant features set to 0."""
    block -= means
    block /= deviations
    if constant:
        block[..., constant] = 0.0


def _finish_scale(rows, sigma, gradient, hessian):
    """For the rows ``rows`` of one scale: the gradient magnitude into ``gradient[0]`` and the
    Hessian's eigenvalues (ascending) into the next ``dims`` buffers (``gradient[1:]``, then
    ``hessian[0, 0]``), so that a scale's columns are consecutive buffers."""
    part = slice(*rows)
    magnitude = gradient[0][part]
    np.square(magnitude, out=magnitude)
    for other in gradient[1:]:
        piece = other[part]
        np.square(piece, out=piece)
        magnitude += piece
    np.sqrt(magnitude, out=magnitude)
    magnitude *= sigma
    for entry in hessian.values():
        entry[part] *= sigma * sigma
    if len(gradient) == 2:
        _eigenvalues_2x2(hessian[0, 0][part], hessian[0, 1][part], hessian[1, 1][part],
                         gradient[1][part])
        return
    entries = [hessian[pair][part] for pair in ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))]
    low, middle, high = eigenvalues_3x3(*entries)
    gradient[1][part] = low
    gradient[2][part] = middle
    hessian[0, 0][part] = high


