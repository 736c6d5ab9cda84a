"""The boundary term of the segmentation energy: contrast-sensitive n-link weights.

``w_pq = exp(-||I_p - I_q||^2 / (2 sigma^2))`` for 4-neighbours (6 in a volume), in (0, 1],
times ``min(spacing) / spacing[axis]`` for anisotropic pixels; sigma is estimated from the
image when not given. NumPy on the CPU, the package's energy kernels on the GPU (same float64
formulas).
"""

from __future__ import annotations

import math

import numpy as np

from graphcut._arrays import array_module, image_as_float
from graphcut._arrays import energy_kernels as _gpu
from graphcut.solver.networks import axis_slice

# Smallest sigma accepted: below it, 2 * sigma**2 is no longer a normal float (it underflows
# towards 0 and the boundary weights cannot be computed).
SIGMA_MIN = 1e-150


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
    >>> from graphcut.segmentation import estimate_sigma
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


def check_positive(name: str, value) -> float:
    """``value`` as a float, or a ValueError naming ``name`` unless it is finite and > 0."""
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {value}")
    return value


def check_sigma(sigma) -> float:
    """``sigma`` as a float, or a ValueError unless it is finite and at least SIGMA_MIN."""
    sigma = check_positive("sigma", sigma)
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


def weights_of_values(values, sigma, spacing=None):
    """:func:`nlink_weights` of values already scaled by :func:`image_as_float`."""
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
    >>> from graphcut.segmentation import nlink_weights
    >>> right, down = nlink_weights(np.array([[0, 0, 255]], np.uint8), sigma=0.5)
    >>> right                    # equal neighbours: 1; black to white: exp(-1 / (2 * 0.5**2))
    array([[1.        , 0.13533528]])
    >>> down.shape               # a single row has no vertical pairs
    (0, 3)
    """
    return weights_of_values(image_as_float(image, channel_axis=channel_axis), sigma, spacing)


__all__ = ["SIGMA_MIN", "check_positive", "check_sigma", "estimate_sigma", "nlink_weights",
           "weights_of_values"]
