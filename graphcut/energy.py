"""The Boykov-Jolly segmentation energy as a 4-connected :class:`GridNetwork`.

Energy of a labelling L (object / background) of the pixels:

    E(L) = sum_p R_p(L_p) + lam * sum_{p~q, L_p != L_q} w_pq

- regional term R_p: ``-log P(I_p | object)`` or ``-log P(I_p | background)``, from smoothed
  colour histograms of the seeded pixels (:func:`regional_costs`), in nats;
- boundary term: ``w_pq = exp(-||I_p - I_q||^2 / (2 sigma^2))`` for 4-neighbours
  (:func:`nlink_weights`), in (0, 1];
- hard constraints: seeded pixels are pinned to their label.

As a flow network (source s = object, sink t = background): the n-link p <-> q has capacity
``lam * w_pq`` both ways, s -> p has ``R_p(background)`` and p -> t has ``R_p(object)``, and the
minimum cut's source side is the object. Object seeds get s -> p = K_p and p -> t = 0,
background seeds the reverse, with K_p = 1 + the sum of p's n-link capacities: cutting s -> p
would then always cost more than cutting every n-link around p, so p stays on the source
side in every minimum cut, and K_p is bounded by 1 + 4 * max n-link capacity (no overflow).

Capacities are integers: every float capacity is multiplied by ``scale`` and rounded, so a
capacity is within ``0.5 / scale`` of its float value (``scale`` = 1000: 0.0005 nats). The
maximum flow divided by ``scale`` is then the minimum energy. Capacities above the int32 limit
raise a ValueError that says which term overflowed.

Every function here takes NumPy or CuPy arrays and answers on the image's device. On the GPU
each step is a kernel of ``segmentation/energy_kernels.cu`` (shipped precompiled, loaded by the
package's one CUDA loader; host code in ``graphcut.segmentation.energy_kernels``) with the same
float64 formulas, so a machine's first segmentation does not wait for NVRTC to compile CuPy's
element-wise kernels and does not import CuPy's SciPy extras; the small per-cell colour tables
are computed on the host with NumPy, exactly as on the CPU.

Images: grey (H, W), or (H, W, C) with C = 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA);
alpha is ignored. ``channel_axis`` names the channel axis of a 3-D array (scikit-image
convention); 2-D arrays are always grey. Volumes: grey (D, H, W) with ``channel_axis=None`` (or
seeds of the same shape, which say there is no channel axis), or (D, H, W, C); they get the
6-connected grid, and ``spacing=(dz, dy, dx)`` weighs the n-links along each axis by
``min(spacing) / spacing[axis]`` (anisotropic voxels: slices further apart are tied less).
Integer images are scaled to [0, 1] by their dtype's maximum (uint8 by 255, uint16 by 65535),
bool to 0 / 1, float images are used as they are and must be finite. Inputs are never modified.
"""

from __future__ import annotations

import math

import numpy as np

from .seeds import BACKGROUND, FOREGROUND, check_seeds
from .solver import GridNetwork
from .solver.networks import axis_slice

INT32_MAX = int(np.iinfo(np.int32).max)

# Default weight of the boundary term against the regional term. Chosen on the bundled samples
# (5 to 20 give clean masks there, 1 leaves speckle) and on noisy synthetic discs, where the
# IoU with the truth peaks around 10 and collapses above ~40 at strong noise (the cut shrinks
# to the seeds). See docs/segment.md.
DEFAULT_LAM = 10.0
# Float capacities are multiplied by this and rounded to integers.
DEFAULT_SCALE = 1000.0
# Histogram bins per channel when ``bins`` is None.
DEFAULT_GREY_BINS = 64
DEFAULT_COLOUR_BINS = 16
# Weight of the uniform distribution mixed into each colour model, so that colours never seen
# among the seeds get a finite cost (the same for both models).
UNIFORM_WEIGHT = 0.01
# Passes of the [1, 2, 1] / 4 binomial filter smoothing each histogram axis.
SMOOTHING_PASSES = 2
# Smallest sigma accepted: below it, 2 * sigma**2 is no longer a normal float (it underflows
# towards 0 and the boundary weights cannot be computed).
SIGMA_MIN = 1e-150


def array_module(*arrays):
    """``cupy`` when any of ``arrays`` is a CuPy array, else ``numpy``."""
    for array in arrays:
        if type(array).__module__.split(".")[0] == "cupy":
            import cupy
            return cupy
    return np


def _gpu():
    """The GPU energy kernels' host code (imported only for CuPy arrays)."""
    import graphcut.segmentation.energy_kernels as energy_kernels
    return energy_kernels


