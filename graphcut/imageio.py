"""Reading images and writing masks and overlays (Pillow; tifffile for 16-bit colour TIFF).

Every writer saves to a temporary name in the destination folder and renames it into place
(``os.replace``), so a reader never sees a half-written file, and refuses to overwrite the
paths passed as ``inputs``.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

# File suffixes treated as images when scanning folders (batch).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")

# Pillow modes returned as they are; every other mode is converted to RGB (or RGBA when the
# image has transparency).
_NATIVE_MODES = ("1", "L", "LA", "RGB", "RGBA", "I", "I;16", "F")

# Created files get the permissions a plain open() would give (mkstemp uses 0600).
_UMASK = os.umask(0)
os.umask(_UMASK)


class ImageReadError(OSError):
    """A file cannot be read as an image; the message names the file and the reason."""


@contextlib.contextmanager
def open_image(path, *, max_pixels: int | None = None):
    """Open and decode an image file with Pillow, yielding the loaded ``PIL.Image``.

    EXIF orientation is applied (the pixels are oriented as viewers show them).

    Args:
        path: the file.
        max_pixels: refuse images with more pixels than this (a guard against decompression
            bombs: tiny files that decode to huge images). ``None``: Pillow's
            ``Image.MAX_IMAGE_PIXELS`` (about 89 million).

    Raises:
        ImageReadError: missing file, not an image, truncated or corrupt data, or too many
            pixels; the message names the file.
    """
    name = os.fspath(path)
    limit = Image.MAX_IMAGE_PIXELS if max_pixels is None else int(max_pixels)
    try:
        with warnings.catch_warnings():
            # the explicit size check below replaces Pillow's warning
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(name)
    except FileNotFoundError:
        raise ImageReadError(f"{name}: no such file") from None
    except IsADirectoryError:
        raise ImageReadError(f"{name}: is a folder, not an image file") from None
    except UnidentifiedImageError:
        raise ImageReadError(f"{name}: not an image file that can be read (expected PNG, JPEG, "
                             "TIFF, BMP, ...)") from None
    except Image.DecompressionBombError:
        raise ImageReadError(f"{name}: the image declares more than {2 * Image.MAX_IMAGE_PIXELS} "
                             "pixels; refusing to decode it (decompression bomb guard)") from None
    except (OSError, SyntaxError, ValueError) as error:
        raise ImageReadError(f"{name}: cannot read the image ({error or type(error).__name__}); "
                             "the file may be truncated or corrupt") from None
    with image:
        width, height = image.size
        if limit and width * height > limit:
            raise ImageReadError(
                f"{name}: {width}x{height} pixels is more than the limit of {limit} pixels; "
                "refusing to decode it (decompression bomb guard; raise max_pixels or "
                "PIL.Image.MAX_IMAGE_PIXELS if the image is genuine)")
        try:
            image.load()
            ImageOps.exif_transpose(image, in_place=True)
        except (OSError, SyntaxError, ValueError, EOFError) as error:
            reason = str(error) or type(error).__name__
            raise ImageReadError(f"{name}: cannot decode the image data ({reason}); the file may "
                                 "be truncated or corrupt") from None
        yield image


def read_image(path, *, max_pixels: int | None = None) -> np.ndarray:
    """Read an image file into a NumPy array.

    PNG, JPEG, TIFF, BMP and whatever else Pillow reads. The result is

    - bool (H, W) for 1-bit images;
    - uint8 (H, W) grey, (H, W, 2) grey + alpha, (H, W, 3) RGB or (H, W, 4) RGBA;
    - uint16 (H, W) for 16-bit grey PNG / TIFF, and uint16 (H, W, 3 or 4) for 16-bit colour
      TIFF (read with tifffile; Pillow itself reduces 16-bit colour to 8 bits, so 16-bit colour
      PNGs arrive as 8-bit RGB);
    - int32 or float32 (H, W) for 32-bit integer or float TIFFs.

    Palette images become RGB (RGBA when they have transparency); CMYK, YCbCr, LAB and HSV
    become RGB. Multi-frame files (GIF, TIFF stacks): the first frame.

    Raises:
        ImageReadError: unreadable, truncated, non-image or over-large file (see
            :func:`open_image`); the message names the file.
    """
    with open_image(path, max_pixels=max_pixels) as image:
        if _is_deep_colour_tiff(image):
            return _read_tiff_page(path)
        if image.mode.startswith("I;16"):
            return np.asarray(image).astype(np.uint16)
        if image.mode not in _NATIVE_MODES:
            has_alpha = "A" in image.mode or "transparency" in image.info
            image = image.convert("RGBA" if has_alpha else "RGB")
        return np.array(image)


def _is_deep_colour_tiff(image) -> bool:
    if image.format != "TIFF":
        return False
    bits = image.tag_v2.get(258, (8,))
    bits = bits if isinstance(bits, tuple) else (bits,)
    return len(bits) >= 3 and max(bits) > 8


def _read_tiff_page(path) -> np.ndarray:
    import tifffile
    try:
        with tifffile.TiffFile(os.fspath(path)) as tif:
            return np.asarray(tif.pages[0].asarray())
    except Exception as error:  # tifffile raises many types for bad files
        raise ImageReadError(f"{os.fspath(path)}: cannot decode the 16-bit colour TIFF "
                             f"({error})") from None


def _refuse_inputs(path: Path, inputs) -> None:
    for source in inputs:
        if source is None:
            continue
        if path.exists() and Path(source).exists() and os.path.samefile(path, source):
            raise ValueError(f"refusing to overwrite the input file {os.fspath(source)!r} with "
                             "an output; choose another output path")


def atomic_write(path, write, *, inputs=(), mode="wb") -> None:
    """Create or replace ``path`` atomically: ``write(handle)`` fills a temporary file in the
    same folder, which is then renamed over ``path`` (``os.replace``). On any error the
    temporary file is removed and ``path`` is left as it was.

    Raises:
        ValueError: ``path`` is one of ``inputs`` (an existing file it must not replace).
        FileNotFoundError: the destination folder does not exist.
        OSError: the file cannot be written (read-only folder, disk full, ...); the message
            names ``path`` and the reason, and ``errno`` is kept.
    """
    path = Path(path)
    _refuse_inputs(path, inputs)
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {os.fspath(path)!r}: the folder "
                                f"{os.fspath(folder)!r} does not exist")
    try:
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.",
                                                 suffix=".tmp")
    except OSError as error:
        raise _write_error(path, error) from None
    try:
        text = {} if "b" in mode else {"newline": "", "encoding": "utf-8"}
        with os.fdopen(descriptor, mode, **text) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, 0o666 & ~_UMASK)
        os.replace(temporary, path)
    except BaseException as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(error, OSError):
            raise _write_error(path, error) from None
        raise


def _write_error(path, error: OSError) -> OSError:
    """``error`` reworded to name the file being written (not its temporary name), keeping
    its type (PermissionError, ...) where it is a built-in one."""
    reason = error.strerror or str(error) or type(error).__name__
    message = f"cannot write {os.fspath(path)!r}: {reason}"
    if error.errno is None:
        return OSError(message)
    kind = type(error) if type(error).__module__ == "builtins" else OSError
    return kind(error.errno, message)


def atomic_save(image: Image.Image, path, *, inputs=(), **save_options) -> None:
    """Save a Pillow image to ``path`` atomically (:func:`atomic_write`); the format follows
    the suffix of ``path``.

    Raises:
        ValueError: ``path`` is one of ``inputs`` or has an unknown image suffix.
        FileNotFoundError: the destination folder does not exist.
    """
    suffix = Path(path).suffix
    file_format = Image.registered_extensions().get(suffix.lower())
    if file_format is None:
        raise ValueError(f"{os.fspath(path)!r}: unknown image file suffix {suffix!r}; use .png")
    atomic_write(path, lambda handle: image.save(handle, format=file_format, **save_options),
                 inputs=inputs)


def _as_mask(mask, name: str = "mask") -> np.ndarray:
    mask = mask.get() if hasattr(mask, "get") else np.asarray(mask)
    if mask.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (H, W) array, got shape {mask.shape}")
    return mask.astype(bool)


def write_mask(path, mask, *, inputs=()) -> None:
    """Write a mask as an 8-bit grey PNG, 0 = background, 255 = object (nonzero), atomically.

    ``inputs``: paths that must not be overwritten (the image and seed files).
    """
    mask = _as_mask(mask)
    atomic_save(Image.fromarray(np.where(mask, 255, 0).astype(np.uint8)), path, inputs=inputs)


def display_rgb(image, *, channel_axis=-1) -> np.ndarray:
    """uint8 (H, W, 3) RGB for showing ``image``: grey replicated, alpha dropped, integer types
    scaled from their full range, float images shown as [0, 1] (or stretched from their own
    range when they leave [0, 1])."""
    from .energy import image_as_float
    values = image_as_float(image, channel_axis=channel_axis)
    values = values.get() if hasattr(values, "get") else values
    low, high = float(values.min()), float(values.max())
    if low < 0.0 or high > 1.0:
        values = (values - low) / (high - low) if high > low else np.zeros_like(values)
    if values.shape[-1] == 1:
        values = np.repeat(values, 3, axis=-1)
    return np.clip(np.rint(values * 255.0), 0, 255).astype(np.uint8)


def _inner_boundary(mask) -> np.ndarray:
    """Object pixels with a 4-neighbour outside the object (the image border does not count)."""
    padded = np.pad(mask, 1, mode="edge")
    interior = (padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:])
    return mask & ~interior


def overlay(image, mask, *, channel_axis=-1, color=(255, 40, 0), opacity=0.45,
            outline=(255, 255, 0)) -> np.ndarray:
    """uint8 (H, W, 3) RGB: ``image`` with the object (``mask`` True) tinted with ``color`` at
    ``opacity`` (0..1) and its boundary pixels painted ``outline`` (``None``: no outline)."""
    rgb = display_rgb(image, channel_axis=channel_axis)
    mask = _as_mask(mask)
    if mask.shape != rgb.shape[:2]:
        raise ValueError(f"mask shape {mask.shape} differs from the image's {rgb.shape[:2]}")
    if not 0.0 <= opacity <= 1.0:
        raise ValueError(f"opacity must be in [0, 1], got {opacity}")
    out = rgb.astype(np.float64)
    out[mask] = (1.0 - opacity) * out[mask] + opacity * np.asarray(color, dtype=np.float64)
    if outline is not None:
        out[_inner_boundary(mask)] = outline
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def write_overlay(path, image, mask, *, channel_axis=-1, inputs=(), **style) -> None:
    """Write :func:`overlay` of ``image`` and ``mask`` to ``path`` (PNG), atomically.

    ``style``: ``color``, ``opacity``, ``outline`` as in :func:`overlay`.
    """
    atomic_save(Image.fromarray(overlay(image, mask, channel_axis=channel_axis, **style)), path,
                inputs=inputs)


__all__ = ["IMAGE_SUFFIXES", "ImageReadError", "atomic_save", "atomic_write", "display_rgb", "open_image",
           "overlay", "read_image", "write_mask", "write_overlay"]
