"""Seed (scribble) label arrays and the two on-disk seed forms.

A seed array is an integer label array shaped like the image, (H, W), or like the volume,
(D, H, W):
``NONE`` = 0 (no seed), ``FOREGROUND`` = 1 (object), ``BACKGROUND`` = 2. Several objects
(``multi=True``): 1 and 3, 4, ..., ``MAX_LABEL`` (254) are objects, each its own label; 2
stays the background, so a file of one object reads the same either way. 255 is never a
label (a 0 / 255 mask given as seeds is refused with a message that says so).

On disk (see DESIGN.md), a seed file is a PNG the same size as its image, in one of two forms:

- label form: grey (or palette) values 0 / 1 / 2 as above (a palette image is read by its
  palette indices). This is the form :func:`write_seeds` writes.
- stroke form: RGB or RGBA, pure red (255, 0, 0) = foreground, pure blue (0, 0, 255) =
  background; every other colour, and any pixel with alpha 0, is no seed. Anti-aliased stroke
  edges (not exactly pure red or blue) are therefore ignored.
"""

from __future__ import annotations

import os

import numpy as np
from PIL import Image

from graphcut._arrays import energy_kernels, to_host
from graphcut._labels import BACKGROUND, FOREGROUND, MAX_LABEL, NONE

from ._images import default_max_pixels, open_image
from ._writing import _LOSSY_FORMATS, atomic_save, check_lossless_suffix

# Pillow modes read as label values; every other mode is read as a stroke image.
LABEL_MODES = ("1", "L", "P", "I", "I;16", "I;16L", "I;16B", "I;16N")


def image_shape(shape) -> tuple[int, ...]:
    """``shape`` as a tuple of ints, checked to be an image's (H, W) or (H, W, C), or a
    volume's (D, H, W) or (D, H, W, C).

    Raises
    ------
    ValueError
        not a sequence of 2 to 4 non-negative integers; the message shows it.
    """
    try:
        values = tuple(shape)
        ok = len(values) in (2, 3, 4) and all(
            not isinstance(v, bool) and int(v) == v and v >= 0 for v in values)
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise ValueError(f"shape must be the image's (H, W) or (H, W, C) (a volume's (D, H, W) "
                         f"or (D, H, W, C)) as integers, got {shape!r}")
    return tuple(int(v) for v in values)


def _size_text(shape) -> str:
    if len(shape) == 3:
        return f"{shape[2]}x{shape[1]}x{shape[0]} (width x height x depth)"
    return f"{shape[1]}x{shape[0]} (width x height)"


#: several objects' uint8 seeds on a GPU are checked and listed from one per-value count on
#: the device (:func:`checked_objects`); False: from a host copy (the state before the
#: seventeenth session, for A/B runs)
DEVICE_HISTOGRAM = True


def check_seeds(seeds, shape=None, *, name: str = "seeds", require_both: bool = True,
                multi: bool = False):
    """Validate a seed label array and return it unchanged.

    Parameters
    ----------
    seeds
        (H, W) (or (D, H, W) for a volume) integer array (NumPy or CuPy) of 0 / 1 / 2
        labels.
    shape
        the image's (H, W) (or the volume's (D, H, W)); longer shapes are compared on
        their first ``seeds.ndim`` entries; ``None`` skips the size check.
    name
        how error messages call the seeds (e.g. the file they came from).
    require_both
        also require at least one foreground and one background seed.
    multi
        accept several objects (labels 1 and 3 .. 254; with ``require_both``, any
        object label counts as an object seed).

    Raises
    ------
    TypeError
        ``seeds`` is not an integer array.
    ValueError
        wrong number of dimensions, size different from ``shape``, unknown label
        values, or (``require_both``) no object or no background seed.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import check_seeds
    >>> seeds = np.array([[1, 0], [0, 2]], np.uint8)
    >>> check_seeds(seeds, (2, 2)) is seeds
    True
    >>> check_seeds(np.array([[1, 0], [0, 0]]), (2, 2))
    Traceback (most recent call last):
        ...
    ValueError: ...background...
    """
    seeds = _check_array(seeds, shape, name)
    if type(seeds).__module__.split(".")[0] == "cupy":
        _check_device_labels(seeds, name, require_both, multi)
        return seeds
    _check_host_labels(seeds, name, require_both, multi)
    return seeds