def _same_device(array, like):
    """``array`` moved to the device of ``like`` (host <-> GPU) when it is elsewhere."""
    xp = array_module(like)
    if array_module(array) is xp:
        return array
    return xp.asarray(array) if xp is not np else array.get()


def image_as_float(image, *, channel_axis=-1):
    """The image as float64 (H, W, C) with C = 1 (grey) or 3 (colour), alpha dropped.

    Integers are divided by their dtype's maximum, bool becomes 0 / 1, floats are kept as they
    are (and must be finite). The result is a new array on the image's device.

    Raises
    ------
    TypeError
        unsupported dtype (complex, object, ...).
    ValueError
        wrong number of dimensions or channels, empty image, NaN or infinity.
    """
    xp = array_module(image)
    image = xp.asarray(image)
    kind = image.dtype.kind
    if kind not in "biuf":
        raise TypeError(f"image must hold bool, integer or float values, got dtype {image.dtype}")
    if image.ndim == 2 or (image.ndim == 3 and channel_axis is None):
        image = image[..., None]  # grey image, or grey volume
    elif image.ndim in (3, 4):
        if channel_axis is None:
            raise ValueError(f"a 4-D image (shape {image.shape}) needs channel_axis; got None")
        try:
            image = xp.moveaxis(image, channel_axis, -1)
        except (IndexError, ValueError):  # numpy's AxisError is both
            raise ValueError(f"channel_axis={channel_axis} is out of range for an image of "
                             f"shape {image.shape}") from None
    else:
        raise ValueError(f"image must be (H, W) grey, (H, W, C) colour, (D, H, W) grey volume "
                         f"or (D, H, W, C) colour volume, got shape {image.shape}")
    channels = image.shape[-1]
    if channels not in (1, 2, 3, 4):
        hint = (" (a grey volume? pass channel_axis=None)" if image.ndim == 3 else "")
        raise ValueError(f"image has {channels} channels; expected 1 (grey), 2 (grey + alpha), "
                         f"3 (RGB) or 4 (RGBA){hint}")
    if 0 in image.shape[:-1]:
        raise ValueError(f"image is empty (shape {image.shape[:-1]})")
    image = image[..., :1] if channels in (1, 2) else image[..., :3]
    if xp is not np:
        divisor = float(np.iinfo(image.dtype).max) if kind in "iu" else 0.0
        values, nonfinite = _gpu().image_to_float(image, divisor)
        if nonfinite:
            raise ValueError("image contains NaN or infinite values; float images must be "
                             "finite")
        return values
    if kind == "f":
        finite = xp.isfinite(image)  # checked with a uint8 min: a reduction CuPy runs precompiled
        if finite.size and int(finite.view(xp.uint8).min()) == 0:
            raise ValueError("image contains NaN or infinite values; float images must be finite")
        return image.astype(xp.float64)
    if kind == "b":
        return image.astype(xp.float64)
    return image.astype(xp.float64) / float(np.iinfo(image.dtype).max)


def _squared_differences(values):
    """Sums over channels of squared differences to the next neighbour along each spatial
    axis of ``values`` (..., C), last axis first: ``(right, down)`` for an image, ``(x, y, z)``
    neighbours for a volume."""
    spatial = values.ndim - 1
    return tuple(((values[axis_slice(spatial, axis, 1, None)]
                   - values[axis_slice(spatial, axis, 0, -1)]) ** 2).sum(axis=-1)
                 for axis in reversed(range(spatial)))


def _sigma_from_differences(*differences) -> float:
    return _sigma_from_sums([float(d.sum()) for d in differences],
                            sum(d.size for d in differences))


def _sigma_from_sums(sums, count: int) -> float:
    """sigma from the sums of the squared-difference arrays and their total size."""
    mean = sum(sums) / count if count else 0.0
    if not math.isfinite(mean):  # finite values near 1e300: their squared differences overflow
        raise ValueError("the image's values are too large to estimate sigma from: the squared "
                         "differences between neighbours overflow float64 (values of magnitude "
                         "up to about 1e150 work); scale the image, e.g. to 0..1")
    return max(math.sqrt(mean), SIGMA_MIN) if mean > 0.0 else 1.0


