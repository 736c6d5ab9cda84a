"""Small helpers for code that takes NumPy or CuPy arrays alike, shared by the whole library:
the array module of some arrays, host copies, and images as float64 ``(..., C)`` values.
Imports nothing of graphcut at module level."""

from __future__ import annotations

import numpy as np


#: CuPy's CUB block reduction (``all()``, ``sum()`` of a whole array) compiles one kernel per
#: power-of-two size class of arrays up to this many elements (blocks of 32 to 256 threads),
#: and one more serves every larger array (512 threads): about 2.5 s each on an H100 with an
#: empty kernel cache. Reductions over arrays whose size follows the user's input (a stroke's
#: pixels) stay on the host up to this size (graphcut/models/_samples.py), and
#: :func:`graphcut.segmentation.warm_up` compiles the class above it.
CUB_SIZE_CLASSES_UP_TO = 1024


def to_host(array) -> np.ndarray:
    """``array`` as a NumPy array: a CuPy array is copied from the GPU (``.get()``), anything
    else goes through ``numpy.asarray`` (no copy for a NumPy array)."""
    return array.get() if hasattr(array, "get") else np.asarray(array)


def array_module(*arrays):
    """``cupy`` when any of ``arrays`` is a CuPy array, else ``numpy``."""
    for array in arrays:
        if type(array).__module__.split(".")[0] == "cupy":
            import cupy
            return cupy
    return np


def energy_kernels():
    """The host code of the GPU energy kernels (imported only for CuPy arrays): the one place
    that names their module."""
    import graphcut.segmentation.energy_kernels as kernels
    return kernels


def same_device(array, like):
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
        values, nonfinite = energy_kernels().image_to_float(image, divisor)
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


__all__ = ["array_module", "energy_kernels", "image_as_float", "same_device", "to_host"]