def _check_array(seeds, shape, name: str):
    """The dtype, dimension and shape checks of :func:`check_seeds`; returns ``seeds`` (a
    NumPy array unless it is a CuPy one)."""
    if shape is not None:
        shape = image_shape(shape)
    if type(seeds).__module__.split(".")[0] != "cupy":
        seeds = np.asarray(seeds)
    if seeds.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer label array (0 = none, 1 = foreground, "
                        f"2 = background), got dtype {seeds.dtype}")
    if seeds.ndim not in (2, 3):
        raise ValueError(f"{name} must be a 2-D (H, W) or 3-D (D, H, W) label array, got shape "
                         f"{seeds.shape}")
    if shape is not None and len(shape) < seeds.ndim:
        raise ValueError(f"{name} must be a {len(shape)}-D label array like the image "
                         f"{tuple(shape)}, got shape {seeds.shape}")
    if shape is not None and tuple(seeds.shape) != tuple(shape[:seeds.ndim]):
        expected = _size_text(tuple(shape[:seeds.ndim]))
        raise ValueError(f"{name} are {_size_text(seeds.shape)} but the image is {expected}; "
                         "seeds must be the same size as the image")
    return seeds


def checked_objects(seeds, shape=None, *, name: str = "seeds", require_both: bool = True):
    """:func:`check_seeds` (``multi=True``) and :func:`object_labels` at once: on a GPU
    uint8 seeds are counted per value in one pass (no copy to the host); other dtypes, and
    values above 254, come to the host once for both (which also words the error).

    Returns
    -------
    tuple
        ``(seeds, objects)``: the seeds unchanged and their object labels, ascending.

    Examples
    --------
    >>> import numpy as np
    >>> checked_objects(np.array([[1, 0], [4, 2]], np.uint8), (2, 2))[1]
    [1, 4]
    """
    seeds = _check_array(seeds, shape, name)
    if type(seeds).__module__.split(".")[0] == "cupy":
        counts = _device_value_counts(seeds)
        if counts is not None and not counts[MAX_LABEL + 1:].any():
            objects = _objects_counted(counts)
            _require(bool(objects), bool(counts[BACKGROUND]), name, require_both)
            return seeds, objects
        object_seeds, host = _check_device_labels(seeds, name, require_both, multi=True)
        if host is None:  # every label 0..2: no copy was needed
            return seeds, [FOREGROUND] if object_seeds else []
        return seeds, object_labels(host)  # further objects: listed from the copy checked
    _check_host_labels(seeds, name, require_both, multi=True)
    return seeds, object_labels(seeds)


def _require(object_seeds, background_seeds, name, require_both) -> None:
    if require_both and not object_seeds:
        raise ValueError(f"{name} contain no foreground seed (label 1 / red stroke); mark at "
                         "least one pixel of the object")
    if require_both and not background_seeds:
        raise ValueError(f"{name} contain no background seed (label 2 / blue stroke); mark "
                         "at least one background pixel")