def estimate_sigma(image, *, channel_axis=-1) -> float:
    """sigma used by :func:`nlink_weights` when none is given.

    The root mean square of the colour differences between all 4-neighbour (6-neighbour in a
    volume) pairs (image
    scaled as in :func:`image_as_float`), so that a typical neighbour pair gets the weight
    exp(-1/2). This is GrabCut's choice (Rother et al. 2004, beta = 1 / (2 <d^2>)). A constant
    image gives 1.0.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import estimate_sigma
    >>> estimate_sigma(np.full((4, 4), 7, np.uint8))
    1.0
    >>> estimate_sigma(np.array([[0, 255], [0, 255]], np.uint8))   # RMS of 0, 0, 1, 1
    0.7071067811865476
    """
    values = image_as_float(image, channel_axis=channel_axis)
    if array_module(values) is not np:
        differences, sums = _gpu().squared_differences(values)
        return _sigma_from_sums(sums, sum(d.size for d in differences))
    return _sigma_from_differences(*_squared_differences(values))


def _check_positive(name: str, value) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def check_sigma(sigma) -> float:
    """``sigma`` as a float, or a ValueError unless it is finite and at least SIGMA_MIN."""
    sigma = _check_positive("sigma", sigma)
    if sigma < SIGMA_MIN:
        raise ValueError(f"sigma must be at least {SIGMA_MIN:g}, got {sigma:g}: the boundary "
                         "weights exp(-d**2 / (2 sigma**2)) cannot be computed for smaller "
                         "values (2 sigma**2 underflows)")
    return sigma


def _spacing_factors(spacing, spatial: int):
    """min(spacing) / spacing[axis] per axis, last axis first (the order of the n-links)."""
    if spacing is None:
        return (1.0,) * spatial
    spacing = tuple(float(v) for v in spacing)
    if len(spacing) != spatial or not all(math.isfinite(v) and v > 0.0 for v in spacing):
        raise ValueError(f"spacing must be {spatial} finite numbers > 0 (one per spatial axis, "
                         f"{'(dz, dy, dx)' if spatial == 3 else '(dy, dx)'}), got {spacing}")
    return tuple(min(spacing) / v for v in reversed(spacing))


def _nlink_weights(values, sigma, spacing=None):
    xp = array_module(values)
    factors = _spacing_factors(spacing, values.ndim - 1)
    if xp is not np:
        differences, sums = _gpu().squared_differences(values)
        if sigma is None:
            sigma = _sigma_from_sums(sums, sum(d.size for d in differences))
        sigma = check_sigma(sigma)
        exponent = -1.0 / (2.0 * sigma * sigma)
        return tuple(_gpu().exp_weights(d, exponent, f) for d, f in zip(differences, factors))
    differences = _squared_differences(values)
    if sigma is None:
        sigma = _sigma_from_differences(*differences)
    sigma = check_sigma(sigma)
    exponent = -1.0 / (2.0 * sigma * sigma)
    return tuple(xp.exp(d * exponent) * f if f != 1.0 else xp.exp(d * exponent)
                 for d, f in zip(differences, factors))


def nlink_weights(image, *, sigma=None, channel_axis=-1, spacing=None):
    """Boundary weights of the 4-neighbour pairs (6-neighbour in a volume):
    ``exp(-||I_p - I_q||^2 / (2 sigma^2))``, times ``min(spacing) / spacing[axis]``.

    Parameters
    ----------
    image
        see the module docstring; intensities scaled to [0, 1] for integer images.
    sigma
        the colour difference (in those units) at which the weight is exp(-1/2);
        ``None``: :func:`estimate_sigma`.
    channel_axis
        the channel axis of a 3-D image (``None``: a grey volume).
    spacing
        pixel (voxel) size along each axis, ``(dy, dx)`` or ``(dz, dy, dx)``;
        ``None``: isotropic.

    Returns
    -------
    tuple of numpy.ndarray
        One float64 array per axis, last axis first, in (0, 1]: for an image ``(right,
        down)``: ``right[y, x]`` weights the pair (y, x) - (y, x+1), shape (H, W-1);
        ``down[y, x]`` the pair (y, x) - (y+1, x), (H-1, W). For a volume ``(right, down,
        next_slice)``, the last weighing (z, y, x) - (z+1, y, x), shape (D-1, H, W).

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import nlink_weights
    >>> right, down = nlink_weights(np.array([[0, 0, 255]], np.uint8), sigma=0.5)
    >>> right                    # equal neighbours: 1; black to white: exp(-1 / (2 * 0.5**2))
    array([[1.        , 0.13533528]])
    >>> down.shape               # a single row has no vertical pairs
    (0, 3)
    """
    return _nlink_weights(image_as_float(image, channel_axis=channel_axis), sigma, spacing)


