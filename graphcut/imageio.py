"""Reading images and writing masks and overlays (Pillow; tifffile for 16-bit colour TIFF).

Every writer saves to a temporary name in the destination folder and renames it into place
(``os.replace``), so a reader never sees a half-written file, and refuses to overwrite the
paths passed as ``inputs``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import threading
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

log = logging.getLogger("graphcut.imageio")

# File suffixes treated as images when scanning folders (batch).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")

# Suffixes that masks and label images may be written with: lossless formats only, so that
# 0/255 masks and 0/1/2 labels keep their exact values.
LOSSLESS_SUFFIXES = (".png", ".tif", ".tiff")
_LOSSY_FORMATS = {"JPEG", "MPO", "WEBP", "JPEG2000", "AVIF", "HEIF"}  # as Pillow names them

# Where the pixel limit can be raised, for error messages.
RAISE_LIMIT_ADVICE = ("if the image is genuine, raise the limit: --max-pixels on the command "
                      "line, File > Image size limit in the app, max_pixels= in Python")

# Pillow modes returned as they are; every other mode is converted to RGB (or RGBA when the
# image has transparency).
_NATIVE_MODES = ("1", "L", "LA", "RGB", "RGBA", "I", "I;16", "F")

# Created files get the permissions a plain open() would give (mkstemp uses 0600).
_UMASK = os.umask(0)
os.umask(_UMASK)


class ImageReadError(OSError):
    """A file cannot be read as an image; the message names the file and the reason."""


class ImageTooLargeError(ImageReadError):
    """The image has more pixels than the limit (a decompression-bomb guard).

    Attributes:
        pixels: width × height as the file declares it (None when Pillow refused the file
            before its size could be read: more than twice its limit).
        limit: the limit in force.
    """

    def __init__(self, message: str, *, pixels: int | None, limit: int):
        super().__init__(message)
        self.pixels, self.limit = pixels, limit


# Image.MAX_IMAGE_PIXELS is a module global: it is raised only for reads that ask for a larger
# limit, under this lock, which readers of the default take as well.
_pillow_limit_lock = threading.Lock()


def default_max_pixels() -> int:
    """The pixel limit used when none is given: Pillow's ``Image.MAX_IMAGE_PIXELS``."""
    with _pillow_limit_lock:
        return int(Image.MAX_IMAGE_PIXELS or 0)


@contextlib.contextmanager
def _pillow_allows(limit: int):
    """Let Pillow's own guard (a warning above ``Image.MAX_IMAGE_PIXELS``, an error above
    twice it, checked in ``open``, ``load`` and ``seek``) pass images of up to ``limit``
    pixels (0: any) for the duration. Only a limit above Pillow's changes the global, holding
    the lock until the end."""
    _pillow_limit_lock.acquire()
    saved = Image.MAX_IMAGE_PIXELS
    if not saved or (limit and limit <= saved):
        _pillow_limit_lock.release()
        yield
        return
    Image.MAX_IMAGE_PIXELS = limit or None
    try:
        yield
    finally:
        Image.MAX_IMAGE_PIXELS = saved
        _pillow_limit_lock.release()


@contextlib.contextmanager
def open_image(path, *, max_pixels: int | None = None):
    """Open and decode an image file with Pillow, yielding the loaded ``PIL.Image``.

    EXIF orientation is applied (the pixels are oriented as viewers show them). A file of
    several pages or frames (TIFF stack, animated GIF) yields its first one, and a warning
    saying so is logged (logger ``graphcut.imageio``).

    Args:
        path: the file.
        max_pixels: refuse images with more pixels (width × height) than this, before
            decoding them (a guard against decompression bombs: tiny files that decode to
            huge images); 0: no limit. ``None``: Pillow's ``Image.MAX_IMAGE_PIXELS`` (about
            89 million). A larger value also raises Pillow's own guard for this read.

    Raises:
        ImageTooLargeError: more pixels than the limit (an :class:`ImageReadError`).
        ImageReadError: missing file, not an image, truncated or corrupt data; the message
            names the file.
    """
    name = os.fspath(path)
    limit = default_max_pixels() if max_pixels is None else int(max_pixels)
    with _pillow_allows(limit):
        image = _open_checked(name, limit)
        try:
            _warn_if_several_pages(image, name)
            image.load()
            ImageOps.exif_transpose(image, in_place=True)
        except Image.DecompressionBombError as error:
            image.close()
            raise ImageReadError(f"{name}: {error} (decompression bomb guard; "
                                 f"{RAISE_LIMIT_ADVICE})") from None
        except (OSError, SyntaxError, ValueError, EOFError) as error:
            image.close()
            reason = str(error) or type(error).__name__
            raise ImageReadError(f"{name}: cannot decode the image data ({reason}); the file "
                                 "may be truncated or corrupt") from None
        except BaseException:
            image.close()
            raise
    with image:
        yield image