def _check_host_labels(seeds, name: str, require_both: bool, multi: bool) -> None:
    """The label checks of :func:`check_seeds` for a NumPy array."""
    highest = MAX_LABEL if multi else BACKGROUND
    marked = seeds[seeds != NONE]  # seeds mark few pixels: the checks read only those
    if marked.size and (int(marked.min()) < NONE or int(marked.max()) > highest):
        bad = (marked < NONE) | (marked > highest)
        values = sorted({int(v) for v in marked[bad]})
        shown = ", ".join(map(str, values[:8])) + (", ..." if len(values) > 8 else "")
        expected = ("0 (none), 2 (background) and object labels 1, 3 .. 254" if multi
                    else "0 (none), 1 (foreground) and 2 (background)")
        hint = "; 255 looks like a 0/255 mask, not seeds" if 255 in values else ""
        raise ValueError(f"{name} contain unknown label values {shown}; expected only "
                         f"{expected}{hint}")
    if require_both:
        has_object = _has_label(marked, FOREGROUND) or (
            multi and bool((marked != BACKGROUND).any()))
        if not has_object:
            raise ValueError(f"{name} contain no foreground seed (label 1 / red stroke); mark at "
                             "least one pixel of the object")
        if not _has_label(marked, BACKGROUND):
            raise ValueError(f"{name} contain no background seed (label 2 / blue stroke); mark "
                             "at least one background pixel")


def _check_device_labels(seeds, name: str, require_both: bool, multi: bool = False):
    """The label checks of :func:`check_seeds` for a CuPy array: one kernel of the shipped
    energy kernels counts the labels 1, 2 and any other (no CuPy kernel is compiled, see
    graphcut/segmentation/_boykov_jolly.py). Other values (an error, or with ``multi`` further
    objects) are checked on a host copy, which also words the error. Returns ``(pixels
    labelled 1, the host copy or None)``."""
    object_seeds, background_seeds, bad = _device_label_counts(seeds)
    if bad:
        host = seeds.get()
        _check_host_labels(host, name, require_both, multi)
        return object_seeds, host
    _require(object_seeds, background_seeds, name, require_both)
    return object_seeds, None


def _has_label(seeds, label) -> bool:
    """Whether any pixel has ``label``."""
    return seeds.size > 0 and bool((seeds == label).any())


def strokes_to_labels(rgba) -> np.ndarray:
    """Labels (uint8, (H, W)) of a stroke image: (H, W, 3) RGB or (H, W, 4) RGBA, uint8.

    Pure red is foreground, pure blue background; other colours and alpha 0 are no seed.
    """
    rgba = np.asarray(rgba)
    if rgba.ndim != 3 or rgba.shape[-1] not in (3, 4) or rgba.dtype != np.uint8:
        raise ValueError("a stroke image must be uint8 RGB or RGBA, got shape "
                         f"{rgba.shape} and dtype {rgba.dtype}")
    r, g, b = rgba[..., 0], rgba[..., 1], rgba[..., 2]
    visible = rgba[..., 3] > 0 if rgba.shape[-1] == 4 else True
    labels = np.zeros(rgba.shape[:2], dtype=np.uint8)
    labels[(r == 255) & (g == 0) & (b == 0) & visible] = FOREGROUND
    labels[(r == 0) & (g == 0) & (b == 255) & visible] = BACKGROUND
    return labels


# (label, its name, the pure colour, the channel that must dominate) for stroke-form errors
_STROKE_COLOURS = ((FOREGROUND, "foreground", "red", (255, 0, 0), 0),
                   (BACKGROUND, "background", "blue", (0, 0, 255), 2))


def _check_stroke_colours(rgba: np.ndarray, labels: np.ndarray, name: str) -> None:
    """Raise a ValueError when a stroke image lacks pure red or pure blue pixels, naming the
    nearly red (blue) colours it has instead, if any (anti-aliased, JPEG or off-colour strokes).
    """
    visible = rgba[..., 3] > 0
    for label, role, colour_name, pure, channel in _STROKE_COLOURS:
        if bool((labels == label).any()):
            continue
        others = [c for c in range(3) if c != channel]
        near = visible & (rgba[..., channel] >= 128) \
            & (rgba[..., others[0]] < 100) & (rgba[..., others[1]] < 100)
        found = _common_colours(rgba[near])
        if found:
            hint = (f"; nearly {colour_name} colours found: {found}, but only exactly pure "
                    f"{colour_name} counts (anti-aliased, JPEG-compressed or off-colour strokes "
                    "are not seeds)")
        else:
            coloured = visible & rgba[..., :3].any(axis=-1)
            found = _common_colours(rgba[coloured])
            hint = f"; its most common colours are {found}" if found else ""
        raise ValueError(f"{name} contain no {role} seed: no pixel is pure {colour_name} "
                         f"{pure} in this stroke-form (colour) seed file{hint}; paint the "
                         f"{role} strokes in exactly {pure}, or save label-form seeds (grey "
                         "0 / 1 / 2)")