def _smooth(histogram, passes: int):
    """[1, 2, 1] / 4 binomial smoothing along every axis, ``passes`` times, zero outside."""
    xp = array_module(histogram)
    everything = (slice(None),) * histogram.ndim
    for axis in range(histogram.ndim):
        head = everything[:axis] + (slice(None, -1),)   # all but the last cell along axis
        tail = everything[:axis] + (slice(1, None),)    # all but the first
        for _ in range(passes):
            lower, upper = xp.zeros_like(histogram), xp.zeros_like(histogram)
            lower[tail] = histogram[head]   # the neighbour before, 0 outside
            upper[head] = histogram[tail]   # the neighbour after
            histogram = 0.25 * lower + 0.5 * histogram + 0.25 * upper
    return histogram


def _bin_indices(values, bins: int):
    """Joint histogram cell of every pixel, int64 (H, W) (or (D, H, W)); channels quantised
    over the image's own per-channel range into ``bins`` equal bins."""
    xp = array_module(values)
    if xp is not np:
        return _gpu().bin_cells(values, bins)  # int32
    spatial_axes = tuple(range(values.ndim - 1))
    low = values.min(axis=spatial_axes)
    high = values.max(axis=spatial_axes)
    span = xp.where(high > low, high - low, 1.0)
    quantised = xp.clip(xp.floor((values - low) / span * bins), 0, bins - 1).astype(xp.int64)
    index = quantised[..., 0]
    for channel in range(1, values.shape[-1]):
        index = index * bins + quantised[..., channel]
    return index


def _cost_table(counts, shape):
    """-log P(cell | model) of every histogram cell (flat), for the model with these cell
    ``counts`` (float64, flat): smoothed, normalised, mixed with ``UNIFORM_WEIGHT`` uniform."""
    xp = array_module(counts)
    cells = counts.size
    smoothed = _smooth(counts.reshape(shape), SMOOTHING_PASSES).reshape(-1)
    probability = ((1.0 - UNIFORM_WEIGHT) * smoothed / smoothed.sum()
                   + UNIFORM_WEIGHT / cells)
    return -xp.log(probability)


def _colour_model_costs(index, selected, cells: int, shape):
    """-log P(cell | model) per pixel, for the model estimated from the pixels ``selected``."""
    xp = array_module(index)
    counts = xp.bincount(index[selected], minlength=cells).astype(xp.float64)
    return xp.take(_cost_table(counts, shape), index)


def _check_bins(bins, channels: int) -> int:
    if bins is None:
        return DEFAULT_GREY_BINS if channels == 1 else DEFAULT_COLOUR_BINS
    if isinstance(bins, bool) or int(bins) != bins or not 2 <= bins <= 256:
        raise ValueError(f"bins must be an integer from 2 to 256, got {bins!r}")
    return int(bins)


def _regional_costs(values, seeds, bins):
    channels = values.shape[-1]
    bins = _check_bins(bins, channels)
    index = _bin_indices(values, bins)
    shape = (bins,) * channels
    cells = bins ** channels
    if array_module(values) is not np:  # per-cell tables on the host, one lookup per pixel
        import cupy
        counts = _gpu().seed_histograms(index, seeds, cells).astype(np.float64)
        return tuple(_gpu().lookup_costs(cupy.asarray(_cost_table(row, shape)), index)
                     for row in counts)
    cost_object = _colour_model_costs(index, seeds == FOREGROUND, cells, shape)
    cost_background = _colour_model_costs(index, seeds == BACKGROUND, cells, shape)
    return cost_object, cost_background


def regional_costs(image, seeds, *, bins=None, channel_axis=-1):
    """Per-pixel costs of the object and background labels from the seeds' colour statistics.

    Each model is a histogram of the seeded pixels' colours (joint over R, G, B for colour
    images), smoothed with a binomial filter and mixed with 1 % of a uniform distribution;
    the cost of a label is ``-log P(bin of I_p | model)`` in nats (at most about
    ``log(bins ** channels / 0.01)``).

    Parameters
    ----------
    image
        see the module docstring.
    seeds
        (H, W) (or (D, H, W)) labels, 0 none, 1 object, 2 background; both labels must
        be present.
    bins
        histogram bins per channel, over the image's own range of each channel
        (``None``: 64 for grey, 16 for colour images).
    channel_axis
        the channel axis of a 3-D image.

    Returns
    -------
    tuple of numpy.ndarray
        ``(cost_object, cost_background)``, float64 (H, W) (or (D, H, W)) each.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import regional_costs
    >>> image = np.array([[0, 0, 200, 200]], np.uint8)
    >>> seeds = np.array([[2, 0, 0, 1]], np.uint8)
    >>> cost_object, cost_background = regional_costs(image, seeds)
    >>> bool(cost_object[0, 2] < cost_background[0, 2])     # bright: cheaper as object
    True
    >>> bool(cost_object[0, 1] > cost_background[0, 1])     # dark: cheaper as background
    True
    """
    values = image_as_float(image, channel_axis=spatial_channel_axis(image, seeds, channel_axis))
    seeds = _check_seeds_for(values, seeds)
    return _regional_costs(values, seeds, bins)


