"""Neighbours entering a box: the pixels that an object crossing the box's side brings in.

A box encloses its object, so an object-like region that crosses the box's side is another
object's: a neighbouring nucleus reaching into the box, or the blur bridging the two. On the
small dev nuclei the tightness prior's pins (:mod:`._tightness`) pulled such bridges into the
mask (bench/RESULTS.md, seventeenth session, box17). :func:`neighbour_pixels` finds them
from the image's values alone:

- the box's own level: each pixel's position between the median of the box's one-pixel
  border (0) and the median of its core (1; the box's pixels at least half its largest depth
  inside), along the direction between those medians (grey or colour, either polarity);
- object-like: at least :data:`LEVEL` on that scale, in the box grown by :data:`REACH` pixels
  (the window);
- a marker-controlled watershed (:func:`skimage.segmentation.watershed`) of the object-like
  pixels on the negated level, from two markers: the object-like pixels at least
  :data:`REACH` pixels outside the box (a neighbour) and those of the box's centre (its core
  at :data:`CENTRE` of its largest depth; the whole centre when none is object-like);
- the neighbour's pixels are the box's pixels the outside marker claims: the basins meet at
  the valley between the two objects, not at the box's side.

With the box drawn 1 pixel out the object itself reaches 1-2 pixels past the box (its blur),
hence a reach of 3 pixels. The window is split on at most :data:`MAX_PIXELS` pixels: a larger
one is sampled every ``s`` pixels on both axes and the answer repeated back (a big box's
neighbours are coarser than a pixel). The work is on the host; on a GPU only the window's
(sampled) values come over and its answer goes back.
"""

from __future__ import annotations

import math

import numpy as np

from graphcut._arrays import array_module, to_host

#: nats added to the object's cost at a neighbour's pixels in the tightness prior's cuts
#: (the learned model's ``neighbours`` knob overrides it; 0: off)
NEIGHBOUR_COST = 1.25
#: pixels: a neighbour's marker lies at least this far outside the box (Chebyshev)
REACH = 3
#: object-like: at least this share of the way from the box's border level to its core's
LEVEL = 0.5
#: the object's marker: the box's core at this share of its largest depth
CENTRE = 0.75
#: the window is split on at most this many pixels (sampled with a stride beyond)
MAX_PIXELS = 128 * 128


def _window(shape, box, reach):
    """The box grown by ``reach`` pixels each way, clipped to ``shape``: (r0, c0, r1, c1)."""
    h, w = shape
    r0, c0, r1, c1 = box
    return max(r0 - reach, 0), max(c0 - reach, 0), min(r1 + reach, h), min(c1 + reach, w)


def box_levels(values, box):
    """Each pixel's level between the box's border (0) and its core (1), host float64.

    Parameters
    ----------
    values : numpy.ndarray (h, w, C)
        The window's values (any affine scale per channel), host.
    box : tuple of int
        ``(row0, col0, row1, col1)`` of the box within the window, half-open.

    Returns
    -------
    numpy.ndarray (h, w) or None
        ``(x - border median) . a / |a|^2`` with ``a`` the core's median minus the border's;
        None when the two medians are equal (no contrast to tell object from background).

    Examples
    --------
    >>> import numpy as np
    >>> image = np.zeros((9, 9, 1)); image[2:7, 2:7] = 2.0
    >>> levels = box_levels(image, (1, 1, 8, 8))
    >>> float(levels[4, 4]), float(levels[0, 0])
    (1.0, 0.0)
    """
    r0, c0, r1, c1 = box
    _, _, low, axis = border_and_core(values[r0:r1, c0:c1])
    norm = float(axis @ axis)
    if not norm > 1e-12:
        return None
    return (values - low) @ axis / norm


def border_and_core(inside):
    """A box's one-pixel border and its core (the pixels at least half its largest depth
    inside), each (n, C), and their per-channel medians ``low`` (the border's) and ``axis``
    (the core's minus the border's), from the host array ``inside`` (h, w, C) of the box's
    values (the two levels of :func:`box_levels` and of ``_box_level.box_axis``)."""
    h, w, channels = inside.shape
    border = np.concatenate([inside[0], inside[-1], inside[1:-1, 0], inside[1:-1, -1]])
    depth_r = np.minimum(np.arange(1, h + 1), np.arange(h, 0, -1))
    depth_c = np.minimum(np.arange(1, w + 1), np.arange(w, 0, -1))
    half = 0.5 * float(min(depth_r.max(), depth_c.max()))
    core = inside[depth_r >= half][:, depth_c >= half].reshape(-1, channels)
    low = np.median(border, axis=0)
    return border, core, low, np.median(core, axis=0) - low


