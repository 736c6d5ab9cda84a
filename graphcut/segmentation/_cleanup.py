"""Clean-up of a result: drop object parts not connected to a seed, fill small holes.

Connectivity is the graph's: 4-neighbours in an image, 6-neighbours in a volume. Both steps
work on host NumPy arrays with :func:`scipy.ndimage.label` and never undo a hard constraint: a
part holding an object seed of its label is always kept, and a hole holding a background seed
(or a pixel outside the box or lasso) is never filled. :func:`clean_mask` does the same for
one object's mask, box or lasso included, and on the GPU when the mask is a CuPy array (flood
fills and part sizes, ``graphcut.segmentation.flood``).
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host
from graphcut._labels import BACKGROUND, FOREGROUND
from graphcut.io import KEEP_CHOICES



def _face_neighbours(ndim: int) -> np.ndarray:
    """The grid's connectivity: 4-neighbours in an image, 6 in a volume (shared faces)."""
    from scipy import ndimage
    return ndimage.generate_binary_structure(ndim, 1)


def keep_connected(mask, anchors) -> np.ndarray:
    """The parts (4-connected components; 6-connected in a volume) of bool ``mask`` that
    touch ``anchors`` (bool, e.g. the object seeds); when no part does, the largest part.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.segmentation import keep_connected
    >>> mask = np.array([[1, 1, 0, 1]], bool)
    >>> keep_connected(mask, anchors=np.array([[0, 1, 0, 0]], bool)).astype(int)
    array([[1, 1, 0, 0]])
    """
    mask = np.asarray(mask, dtype=bool)
    from scipy import ndimage  # imported here: `graphcut segment` without clean-up never needs it
    box = _bounds(mask)  # every part lies in the mask's bounding box: label only that
    if box is None:
        return mask.copy()
    parts, count = ndimage.label(mask[box], structure=_face_neighbours(mask.ndim))
    if count <= 1:
        return mask.copy()
    anchors = np.asarray(anchors, dtype=bool)[box] & mask[box]
    if anchors.any():
        kept = np.unique(parts[anchors])
    else:
        sizes = np.bincount(parts.ravel(), minlength=count + 1)
        sizes[0] = 0
        kept = [int(np.argmax(sizes))]
    table = np.zeros(count + 1, bool)  # a lookup of the part labels (0: not in the mask)
    table[kept] = True
    table[0] = False
    out = np.zeros_like(mask)
    out[box] = table[parts]
    return out


def _bounds(mask):
    """The slices of the smallest box holding every True pixel of bool ``mask``, or None
    when it has none."""
    box = []
    for axis in range(mask.ndim):
        present = np.flatnonzero(mask.any(axis=tuple(a for a in range(mask.ndim) if a != axis)))
        if present.size == 0:
            return None
        box.append(slice(int(present[0]), int(present[-1]) + 1))
    return tuple(box)


def fill_holes(mask, max_area: int, *, protected=None) -> np.ndarray:
    """``mask`` with its holes of fewer than ``max_area`` pixels filled.

    A hole is a 4-connected (6-connected in a volume) part of ``~mask`` that does not touch
    the image's (volume's) border; holes
    holding a ``protected`` pixel (background seeds, pixels outside the box) stay open.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.segmentation import fill_holes
    >>> ring = np.ones((3, 3), bool)
    >>> ring[1, 1] = False
    >>> bool(fill_holes(ring, max_area=2).all())            # a 1-pixel hole, < 2: filled
    True
    >>> bool(fill_holes(ring, max_area=1)[1, 1])            # not smaller than 1: kept open
    False
    """
    mask = np.asarray(mask, dtype=bool)
    if max_area <= 0:
        return mask.copy()
    from scipy import ndimage
    # a hole is surrounded by the mask, so it lies in the mask's bounding box; a part of the
    # box's background that touches the box's side joins the outside (or the image's border)
    box = _bounds(mask)
    if box is None:
        return mask.copy()
    holes, count = ndimage.label(~mask[box], structure=_face_neighbours(mask.ndim))
    if count == 0:
        return mask.copy()
    sizes = np.bincount(holes.ravel(), minlength=count + 1)
    fillable = sizes < max_area
    fillable[0] = False
    faces = [np.take(holes, end, axis=axis).ravel()
             for axis in range(holes.ndim) for end in (0, -1)]
    border = np.unique(np.concatenate(faces))
    fillable[border] = False
    if protected is not None:
        fillable[np.unique(holes[np.asarray(protected, dtype=bool)[box]])] = False
    if not fillable.any():
        return mask.copy()
    out = mask.copy()
    out[box] |= fillable[holes]
    return out