def quantize(values, *, scale=DEFAULT_SCALE, what="capacities"):
    """``rint(values * scale)`` as int32, or a ValueError naming ``what`` when a value leaves
    the int32 range (or is negative or not finite)."""
    xp = array_module(values)
    scale = _check_positive("scale", scale)
    if xp is not np and values.dtype == np.float64 and values.flags.c_contiguous:
        return quantize_weights(values, 1.0, scale=scale, what=what)  # one kernel
    scaled = xp.rint(xp.asarray(values, dtype=xp.float64) * scale)
    if scaled.size:
        low, high = float(scaled.min()), float(scaled.max())
        if not (math.isfinite(low) and math.isfinite(high)) or low < 0:
            raise ValueError(f"{what} must be finite and >= 0 (got values from {low} to {high})")
        if high > INT32_MAX:
            raise ValueError(f"{what} reach {high:.0f} after scaling by scale={scale:g}, above "
                             f"the int32 limit {INT32_MAX}; lower lam or scale")
    return scaled.astype(xp.int32)


def quantize_weights(weights, lam, *, scale=DEFAULT_SCALE, what="capacities"):
    """``quantize(lam * weights, scale=scale, what=what)``, on the GPU in one kernel (the same
    float64 products, no temporary array)."""
    if array_module(weights) is np:
        return quantize(lam * weights, scale=scale, what=what)
    scale = _check_positive("scale", scale)
    if weights.dtype != np.float64 or not weights.flags.c_contiguous:
        raise TypeError("quantize on the GPU takes C-contiguous float64 arrays, got "
                        f"{weights.dtype}")
    out, high, bad = _gpu().quantize(weights, float(lam), scale)
    if bad:  # the message wants the range: found on the host (an error path)
        quantize(lam * weights.get(), scale=scale, what=what)
    if high is not None and high > INT32_MAX:
        raise ValueError(f"{what} reach {high:.0f} after scaling by scale={scale:g}, above "
                         f"the int32 limit {INT32_MAX}; lower lam or scale")
    return out


def terminal_capacities(cost_object, cost_background, nlink_caps, seeds, *,
                        scale=DEFAULT_SCALE):
    """Integer source and sink capacities: regional costs plus hard constraints for the seeds.

    This is the cheap part of :func:`build_network` that depends on the seeds; a caller whose
    seeds change can keep the n-link capacities and the image and rebuild only this.

    Parameters
    ----------
    cost_object, cost_background
        float (H, W) (or (D, H, W)) costs
        (:func:`regional_costs`), in nats.
    nlink_caps
        ``(right, down)`` integer n-link capacities, (H, W-1) and (H-1, W),
        already quantised (symmetric: each also holds the reverse arc's capacity); for a
        volume one array per axis, last axis first, as :func:`nlink_weights` returns them.
    seeds
        labels shaped like the costs, 0 none, 1 object, 2 background.
    scale
        the factor applied to the costs before rounding.

    Returns
    -------
    tuple of numpy.ndarray
        ``(source, sink)`` int32, shaped like the costs: s -> p = rint(scale * cost_background),
        p -> t = rint(scale * cost_object); an object seed has s -> p = K_p and p -> t = 0,
        a background seed the reverse, with K_p = 1 + the sum of p's n-link capacities.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import terminal_capacities
    >>> cost_object = np.array([[0.5, 2.0, 0.0]])
    >>> cost_background = np.array([[2.0, 0.5, 0.0]])
    >>> nlinks = (np.array([[3, 4]], np.int32), np.zeros((0, 3), np.int32))   # (right, down)
    >>> seeds = np.array([[0, 0, 1]], np.uint8)                                 # pixel 2: object
    >>> source, sink = terminal_capacities(cost_object, cost_background, nlinks, seeds, scale=10)
    >>> source, sink
    (array([[20,  5,  5]], dtype=int32), array([[ 5, 20,  0]], dtype=int32))
    """
    xp = array_module(cost_object)
    shape = tuple(cost_object.shape)
    spatial = len(shape)
    seeds = check_seeds(_same_device(seeds, cost_object), shape, require_both=False)
    links = tuple(nlink_caps)
    expected = tuple(shape[:axis] + (shape[axis] - 1,) + shape[axis + 1:]
                     for axis in reversed(range(spatial)))
    if (tuple(cost_background.shape) != shape
            or tuple(tuple(a.shape) for a in links) != expected):
        raise ValueError(f"shapes do not match a {'x'.join(map(str, shape))} grid: "
                         f"cost_background {cost_background.shape}, n-links "
                         f"{[tuple(a.shape) for a in links]} (expected {list(expected)})")
    source = quantize(cost_background, scale=scale, what="background costs (source capacities)")
    sink = quantize(cost_object, scale=scale, what="object costs (sink capacities)")
    pin = seed_pins(links)
    if xp is not np:
        _gpu().apply_seed_pins(_gpu().seed_labels(seeds)[0], pin, source, sink)
        return source, sink
    is_object = seeds == FOREGROUND
    is_background = seeds == BACKGROUND
    zero = xp.int32(0)
    source = xp.where(is_object, pin, xp.where(is_background, zero, source)).astype(xp.int32)
    sink = xp.where(is_background, pin, xp.where(is_object, zero, sink)).astype(xp.int32)
    return source, sink


