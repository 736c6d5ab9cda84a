"""napari layers as the segmentation controller wants them, and back. No Qt in here.

- The image: a layer's data with its channel axis (asked for, never guessed, see
  :data:`CHANNEL_CHOICES`) moved last, the spatial axes' scale as the voxel spacing.
- The scribbles: a Labels layer of the image's spatial shape whose values are graphcut's
  seed labels (graphcut.io): 0 none, 1 the object, 2 the background, 3 .. 254 further
  objects.
- The output: a Labels layer the plugin made (it is known by identity, never by name) holding
  the scribbles' label values (1 the object, 3+ further objects, 0 the rest), coloured unlike
  the scribbles so that both stay visible.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from graphcut.io import BACKGROUND, FOREGROUND

OBJECT_LABEL, BACKGROUND_LABEL = FOREGROUND, BACKGROUND
# The largest scribble label that is a seed (graphcut's seed labels fit in a byte, 255 unused).
MAX_LABEL = 254

# What the channel choice means: where a non-RGB image keeps its channels.
CHANNEL_CHOICES = {
    "ask": "choose: none / first / last",
    "none": "none (grey image or volume)",
    "first": "first axis (C, Y, X)",
    "last": "last axis (Y, X, C)",
}
# The mask layer's colours: napari's cyclic label colours from another seed than a new
# Labels layer's (0.5), so that no label shows in the scribbles' colour.
MASK_COLOUR_SEED = 0.2
MASK_OPACITY = 0.5


class LayerError(ValueError):
    """The layers cannot be segmented as chosen; the message says what to change."""


class ChoiceNeeded(LayerError):
    """A choice only the user can make is missing (the channel axis): a status, not a
    failure."""


@dataclass(frozen=True)
class PreparedImage:
    """An image layer's data as the controller opens it.

    Attributes:
        data: the array, channels (if any) on the last axis (a view where possible).
        channel_axis: -1 (channels last) or None (grey).
        shape: the spatial shape (that of the scribbles and the mask).
        spacing: the spatial axes' scale (the voxel spacing), None when all are 1.
        scale, translate: the spatial axes' layer scale and translation (for the mask layer).
    """

    data: np.ndarray
    channel_axis: int | None
    shape: tuple
    spacing: tuple | None
    scale: tuple
    translate: tuple


def needs_channel_choice(layer) -> bool:
    """Whether an image layer's channels must be asked for: any non-RGB image of 3 or more
    axes could be a volume or have channels first or last."""
    return not layer.rgb and np.ndim(layer.data) >= 3


def prepare_image(layer, channels: str = "ask") -> PreparedImage:
    """The controller's view of an image layer.

    Parameters
    ----------
    layer : napari.layers.Image
        (Y, X) grey, (Y, X, 3 or 4) RGB(A) (``layer.rgb``), (Z, Y, X) grey volume, or an image
        whose channels are on the first or last axis.
    channels : str
        A key of :data:`CHANNEL_CHOICES`: "none", "first" or "last" (RGB layers and 2-D
        images ignore it; "ask" is refused for images that need the choice).

    Returns
    -------
    PreparedImage

    Raises
    ------
    ChoiceNeeded
        The channel axis is not chosen for an image that needs it.
    LayerError
        The image has fewer than 2 or more than 3 spatial axes.
    """
    data = layer.data
    ndim = np.ndim(data)
    scale, translate = tuple(layer.scale), tuple(layer.translate)
    if layer.rgb:
        channel_axis, spatial = -1, list(range(ndim - 1))
    elif ndim == 2 or channels == "none":
        channel_axis, spatial = None, list(range(ndim))
    elif channels in ("first", "last"):
        channel_axis = -1
        spatial = list(range(1, ndim)) if channels == "first" else list(range(ndim - 1))
        if channels == "first":
            data = np.moveaxis(np.asarray(data), 0, -1)
    else:
        raise ChoiceNeeded(f"'{layer.name}' has shape {tuple(np.shape(data))}: choose its "
                         "channels (none for a grey volume, first for (C, Y, X), last for "
                         "(Y, X, C))")
    data = np.asarray(data)
    shape = tuple(data.shape if channel_axis is None else data.shape[:-1])
    if len(shape) not in (2, 3):
        raise LayerError(f"'{layer.name}' has shape {tuple(layer.data.shape)}, which leaves "
                         f"{len(shape)} spatial axes; graphcut segments 2-D images and 3-D "
                         "volumes")
    # a layer's scale and translate cover its axes (an RGB layer's: the spatial ones)
    axes = spatial if len(scale) == ndim else list(range(len(scale)))
    spatial_scale = tuple(float(scale[a]) for a in axes)
    spatial_translate = tuple(float(translate[a]) for a in axes)
    spacing = None if all(s == 1.0 for s in spatial_scale) else spatial_scale
    return PreparedImage(data, channel_axis, shape, spacing, spatial_scale, spatial_translate)


def as_seeds(labels, region=None) -> np.ndarray:
    """graphcut seed labels (uint8) from (a region of) a scribbles layer's data: the values are
    the seed labels themselves (0 none, 1 object, 2 background, 3 .. 254 more objects).

    Parameters
    ----------
    labels : array_like
        The scribbles layer's data (any integer dtype).
    region : tuple of slice, optional
        Only this part (one slice per axis); None: all of it.

    Returns
    -------
    numpy.ndarray
        uint8, the region's shape.

    Raises
    ------
    LayerError
        A label below 0 or above :data:`MAX_LABEL`.

    Examples
    --------
    >>> as_seeds(np.array([[0, 1, 2, 3]], dtype=np.int64)).dtype
    dtype('uint8')
    """
    part = np.asarray(labels if region is None else labels[region])
    if part.dtype == np.uint8:
        if part.size and part.max() > MAX_LABEL:
            raise LayerError(f"scribble label 255 is not a seed label (0 none, 1 object, "
                             f"2 background, 3 .. {MAX_LABEL} more objects)")
        return part
    if part.size and (part.min() < 0 or part.max() > MAX_LABEL):
        bad = part.min() if part.min() < 0 else part.max()
        raise LayerError(f"scribble label {bad} is not a seed label (0 none, 1 object, "
                         f"2 background, 3 .. {MAX_LABEL} more objects)")
    return part.astype(np.uint8)


def changed_region(old: np.ndarray, new: np.ndarray):
    """The bounding box of the elements where ``old`` and ``new`` differ, as a tuple of slices
    (one per axis), or None when they are equal. Equal arrays of one dtype are recognised 8
    bytes at a time (a 256^3 uint8 volume in a few ms)."""
    if (old.dtype == new.dtype and old.flags.c_contiguous and new.flags.c_contiguous
            and old.nbytes % 8 == 0 and old.shape == new.shape):
        if np.array_equal(old.reshape(-1).view(np.uint64), new.reshape(-1).view(np.uint64)):
            return None
    changed = old != new
    if not changed.any():
        return None
    region = []
    for axis in range(changed.ndim):
        others = tuple(a for a in range(changed.ndim) if a != axis)
        where = np.flatnonzero(changed.any(axis=others))
        region.append(slice(int(where[0]), int(where[-1]) + 1))
    return tuple(region)


def union_regions(first, second):
    """The bounding box of two regions (tuples of slices with explicit bounds; None is
    empty)."""
    if first is None or second is None:
        return second if first is None else first
    return tuple(slice(min(a.start, b.start), max(a.stop, b.stop))
                 for a, b in zip(first, second))


def paint_region(atoms, shape):
    """The bounding box (a tuple of slices) of a Labels ``paint`` event's history atoms, or None
    when their form is unknown (the caller then compares the whole array)."""
    bounds = None
    try:
        for atom in atoms:
            key = getattr(atom, "slice_key", None)
            if key is not None:
                box = [s.indices(n)[:2] for s, n in zip(key, shape)]
            else:
                indices = atom[0]
                if len(indices) != len(shape) or len(indices[0]) == 0:
                    continue
                box = [(int(np.min(i)), int(np.max(i)) + 1) for i in indices]
            bounds = box if bounds is None else [
                (min(a[0], b[0]), max(a[1], b[1])) for a, b in zip(bounds, box)]
    except (TypeError, IndexError, AttributeError, ValueError):
        return None
    if bounds is None or len(bounds) != len(shape):
        return None
    return tuple(slice(a, b) for a, b in bounds)


def mask_colormap():
    """The mask layer's colours: napari's cyclic label colours, from a seed unlike the
    scribbles' (:data:`MASK_COLOUR_SEED`)."""
    from napari.utils.colormaps import label_colormap
    return label_colormap(seed=MASK_COLOUR_SEED)