def _too_large(name: str, limit: int, size=None, pillow_error=None) -> ImageTooLargeError:
    if size is not None:
        width, height = size
        pixels = width * height
        what = f"{width}x{height} = {pixels} pixels is"
    else:  # Pillow refused it first: "Image size (N pixels) exceeds limit of M pixels, ..."
        found = re.search(r"\((\d+) pixels\)", str(pillow_error))
        pixels = int(found.group(1)) if found else None
        what = f"{pixels} pixels is" if found else "the image declares far"
    return ImageTooLargeError(
        f"{name}: {what} more than the limit of {limit} pixels; refusing to decode it "
        f"(decompression bomb guard; {RAISE_LIMIT_ADVICE})", pixels=pixels, limit=limit)


def _open_checked(name: str, limit: int):
    """``Image.open`` with the file's errors reworded and the pixel limit checked."""
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
    except Image.DecompressionBombError as error:
        raise _too_large(name, limit, pillow_error=error) from None
    except (OSError, SyntaxError, ValueError) as error:
        raise ImageReadError(f"{name}: cannot read the image ({error or type(error).__name__}); "
                             "the file may be truncated or corrupt") from None
    if limit and image.size[0] * image.size[1] > limit:
        image.close()
        raise _too_large(name, limit, size=image.size)
    return image


def _warn_if_several_pages(image, name: str) -> None:
    if not getattr(image, "is_animated", False):
        return
    pages = getattr(image, "n_frames", 2)
    log.warning("%s: has %d pages (frames); only the first page was read", name, pages)


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
    become RGB. Multi-page files (TIFF stacks, animated GIF): the first page only, and a
    warning saying so is logged (logger ``graphcut.imageio``).

    Args:
        max_pixels: the largest width × height accepted (see :func:`open_image`); None:
            Pillow's ``Image.MAX_IMAGE_PIXELS`` (about 89 million).

    Raises:
        ImageTooLargeError: more pixels than ``max_pixels``.
        ImageReadError: unreadable, truncated or non-image file (see :func:`open_image`); the
            message names the file.
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


def check_lossless_suffix(path, what: str = "mask") -> None:
    """Refuse a file name whose suffix is not a lossless format (:data:`LOSSLESS_SUFFIXES`).

    Masks and label images must keep their exact values: JPEG or WebP would blur 0/255 into
    every value between.

    Raises:
        ValueError: the suffix is missing or names another format; the message says which.
    """
    suffix = Path(path).suffix
    if suffix.lower() in LOSSLESS_SUFFIXES:
        return
    file_format = Image.registered_extensions().get(suffix.lower())
    if not suffix:
        found = "the file name has no suffix"
    elif file_format is None:
        found = f"the suffix {suffix!r} is not an image format"
    elif file_format in _LOSSY_FORMATS:
        found = f"the suffix {suffix!r} means {file_format}, which is lossy"
    else:
        found = f"the suffix {suffix!r} means {file_format}, which is not one of them"
    raise ValueError(f"{os.fspath(path)!r}: a {what} is written losslessly, as PNG or TIFF, but "
                     f"{found}; use a .png, .tif or .tiff name")


def write_mask(path, mask, *, inputs=()) -> None:
    """Write a mask as an 8-bit grey image, 0 = background, 255 = object (nonzero),
    atomically; the format follows the suffix, which must be lossless (.png, .tif, .tiff).

    ``inputs``: paths that must not be overwritten (the image and seed files).

    Raises:
        ValueError: a lossy or unknown suffix (:func:`check_lossless_suffix`), or ``path`` is
            one of ``inputs``.
    """
    check_lossless_suffix(path, "mask")
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


__all__ = ["IMAGE_SUFFIXES", "ImageReadError", "ImageTooLargeError", "LOSSLESS_SUFFIXES",
           "atomic_save", "atomic_write", "check_lossless_suffix", "default_max_pixels",
           "display_rgb", "open_image", "overlay", "read_image", "write_mask", "write_overlay"]