def seed_pins(nlink_caps):
    """The hard-constraint capacity K_p = 1 + the sum of p's n-link capacities, int32, shaped
    like the grid.

    Parameters
    ----------
    nlink_caps
        integer n-link capacities, one array per axis, last axis first, as
        :func:`nlink_weights` orders them: ``(right, down)``, (H, W-1) and (H-1, W), for
        an image; ``(right, down, next_slice)`` for a volume.

    Raises
    ------
    ValueError
        a K_p above the int32 limit (lower lam or scale).
    """
    links = tuple(nlink_caps)
    xp = array_module(*links)
    spatial = len(links)
    if xp is not np:
        pins, largest = _gpu().seed_pins(tuple(xp.ascontiguousarray(a, dtype=xp.int32)
                                               for a in links))
        if largest > INT32_MAX:
            raise ValueError(f"the hard-constraint capacity of a seeded pixel reaches "
                             f"{largest}, above the int32 limit {INT32_MAX}; lower lam or "
                             "scale")
        return pins
    shape = list(links[0].shape)
    shape[-1] += 1  # the first array lacks one along the last axis
    incident = xp.zeros(tuple(shape), dtype=xp.int64)
    for axis, link in zip(reversed(range(spatial)), links):
        incident[axis_slice(spatial, axis, 0, -1)] += link
        incident[axis_slice(spatial, axis, 1, None)] += link
    pin = incident + 1
    if int(pin.max()) > INT32_MAX:
        raise ValueError(f"the hard-constraint capacity of a seeded pixel reaches "
                         f"{int(pin.max())}, above the int32 limit {INT32_MAX}; lower lam or "
                         "scale")
    return pin.astype(xp.int32)