def upscale_into(out: np.ndarray, small: np.ndarray, factor: int, region=None):
    """Write a preview mask on a grid reduced ``factor`` times into ``out`` (2-D, the full
    grid): each coarse pixel becomes a ``factor`` x ``factor`` block, cut at the far edges.
    Row by row into the existing array (no full-size temporary: at 12 MP a few ms).

    Parameters
    ----------
    out : numpy.ndarray
        (H, W), written in place.
    small : numpy.ndarray
        (ceil(H / factor), ceil(W / factor)) bool or uint8.
    factor : int
        The reduction.
    region : tuple of slice, optional
        Only this box of ``out`` (rows, columns; explicit bounds), widened to whole blocks;
        None: all of it.

    Returns
    -------
    tuple of slice
        The box written (``region`` widened to whole blocks and cut at the edges).
    """
    rows, cols = out.shape
    if region is None:
        region = (slice(0, rows), slice(0, cols))
    (r0, r1), (c0, c1) = ((s.start // factor, -(-s.stop // factor)) for s in region)
    box = (slice(r0 * factor, min(rows, r1 * factor)), slice(c0 * factor, min(cols, c1 * factor)))
    target = out[box]
    wide = np.repeat(small[r0:r1, c0:c1].view(np.uint8), factor, axis=1)[:, :target.shape[1]]
    for offset in range(factor):
        target[offset::factor] = wide[:len(range(offset, target.shape[0], factor))]
    return box


def foreground_box(mask: np.ndarray, factor: int = 1):
    """The bounding box (a tuple of slices) of a mask's non-zero elements, scaled ``factor``
    times (the box on the full grid of a preview's mask), or None when all are zero."""
    box = []
    for axis in range(mask.ndim):
        others = tuple(a for a in range(mask.ndim) if a != axis)
        where = np.flatnonzero(mask.any(axis=others))
        if where.size == 0:
            return None
        box.append(slice(int(where[0]) * factor, (int(where[-1]) + 1) * factor))
    return tuple(box)