def neighbour_pixels(values, box, *, reach=None, level=None, centre=None, max_pixels=None):
    """The box's pixels that belong to a neighbour crossing its side (see the module's notes).

    Parameters
    ----------
    values : array (H, W, C)
        The image's values (or an affine map of them per channel), NumPy or CuPy.
    box : tuple of int
        ``(row0, col0, row1, col1)``, half-open.
    reach : int, optional
        Pixels: a neighbour's marker lies at least this far outside the box (None:
        :data:`REACH`).
    level : float, optional
        Object-like: at least this share of the way from the border's level to the core's
        (None: :data:`LEVEL`).
    centre : float, optional
        The object's marker: the box's core at this share of its largest depth (None:
        :data:`CENTRE`).
    max_pixels : int, optional
        The window is sampled with a stride when it has more pixels than this (None:
        :data:`MAX_PIXELS`).

    Returns
    -------
    tuple or None
        ``(window, pixels)``: the window's slices ``(rows, columns)`` of the image and a bool
        array of its shape on ``values``' device, True at the neighbours' pixels in the box;
        None when there is none (no object-like pixel that far out, or no contrast).

    Examples
    --------
    >>> import numpy as np
    >>> image = np.zeros((20, 20, 1))
    >>> image[8:13, 8:13] = 1.0           # the boxed object
    >>> image[9:12, 2:8] = 0.6            # a dimmer neighbour, bridging into the box's side
    >>> image[9:12, 7] = 0.3              # the valley between the two
    >>> (rows, cols), pixels = neighbour_pixels(image, (6, 5, 15, 15))
    >>> sorted({int(c) + cols.start for c in np.nonzero(pixels)[1]})
    [5, 6]
    """
    reach = REACH if reach is None else int(reach)
    level = LEVEL if level is None else float(level)
    centre = CENTRE if centre is None else float(centre)
    max_pixels = MAX_PIXELS if max_pixels is None else int(max_pixels)
    xp = array_module(values)
    shape = tuple(int(n) for n in values.shape[:2])
    box = tuple(int(v) for v in box)
    w0, v0, w1, v1 = _window(shape, box, reach)
    stride = max(1, math.ceil(math.sqrt((w1 - w0) * (v1 - v0) / max_pixels)))
    part = np.asarray(to_host(values[w0:w1:stride, v0:v1:stride]), dtype=np.float64)
    # the box and the reach on the (sampled) window's grid
    r0, c0 = -(-(box[0] - w0) // stride), -(-(box[1] - v0) // stride)
    r1, c1 = -(-(box[2] - w0) // stride), -(-(box[3] - v0) // stride)
    if r1 - r0 < 1 or c1 - c0 < 1:
        return None
    levels = box_levels(part, (r0, c0, r1, c1))
    if levels is None:
        return None
    object_like = levels >= level
    rows = np.arange(part.shape[0])[:, None]
    cols = np.arange(part.shape[1])[None, :]
    outside = np.maximum(np.maximum(r0 - rows, rows - (r1 - 1)),
                         np.maximum(c0 - cols, cols - (c1 - 1)))  # Chebyshev; <= 0 inside
    far = object_like & (outside >= max(1, math.ceil(reach / stride)))
    if not far.any():
        return None
    depth_r = np.minimum(rows - r0 + 1, r1 - rows)
    depth_c = np.minimum(cols - c0 + 1, c1 - cols)
    deepest = float(min((r1 - r0 + 1) // 2, (c1 - c0 + 1) // 2))
    middle = (depth_r >= centre * deepest) & (depth_c >= centre * deepest) & (outside <= 0)
    inner = middle & object_like
    if not inner.any():
        inner = middle
    watershed = load_watershed()
    markers = np.zeros(levels.shape, dtype=np.int32)
    markers[far] = 2
    markers[inner] = 1
    basins = watershed(-levels, markers, mask=object_like | inner)
    theirs = (basins == 2) & (outside <= 0)
    if not theirs.any():
        return None
    window = (slice(w0, w1), slice(v0, v1))
    if stride > 1:
        theirs = np.repeat(np.repeat(theirs, stride, axis=0), stride, axis=1)[:w1 - w0,
                                                                              :v1 - v0]
    inside = np.zeros(theirs.shape, dtype=bool)
    inside[box[0] - w0:box[2] - w0, box[1] - v0:box[3] - v0] = True
    return window, xp.asarray(theirs & inside)


def with_neighbour_cost(cost_object, values, box, cost):
    """``cost_object`` plus ``cost`` nats at the neighbours' pixels of ``box``
    (:func:`neighbour_pixels` of ``values``); the same array when there are none or ``cost``
    is 0, else a new one (the given costs may be a model's kept array: never changed).

    Parameters
    ----------
    cost_object : array (H, W)
        The object's costs, nats (NumPy or CuPy, as ``values``).
    values : array (H, W, C)
        The image's values.
    box : tuple of int
        ``(row0, col0, row1, col1)``, half-open.
    cost : float
        Nats, >= 0.

    Returns
    -------
    array (H, W)
    """
    if not cost > 0:
        return cost_object
    found = neighbour_pixels(values, box)
    if found is None:
        return cost_object
    window, pixels = found
    xp = array_module(cost_object)
    changed = cost_object.copy()
    changed[window] += xp.where(pixels, cost_object.dtype.type(cost),
                                cost_object.dtype.type(0))
    return changed


def load_watershed():
    """:func:`skimage.segmentation.watershed`, imported on first use (about 0.2 s, once per
    process: :func:`~._warmup.warm_up` calls this for a learned session, so that the user's
    first box does not pay it)."""
    from skimage.segmentation import watershed
    return watershed


def image_values(values, model):
    """The image's own values among the model's features ``values``: the learned model's
    first columns are the image's channels, standardised
    (:func:`~graphcut.models._features.feature_names`); a model without that record (its
    ``_channels``, set by its ``features``): every column."""
    channels = getattr(model, "_channels", None)
    return values if channels is None else values[..., :int(channels)]


__all__ = ["CENTRE", "LEVEL", "MAX_PIXELS", "NEIGHBOUR_COST", "REACH", "border_and_core",
           "box_levels", "image_values", "load_watershed", "neighbour_pixels",
           "with_neighbour_cost"]