class SeedHistograms:
    """The colour histograms of the object and background seeds, kept up to date from seed
    edits, with their costs as one small table per label.

    This is the colour model of :func:`regional_costs` in a form made for interactive use: a
    pixel's cost depends only on its histogram cell, so the per-pixel costs are a table lookup
    (``table[cell of p]``). After a seed edit only the counts of the edited pixels change
    (:meth:`edit`, a few microseconds per stroke), the tables are recomputed over the cells
    (4,096 for colour images at 16 bins, 64 for grey; done with NumPy on the host, also for a
    GPU session) and :func:`capacities_from_tables` turns them into terminal capacities with
    one lookup per pixel (one kernel launch on the GPU). The capacities are exactly those of
    :func:`terminal_capacities` on :func:`regional_costs` (the same float costs, rounded the
    same way).

    Parameters
    ----------
    values
        the image as :func:`image_as_float` returns it, NumPy or CuPy.
    bins
        histogram bins per channel, as for :func:`regional_costs`.

    Attributes
    ----------
    index
        the histogram cell of every pixel, int32 (H, W), on the image's device.
    counts
        int64 (2, cells) NumPy array: seed pixels per cell, row 0 object, row 1
        background.
    """

    def __init__(self, values, *, bins=None, host_index=True):
        xp = array_module(values)
        self.bins = _check_bins(bins, values.shape[-1])
        self.hist_shape = (self.bins,) * values.shape[-1]
        self.cells = self.bins ** values.shape[-1]
        self.index = _bin_indices(values, self.bins)
        if xp is np:
            self.index = self.index.astype(np.int32)
        self._index_host = None  # the cells on the host, for edit() and fit()
        if host_index:
            host = self.index.get() if xp is not np else self.index
            self._index_host = host.astype(np.uint16) if self.cells <= 2**16 else host
        self.counts = np.zeros((2, self.cells), dtype=np.int64)

    @property
    def seed_counts(self) -> tuple[int, int]:
        """Numbers of (object, background) seed pixels counted."""
        return int(self.counts[0].sum()), int(self.counts[1].sum())

    def fit(self, seeds) -> None:
        """Count the seeds of a whole (H, W) NumPy label array from scratch."""
        for row, label in ((0, FOREGROUND), (1, BACKGROUND)):
            self.counts[row] = np.bincount(self._index_host[seeds == label],
                                           minlength=self.cells)

    def edit(self, region, before, after) -> bool:
        """Count a seed edit: the labels of ``region`` (a pair of slices) went from ``before``
        to ``after`` (NumPy arrays of the region's shape). Returns whether any label changed."""
        changed = before != after
        if not changed.any():
            return False
        cells = self._index_host[region][changed]
        old, new = before[changed], after[changed]
        for row, label in ((0, FOREGROUND), (1, BACKGROUND)):
            for selected, sign in ((cells[old == label], -1), (cells[new == label], 1)):
                if len(selected) > self.cells // 8:
                    self.counts[row] += sign * np.bincount(selected, minlength=self.cells)
                elif len(selected):
                    np.add.at(self.counts[row], selected, sign)
        return True

    def capacity_tables(self, scale=DEFAULT_SCALE):
        """``(source_table, sink_table)``: int32 NumPy arrays, one entry per cell, of
        ``rint(scale * cost)`` with the background cost on the source side and the object
        cost on the sink side (as :func:`terminal_capacities`). Both models need seeds."""
        if not (self.counts[0].any() and self.counts[1].any()):
            raise ValueError("seed histograms need at least one object and one background seed")
        cost_object = _cost_table(self.counts[0].astype(np.float64), self.hist_shape)
        cost_background = _cost_table(self.counts[1].astype(np.float64), self.hist_shape)
        return (quantize(cost_background, scale=scale,
                         what="background costs (source capacities)"),
                quantize(cost_object, scale=scale, what="object costs (sink capacities)"))


def capacities_from_tables(index, seeds, pins, source_table, sink_table, *, out=None):
    """Terminal capacities by one table lookup per pixel, with the seeds' hard constraints.

    ``source[p] = source_table[index[p]]`` and ``sink[p] = sink_table[index[p]]``, except
    object seeds (label 1: ``source = pins[p]``, ``sink = 0``) and background seeds (label 2:
    the reverse). On the GPU this is one fused kernel; on the host a few NumPy passes.

    Parameters
    ----------
    index
        int32 (H, W) cell of every pixel (:attr:`SeedHistograms.index`).
    seeds
        uint8 (H, W) labels (0 none, 1 object, 2 background), on the same device.
    pins
        int32 (H, W) hard-constraint capacities (:func:`seed_pins`).
    source_table, sink_table
        int32 per-cell capacities
        (:meth:`SeedHistograms.capacity_tables`), on the same device.
    out
        optional ``(source, sink)`` int32 (H, W) arrays to write into.

    Returns
    -------
    tuple of numpy.ndarray
        ``(source, sink)``, int32 (H, W).
    """
    xp = array_module(index)
    if out is None:
        out = (xp.empty(index.shape, dtype=xp.int32), xp.empty(index.shape, dtype=xp.int32))
    source, sink = out
    if xp is not np:
        _gpu().capacities_from_tables(index, seeds, pins, source_table, sink_table, source,
                                      sink)
        return source, sink
    np.take(source_table, index, out=source)
    np.take(sink_table, index, out=sink)
    is_object = seeds == FOREGROUND
    is_background = seeds == BACKGROUND
    np.copyto(source, pins, where=is_object)
    np.copyto(sink, 0, where=is_object)
    np.copyto(sink, pins, where=is_background)
    np.copyto(source, 0, where=is_background)
    return source, sink


