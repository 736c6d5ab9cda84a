"""Integer capacities: float costs scaled and rounded (int32, overflow refused with the term
named), terminal capacities with the seeds' hard constraints, and the seed pins K_p.

Capacities are integers: every float capacity is multiplied by ``scale`` and rounded, so a
capacity is within ``0.5 / scale`` of its float value (``scale`` = 1000: 0.0005 nats). The
maximum flow divided by ``scale`` is then the minimum energy. An object seed gets s -> p = K_p
and p -> t = 0, a background seed the reverse, with K_p = 1 + the sum of p's n-link
capacities: p then stays on its side in every minimum cut.
"""

from __future__ import annotations

import math

import numpy as np

from graphcut._arrays import array_module, same_device
from graphcut._arrays import energy_kernels as _gpu
from graphcut.io import FOREGROUND, check_seeds
from graphcut.solver.networks import axis_slice

from ._boundary import check_positive

INT32_MAX = int(np.iinfo(np.int32).max)
# Float capacities are multiplied by this and rounded to integers.
DEFAULT_SCALE = 1000.0


def quantize(values, *, scale=DEFAULT_SCALE, what="capacities"):
    """``rint(values * scale)`` as int32, or a ValueError naming ``what`` when a value leaves
    the int32 range (or is negative or not finite)."""
    xp = array_module(values)
    scale = check_positive("scale", scale)
    if xp is not np and values.dtype == np.float64 and values.flags.c_contiguous:
        return quantize_weights(values, 1.0, scale=scale, what=what)  # one kernel
    scaled = xp.asarray(values, dtype=xp.float64) * scale
    xp.rint(scaled, out=scaled)
    check_scaled(scaled, scale, what)
    return scaled.astype(xp.int32)


def check_scaled(scaled, scale, what) -> None:
    """The range check of :func:`quantize` on its rounded, scaled values: a ValueError naming
    ``what`` when one is negative, not finite or above the int32 range."""
    if scaled.size:
        low, high = float(scaled.min()), float(scaled.max())
        if not (math.isfinite(low) and math.isfinite(high)) or low < 0:
            raise ValueError(f"{what} must be finite and >= 0 (got values from {low} to {high})")
        if high > INT32_MAX:
            raise ValueError(f"{what} reach {high:.0f} after scaling by scale={scale:g}, above "
                             f"the int32 limit {INT32_MAX}; lower lam or scale")


#: what the range errors call the terminal capacities: the source's, then the sink's
TERMINAL_NAMES = ("background costs (source capacities)", "object costs (sink capacities)")


def quantize_weights(weights, lam, *, scale=DEFAULT_SCALE, what="capacities"):
    """``quantize(lam * weights, scale=scale, what=what)``, on the GPU in one kernel (the same
    float64 products, no temporary array)."""
    if array_module(weights) is np:
        return quantize(lam * weights, scale=scale, what=what)
    scale = check_positive("scale", scale)
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
    seeds, links = checked_grid(cost_object, cost_background, nlink_caps, seeds)
    source = quantize(cost_background, scale=scale, what=TERMINAL_NAMES[0])
    sink = quantize(cost_object, scale=scale, what=TERMINAL_NAMES[1])
    if xp is not np:
        pin = seed_pins(links)
        _gpu().apply_seed_pins(_gpu().seed_labels(seeds)[0], pin, source, sink)
        return source, sink
    pin_seeds(source, sink, links, seeds)
    return source, sink


def checked_grid(cost_object, cost_background, nlink_caps, seeds):
    """``(seeds, links)``: the seeds checked (one object, on the costs' device) and the
    n-links as a tuple (last axis first), after checking that both costs and the n-links
    are those of one grid shaped like ``cost_object``; a ValueError naming the shapes
    otherwise."""
    shape = tuple(cost_object.shape)
    seeds = check_seeds(same_device(seeds, cost_object), shape, require_both=False)
    links = tuple(nlink_caps)
    expected = tuple(shape[:axis] + (shape[axis] - 1,) + shape[axis + 1:]
                     for axis in reversed(range(len(shape))))
    if (tuple(cost_background.shape) != shape
            or tuple(tuple(a.shape) for a in links) != expected):
        raise ValueError(f"shapes do not match a {'x'.join(map(str, shape))} grid: "
                         f"cost_background {cost_background.shape}, n-links "
                         f"{[tuple(a.shape) for a in links]} (expected {list(expected)})")
    return seeds, links


def pin_seeds(source, sink, nlink_caps, seeds):
    """NumPy: the seeds' hard constraints written into ``source`` and ``sink`` (int32,
    C-contiguous, shaped like ``seeds``) in place: an object seed (1) gets s -> p = K_p and
    p -> t = 0, a background seed (2) the reverse (:func:`terminal_capacities`); returns
    the seeded pixels' ravel indices (int64) and whether each is an object seed (bool).

    K_p (:func:`seed_pins`) is computed at the seeded pixels only, not over the grid; the
    int32 check of :func:`seed_pins` still covers every pixel (through a bound on the
    largest n-links, the whole grid's K_p only when the bound exceeds int32).
    """
    if not (source.flags.c_contiguous and sink.flags.c_contiguous):
        raise ValueError("pin_seeds writes into C-contiguous capacity arrays")
    links = tuple(nlink_caps)
    shape = tuple(seeds.shape)
    if sum(2 * int(link.max()) for link in links if link.size) + 1 > INT32_MAX:
        seed_pins(links)  # raises if some pixel's K_p leaves int32
    seeded = np.flatnonzero(seeds)
    is_object = seeds.flat[seeded] == FOREGROUND
    if not seeded.size:
        return seeded, is_object
    pins = _pins_at(links, shape, seeded).astype(np.int32)
    zero = np.int32(0)
    source.reshape(-1)[seeded] = np.where(is_object, pins, zero)
    sink.reshape(-1)[seeded] = np.where(is_object, zero, pins)
    return seeded, is_object


def _pins_at(links, shape, flat) -> np.ndarray:
    """K_p (int64) of the pixels with ravel indices ``flat`` of a grid of ``shape``:
    1 + the capacities of the n-links into and out of each (``links`` last axis first)."""
    coords = np.unravel_index(flat, shape)
    total = np.ones(flat.size, dtype=np.int64)
    for axis, link in zip(reversed(range(len(shape))), links):
        ahead = coords[axis] < shape[axis] - 1   # the link to p + e_axis
        total[ahead] += link[tuple(c[ahead] for c in coords)]
        behind = coords[axis] > 0                # the link from p - e_axis
        total[behind] += link[tuple(c[behind] - int(a == axis) for a, c in enumerate(coords))]
    return total


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


__all__ = ["DEFAULT_SCALE", "INT32_MAX", "TERMINAL_NAMES", "checked_grid", "pin_seeds",
           "quantize", "quantize_weights", "seed_pins", "terminal_capacities"]