def clean_mask(mask, seeds, *, keep="connected", fill_holes_area=0, outside=None):
    """One object's clean-up: ``clean_labels`` of the mask (object label 1) with the same
    seeds (and ``outside``), as a bool mask, on the arrays' device.

    Parameters
    ----------
    mask
        bool (H, W) result, NumPy or CuPy.
    seeds
        uint8 (H, W) seeds of that result (1 object, 2 background), on the same device.
    keep
        "connected" (the parts touching an object seed; the largest part when none
        does) or "all".
    fill_holes_area
        holes of fewer pixels than this, free of background seeds and not
        open to the border, join the object (0: none).
    outside
        bool (H, W), on the same device, or None: the pixels outside the box or lasso the
        mask was cut with (never object). As in :func:`clean_labels`, the region's central
        part (:func:`central_part`) then anchors the object like object seeds do, and holes
        holding an outside pixel stay open. On the GPU both are folded into the seeds
        (:func:`region_seeds`), which gives the same result because a cut never puts an
        outside pixel or a background seed in the object.

    Examples
    --------
    The part not connected to the object seed goes, the 1-pixel hole is filled:

    >>> import numpy as np
    >>> from graphcut.segmentation import clean_mask
    >>> mask = np.array([[1, 1, 1, 0, 1],
    ...                  [1, 0, 1, 0, 0],
    ...                  [1, 1, 1, 0, 0]], bool)
    >>> seeds = np.zeros((3, 5), np.uint8)
    >>> seeds[0, 0], seeds[2, 4] = 1, 2
    >>> clean_mask(mask, seeds, keep="connected", fill_holes_area=2).astype(int)
    array([[1, 1, 1, 0, 0],
           [1, 1, 1, 0, 0],
           [1, 1, 1, 0, 0]])
    """

    if keep not in KEEP_CHOICES:
        raise ValueError(f"keep must be one of {', '.join(KEEP_CHOICES)}, got {keep!r}")
    on_gpu = hasattr(mask, "get")  # a CuPy array
    if not on_gpu or mask.ndim != 2:
        labels = clean_labels(np.asarray(to_host(mask)).astype(np.uint8), [FOREGROUND],
                              to_host(seeds), keep=keep, fill_holes_area=fill_holes_area,
                              outside=None if outside is None else to_host(outside))
        cleaned = labels == FOREGROUND
        return _like(mask, cleaned) if on_gpu else cleaned
    from . import flood
    from .masks import count_true
    if outside is not None:
        seeds = region_seeds(seeds, outside)
    if keep == "connected":
        kept, count = flood.parts_touching_seeds(mask, seeds, FOREGROUND)
        if count == 0 and count_true(mask):  # no seed in the object: its largest part (host)
            kept = _like(mask, keep_connected(mask.get(), np.zeros(mask.shape, bool)))
        mask = kept
    else:
        mask = mask.copy()
    if fill_holes_area > 0:
        holes, count = flood.enclosed_holes(mask, seeds, BACKGROUND)
        if count:
            flood.fill_small_parts(mask, holes, fill_holes_area)
    return mask


def _like(reference, host_array):
    """``host_array`` on the GPU, as CuPy ``reference`` is."""
    import cupy
    return cupy.asarray(host_array)


def central_part(region):
    """The central part of a box or lasso (bool ``region``, NumPy or CuPy): the region shrunk
    halfway toward its centre (for a box, the middle half of its rows and of its columns; of
    each axis in a volume), on the region's device."""
    xp = array_module(region)
    points = xp.nonzero(region)
    if points[0].size == 0:
        return xp.zeros_like(region, dtype=bool)
    # a pixel is in the core when the point twice as far from the centre is in the region
    centres = [float(p.mean()) for p in points]
    grid = xp.indices(region.shape)
    far = [xp.rint(c + 2 * (g - c)).astype(xp.int64) for c, g in zip(centres, grid)]
    inside = xp.ones(region.shape, dtype=bool)
    for axis, f in enumerate(far):
        inside &= (f >= 0) & (f < region.shape[axis])
    core = xp.zeros(region.shape, dtype=bool)
    core[inside] = region[tuple(f[inside] for f in far)]
    return core & region


def region_seeds(seeds, outside):
    """The seeds with a box's or lasso's constraints folded in, on their device: pixels
    outside the region (``outside`` True) become background seeds, the region's central
    part (:func:`central_part`) object seeds, unless a background seed is there.

    :func:`clean_mask` cleans a mask cut with a box or lasso with these seeds as
    :func:`clean_labels` does with the seeds and ``outside``: the central part anchors the
    object's parts, and holes holding an outside pixel stay open. The two differ only on
    pixels a cut never puts in the object (outside pixels, background seeds).

    Examples
    --------
    >>> import numpy as np
    >>> seeds = np.zeros((1, 8), np.uint8)
    >>> seeds[0, 3] = 2
    >>> outside = np.array([[1, 0, 0, 0, 0, 0, 0, 1]], bool)
    >>> region_seeds(seeds, outside)
    array([[2, 0, 0, 2, 1, 1, 0, 2]], dtype=uint8)
    """
    xp = array_module(seeds)
    outside = xp.asarray(outside, dtype=bool)
    core = central_part(~outside)
    seeds = xp.asarray(seeds)
    background = (seeds == BACKGROUND) | outside
    anchored = (seeds == FOREGROUND) | core
    return xp.where(background, BACKGROUND, xp.where(anchored, FOREGROUND, 0)).astype(xp.uint8)


def clean_labels(labels, object_labels, seeds, *, keep="all", fill_holes_area=0,
                 outside=None) -> np.ndarray:
    """Clean-up of a label image (0 background, ``object_labels`` the objects), per object:
    with ``keep="connected"`` only its parts touching a seed of its label, or the central
    part of the box / lasso (:func:`central_part`; ``outside`` = the pixels outside it), stay
    (the largest part when none does); holes of fewer than ``fill_holes_area`` pixels made
    only of background and free of background seeds and of ``outside`` pixels join the
    object around them."""

    if keep not in KEEP_CHOICES:
        raise ValueError(f"keep must be one of {', '.join(KEEP_CHOICES)}, got {keep!r}")
    labels = np.array(labels, copy=True)
    seeds = np.asarray(seeds)
    protected = seeds == BACKGROUND
    core = np.zeros(labels.shape, dtype=bool)
    if outside is not None:
        protected = protected | outside
        core = central_part(~outside)
    for label in object_labels:
        region = labels == label
        if keep == "connected":
            kept = keep_connected(region, (seeds == label) | core)
            labels[region & ~kept] = 0
            region = kept
        if fill_holes_area > 0:
            # only background may fill a hole: other objects' pixels are protected
            filled = fill_holes(region, fill_holes_area,
                                protected=protected | ((labels != 0) & ~region))
            labels[filled & ~region] = label
    return labels