def build_network(image, seeds, *, lam=DEFAULT_LAM, sigma=None, bins=None, channel_axis=-1,
                  scale=DEFAULT_SCALE, spacing=None) -> GridNetwork:
    """The Boykov-Jolly segmentation network of ``image`` with ``seeds`` (module docstring).

    Parameters
    ----------
    image
        grey or colour image, or volume (NumPy or CuPy; the network is built on the
        same device).
    seeds
        (H, W) (or (D, H, W)) labels, 0 none, 1 object, 2 background; both labels
        must be present.
    lam
        weight of the boundary term against the regional term (>= 0); larger values give
        smoother boundaries that follow image edges more than colour statistics.
    sigma
        colour-difference scale of the n-link weights (:func:`nlink_weights`).
    bins
        histogram bins per channel (:func:`regional_costs`).
    channel_axis
        the channel axis of a 3-D image; ignored when the image has as many
        dimensions as the seeds (no channel axis: a grey image or volume).
    scale
        float capacities are multiplied by this and rounded (precision 0.5 / scale).
    spacing
        ``(dy, dx)`` or ``(dz, dy, dx)`` pixel (voxel) size; the n-links along an
        axis are weighed by ``min(spacing) / spacing[axis]``. ``None``: isotropic.

    Returns
    -------
    GridNetwork
        A :class:`GridNetwork` (4-connected, or 6-connected for a volume) with symmetric
        n-links whose minimum cut's source side is the object; its maximum flow / scale is the
        minimum energy.

    Raises
    ------
    ValueError
        bad image, bad seeds (size, labels, no object or no background seed), bad
        options, or capacities above the int32 limit.

    Examples
    --------
    The network :func:`graphcut.segment` cuts, built and cut by hand:

    >>> import numpy as np
    >>> from graphcut import build_network, min_cut
    >>> image = np.zeros((4, 5), np.uint8)
    >>> image[1:3, 1:4] = 200
    >>> seeds = np.zeros((4, 5), np.uint8)
    >>> seeds[1, 2], seeds[0, 0] = 1, 2
    >>> network = build_network(image, seeds, lam=10)
    >>> network.shape, network.right.shape, network.down.shape
    ((4, 5), (4, 4), (3, 5))
    >>> min_cut(network, device="cpu").source_side.astype(int)
    array([[0, 0, 0, 0, 0],
           [0, 1, 1, 1, 0],
           [0, 1, 1, 1, 0],
           [0, 0, 0, 0, 0]])
    """
    lam = float(lam)
    if not (math.isfinite(lam) and lam >= 0.0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam}")
    values = image_as_float(image, channel_axis=spatial_channel_axis(image, seeds, channel_axis))
    seeds = _check_seeds_for(values, seeds)
    links = tuple(quantize_weights(w, lam, scale=scale, what="n-link capacities (lam * weights)")
                  for w in _nlink_weights(values, sigma, spacing))
    if array_module(values) is not np:
        return _build_network_gpu(values, seeds, links, bins, scale)
    cost_object, cost_background = _regional_costs(values, seeds, bins)
    source, sink = terminal_capacities(cost_object, cost_background, links, seeds,
                                       scale=scale)
    return GridNetwork(source, sink, forward=links[::-1])


def _build_network_gpu(values, labels, links, bins, scale) -> GridNetwork:
    """The rest of :func:`build_network` on the GPU: the per-pixel costs are lookups of
    per-cell tables (so the terminal capacities are those tables quantised, looked up, then
    the seeds' hard constraints), computed by :class:`SeedHistograms`'s tables."""
    import cupy
    histograms = SeedHistograms(values, bins=bins, host_index=False)
    histograms.counts = _gpu().seed_histograms(histograms.index, labels, histograms.cells)
    tables = (cupy.asarray(t) for t in histograms.capacity_tables(scale))
    source, sink = capacities_from_tables(histograms.index, labels, seed_pins(links), *tables)
    return GridNetwork.from_checked(source, sink, forward=links[::-1])  # checked by the kernels


def _check_seeds_for(values, seeds, **options):
    """The seeds, checked against the image's values (..., C) and moved to their device (on
    the GPU: as C-contiguous uint8 labels)."""
    spatial = values.shape[:-1]
    if getattr(seeds, "ndim", len(spatial)) != len(spatial):
        raise ValueError(f"seeds have shape {tuple(seeds.shape)} but the image's spatial shape "
                         f"is {tuple(spatial)}: a {len(spatial)}-D image needs "
                         f"{len(spatial)}-D seeds")
    seeds = check_seeds(_same_device(seeds, values), spatial, **options)
    if array_module(values) is not np:
        return _gpu().seed_labels(seeds)[0]
    return seeds


def spatial_channel_axis(image, seeds, channel_axis):
    """``channel_axis``, or None when ``image`` has as many dimensions as ``seeds`` (a grey
    image or volume: the seeds say there is no channel axis)."""
    if getattr(seeds, "ndim", None) is not None and getattr(image, "ndim", None) == seeds.ndim:
        return None
    return channel_axis


__all__ = ["DEFAULT_LAM", "DEFAULT_SCALE", "SeedHistograms", "array_module", "build_network",
           "capacities_from_tables", "estimate_sigma", "image_as_float", "nlink_weights",
           "quantize", "quantize_weights", "regional_costs", "seed_pins", "spatial_channel_axis",
           "terminal_capacities"]