def _common_colours(pixels: np.ndarray, count: int = 3) -> str:
    """The ``count`` most frequent RGB colours of (N, 3 or 4) ``pixels``, as text."""
    if not len(pixels):
        return ""
    colours, counts = np.unique(pixels[:, :3], axis=0, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:count]
    return ", ".join(f"({', '.join(str(int(v)) for v in colours[i])}) in {int(counts[i])} "
                     f"pixel{'s' if counts[i] != 1 else ''}" for i in order)


def read_seeds(path, shape=None, *, require_both: bool = True,
               max_pixels: int | None = None, multi: bool = False) -> np.ndarray:
    """Read a seed file in label or stroke form (see the module docstring).

    Parameters
    ----------
    path
        the seed PNG (any format Pillow reads works).
    shape
        the image's (H, W) (or (H, W, C)); when given, the seeds must have that size.
    require_both
        require at least one foreground and one background seed (False reads
        partial seeds, e.g. work saved from the desktop app before it was finished).
    max_pixels
        the largest width × height accepted (a decompression-bomb guard, as in
        :func:`graphcut.read_image`). None: Pillow's limit, or the image's size from
        ``shape`` when that is larger (the seeds must have the image's size anyway).
    multi
        accept several objects (label form: 1 and 3 .. 254 are objects).

    Returns
    -------
    numpy.ndarray
        uint8 (H, W) labels: 0 none, 1 foreground, 2 background (``multi``: 3 .. 254 further
        objects).

    Raises
    ------
    ImageReadError
        the file cannot be read as an image.
    ValueError
        size differs from ``shape``, unknown label values, no foreground or no
        background seed, label-form seeds in a lossy format (JPEG), floating-point values;
        every message names the file.

    Examples
    --------
    Both forms on disk read to the same labels: label values, or red / blue strokes:

    >>> import numpy as np
    >>> from PIL import Image
    >>> from graphcut import read_seeds, write_seeds
    >>> labels = np.array([[1, 0, 0], [0, 0, 2]], np.uint8)
    >>> write_seeds("labels.png", labels)
    >>> read_seeds("labels.png", (2, 3))
    array([[1, 0, 0],
           [0, 0, 2]], dtype=uint8)
    >>> strokes = np.zeros((2, 3, 3), np.uint8)
    >>> strokes[0, 0] = (255, 0, 0)      # pure red: object
    >>> strokes[1, 2] = (0, 0, 255)      # pure blue: background
    >>> Image.fromarray(strokes).save("strokes.png")
    >>> bool((read_seeds("strokes.png", (2, 3)) == labels).all())
    True
    """
    name = f"seeds {os.fspath(path)!r}"
    if shape is not None:
        shape = image_shape(shape)
    if max_pixels is None and shape is not None:
        max_pixels = max(default_max_pixels(), int(shape[0]) * int(shape[1]))
    with open_image(path, max_pixels=max_pixels) as im:
        _refuse_inexact(im, name)
        if im.mode in LABEL_MODES:
            labels = np.asarray(im)
            if labels.dtype == bool:
                labels = labels.astype(np.uint8)
        elif im.mode in ("LA", "La"):
            grey_alpha = np.asarray(im.convert("LA"))
            labels = np.where(grey_alpha[..., 1] > 0, grey_alpha[..., 0], 0).astype(np.uint8)
        else:
            rgba = np.asarray(im.convert("RGBA"))
            labels = strokes_to_labels(rgba)
            check_seeds(labels, shape, name=name, require_both=False)
            _check_stroke_colours(rgba, labels, name)
    check_seeds(labels, shape, name=name, require_both=require_both, multi=multi)
    return labels.astype(np.uint8, copy=False)


def _refuse_inexact(image, name: str) -> None:
    """ValueError for a seed file whose labels cannot be exact: grey (label-form) values in a
    lossy format (JPEG ringing turns 1 and 2 into 3, 4, ...: phantom objects), or floating-point
    values (not labels, and not stroke colours either)."""
    lossy = image.format in _LOSSY_FORMATS
    if image.mode in ("F", "I;16F", "F;32BF") or image.mode.startswith("F"):
        raise ValueError(f"{name} hold floating-point values (a float image); seeds are "
                         "integer labels (grey 0 none / 1 object / 2 background, further "
                         "objects 3 ..) or pure red / blue strokes on RGB; save them as an "
                         "8-bit PNG")
    if lossy and (image.mode in LABEL_MODES or image.mode in ("LA", "La")):
        raise ValueError(f"{name} are label-form (grey) seeds in a lossy {image.format} file: "
                         "its compression changes the label values (ringing around strokes "
                         "becomes labels 3, 4, ..., phantom objects), so they cannot be used; "
                         "save label seeds as PNG or TIFF")


def _device_label_counts(seeds) -> tuple[int, int, int]:
    """(pixels labelled 1, labelled 2, with any other value but 0) of a CuPy label array, by
    the shipped seed-label kernel (one pass, three counts back); dtypes it does not read count
    every pixel as "other"."""
    try:
        return energy_kernels().seed_labels(seeds)[1]
    except TypeError:
        return 0, 0, int(seeds.size)


def _device_value_counts(seeds):
    """Per value, the pixels of uint8 CuPy ``seeds`` (host counts, one pass on the device),
    or None (another dtype or layout, or :data:`DEVICE_HISTOGRAM` off)."""
    return energy_kernels().label_histogram(seeds) if DEVICE_HISTOGRAM else None


def _objects_counted(counts) -> list[int]:
    """The object labels (every value but 0 and 2) with pixels in per-value ``counts``."""
    return [int(v) for v in np.flatnonzero(counts) if v != BACKGROUND]


def object_labels(seeds) -> list[int]:
    """The object labels present in ``seeds`` (every value but 0 and 2), ascending."""
    if type(seeds).__module__.split(".")[0] == "cupy":
        counts = _device_value_counts(seeds)
        if counts is not None:
            return _objects_counted(counts)
        object_seeds, _, other = _device_label_counts(seeds)
        if not other:  # the usual case: no label above 2, no sort of the whole array
            return [FOREGROUND] if object_seeds else []
        seeds = seeds.get()  # further objects: as check_seeds, on the host
    seeds = np.asarray(seeds)
    values = np.unique(seeds[seeds != NONE])  # seeds mark few pixels: sort only those
    return [int(v) for v in values if v != BACKGROUND]


def write_seeds(path, labels, *, inputs=()) -> None:
    """Write seed labels in label form: an 8-bit grey PNG of 0 / 1 / 2 (and further object
    labels 3 .. 254), atomically.

    Partial seeds (only one of foreground / background) are allowed here. ``inputs`` lists
    paths that must not be overwritten (e.g. the image the seeds belong to). The suffix must be
    lossless (.png, .tif, .tiff): a ValueError says so otherwise.
    """
    check_lossless_suffix(path, "seed label image")
    labels = check_seeds(to_host(labels), name="labels", require_both=False, multi=True)
    atomic_save(Image.fromarray(labels.astype(np.uint8)), path, inputs=inputs)


__all__ = [
    "NONE", "FOREGROUND", "BACKGROUND", "LABEL_MODES", "MAX_LABEL", "check_seeds",
    "checked_objects",
    "image_shape", "object_labels", "read_seeds", "strokes_to_labels", "write_seeds",
]
