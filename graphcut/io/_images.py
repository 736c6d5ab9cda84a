"""Reading images (Pillow; tifffile for the TIFFs Pillow cannot read: 16-bit colour, float
colour, float64), with the size guards that refuse decompression bombs and images too large
for the memory available. Writers are in :mod:`._writing` and :mod:`._overlay`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import warnings
from typing import NamedTuple

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from graphcut._safety import require_regular_file
from graphcut.solver.memory import HostMemoryError, require_host_memory

log = logging.getLogger("graphcut.imageio")

# File suffixes treated as images when scanning folders (batch).
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".tif", ".tiff", ".bmp")

# Where the pixel limit can be raised, for error messages.
RAISE_LIMIT_ADVICE = ("if the image is genuine, raise the limit: --max-pixels on the command "
                      "line, File > Image size limit in the app, max_pixels= in Python")

# Pillow modes returned as they are; every other mode is converted to RGB (or RGBA when the
# image has transparency).
_NATIVE_MODES = ("1", "L", "LA", "RGB", "RGBA", "I", "I;16", "F")


class ImageReadError(OSError):
    """A file cannot be read as an image; the message names the file and the reason."""


class ImageMemoryError(ImageReadError, MemoryError):
    """Decoding the image would need more memory than is available (checked before decoding).

    Both an :class:`ImageReadError` and a ``MemoryError``; ``need`` and ``available`` are in
    bytes.
    """

    def __init__(self, message: str, need: int, available: int):
        super().__init__(message)
        self.need, self.available = need, available


def _require_decoding_memory(need: int, what: str) -> None:
    try:
        require_host_memory(need, what)
    except HostMemoryError as error:
        raise ImageMemoryError(str(error), error.need, error.available) from None


class ImageTooLargeError(ImageReadError):
    """The image has more pixels than the limit (a decompression-bomb guard).

    Attributes
    ----------
    pixels
        width × height as the file declares it (None when Pillow refused the file
        before its size could be read: more than twice its limit).
    limit
        the limit in force.
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

    Parameters
    ----------
    path
        the file.
    max_pixels
        refuse images with more pixels (width × height) than this, before
        decoding them (a guard against decompression bombs: tiny files that decode to
        huge images); 0: no limit. ``None``: Pillow's ``Image.MAX_IMAGE_PIXELS`` (about
        89 million). A larger value also raises Pillow's own guard for this read.

    Raises
    ------
    ImageTooLargeError
        more pixels than the limit (an :class:`ImageReadError`).
    ImageMemoryError
        decoding would need more memory than is available (checked before
        decoding; both an ImageReadError and a MemoryError; names the file).
    ImageReadError
        missing file, not a regular file (a FIFO, a device), not an image,
        truncated or corrupt data; the message names the file.
    """
    name = os.fspath(path)
    limit = default_max_pixels() if max_pixels is None else int(max_pixels)
    _require_regular_file(name)
    with _pillow_allows(limit):
        image = _open_checked(name, limit)
        try:
            _warn_if_several_pages(image, name)
            width, height = image.size
            _require_decoding_memory(decode_bytes(width, height, image.mode),
                                     f"decoding {name} ({width}x{height} pixels, mode "
                                     f"{image.mode})")
        except BaseException:
            image.close()
            raise
        try:
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
    - int32 (H, W) for 32-bit integer TIFFs;
    - float32 or float64, (H, W) or (H, W, 3 or 4), for float TIFFs (grey float32 through
      Pillow, the others through tifffile), as stored; NaN and infinity are refused.

    Palette images become RGB (RGBA when they have transparency); CMYK, YCbCr, LAB and HSV
    become RGB. Multi-page files (TIFF stacks, animated GIF): the first page only, and a
    warning saying so is logged (logger ``graphcut.imageio``).

    Parameters
    ----------
    max_pixels
        the largest width × height accepted (see :func:`open_image`); None:
        Pillow's ``Image.MAX_IMAGE_PIXELS`` (about 89 million).

    Raises
    ------
    ImageTooLargeError
        more pixels than ``max_pixels``.
    ImageMemoryError
        decoding would need more memory than is available (an
        ImageReadError and a MemoryError).
    ImageReadError
        unreadable, truncated or non-image file, or a float image holding NaN
        or infinity (see :func:`open_image`); the message names the file.

    Examples
    --------
    >>> import numpy as np
    >>> from PIL import Image
    >>> from graphcut import read_image
    >>> Image.fromarray(np.full((4, 6, 3), 90, np.uint8)).save("photo.png")
    >>> image = read_image("photo.png")
    >>> image.shape, image.dtype
    ((4, 6, 3), dtype('uint8'))
    >>> from graphcut import ImageReadError
    >>> try:
    ...     read_image("missing.png")
    ... except ImageReadError as error:
    ...     print(error)
    missing.png: ...
    """
    name = os.fspath(path)
    _require_regular_file(name)
    page = _tiff_page_pillow_cannot_read(name)
    if page is not None:
        return _finite(name, _read_tiff_page(name, page, max_pixels))
    with open_image(path, max_pixels=max_pixels) as image:
        if _is_deep_colour_tiff(image):
            return _read_tiff_page(name, _tiff_page_info(name), max_pixels)
        if image.mode.startswith("I;16"):
            return np.asarray(image).astype(np.uint16)
        if image.mode not in _NATIVE_MODES:
            has_alpha = "A" in image.mode or "transparency" in image.info
            image = image.convert("RGBA" if has_alpha else "RGB")
        return _finite(name, np.array(image))


def _finite(name: str, array: np.ndarray) -> np.ndarray:
    """``array``, or an ImageReadError naming the file when a float image holds NaN or inf."""
    if array.dtype.kind != "f":
        return array
    bad = ~np.isfinite(array)
    if bad.ndim == 3:
        bad = bad.any(axis=-1)
    if bad.any():
        y, x = np.unravel_index(int(np.argmax(bad)), bad.shape)
        raise ImageReadError(f"{name}: the image contains NaN or infinite values at "
                             f"{int(bad.sum())} pixels (the first at row {y}, column {x}); "
                             "float images must be finite")
    return array


def _require_regular_file(name: str) -> None:
    """ImageReadError for a missing file, a folder, a FIFO or a device (which Pillow would
    wait on, or read forever); see :func:`graphcut._safety.require_regular_file`."""
    require_regular_file(name, ImageReadError)


# Bytes per pixel of Pillow's own storage of a mode: 1 or 2, else 4 (RGB is stored as RGBX).
_PILLOW_BYTES = {"1": 1, "L": 1, "P": 1, "I;16": 2, "I;16L": 2, "I;16B": 2, "I;16N": 2}


def decode_bytes(width: int, height: int, mode: str) -> int:
    """Peak bytes of :func:`read_image` for a ``width`` x ``height`` image in Pillow ``mode``:
    Pillow's decoded image, a converted copy (palette, CMYK -> RGB) and the NumPy array."""
    return width * height * (2 * _PILLOW_BYTES.get(mode, 4) + 4)


class ImageInfo(NamedTuple):
    """What :func:`read_image` would return for a file, from its header (nothing decoded)."""

    height: int
    width: int
    channels: int
    dtype: np.dtype


# (channels, dtype) that read_image returns for the Pillow modes it keeps as they are.
_MODE_LAYOUT = {"1": (1, np.bool_), "L": (1, np.uint8), "LA": (2, np.uint8),
                "RGB": (3, np.uint8), "RGBA": (4, np.uint8), "I": (1, np.int32),
                "F": (1, np.float32)}


def image_info(path, *, max_pixels: int | None = None) -> ImageInfo:
    """Height, width, channels and dtype of the array :func:`read_image` would return, read
    from the file's header without decoding the pixels (for memory checks before reading).

    Raises
    ------
    ImageReadError
        as :func:`read_image` (not an image, too many pixels, ...).
    """
    name = os.fspath(path)
    _require_regular_file(name)
    page = _tiff_page_pillow_cannot_read(name)
    if page is not None:
        limit = default_max_pixels() if max_pixels is None else int(max_pixels)
        if limit and page.width * page.height > limit:
            raise _too_large(name, limit, size=(page.width, page.height))
        return page
    limit = default_max_pixels() if max_pixels is None else int(max_pixels)
    with _pillow_allows(limit):
        image = _open_checked(name, limit)
    with image:
        width, height = image.size
        if _is_deep_colour_tiff(image):
            return _tiff_page_info(name)
        mode = image.mode
        if mode.startswith("I;16"):
            channels, dtype = 1, np.uint16
        elif mode in _MODE_LAYOUT:
            channels, dtype = _MODE_LAYOUT[mode]
        else:
            alpha = "A" in mode or "transparency" in image.info
            channels, dtype = (4 if alpha else 3), np.uint8
    return ImageInfo(height, width, channels, np.dtype(dtype))


def _is_deep_colour_tiff(image) -> bool:
    if image.format != "TIFF":
        return False
    bits = image.tag_v2.get(258, (8,))
    bits = bits if isinstance(bits, tuple) else (bits,)
    return len(bits) >= 3 and max(bits) > 8


_TIFF_MAGIC = (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+")


def _tiff_page_info(name: str) -> ImageInfo:
    """The layout of a TIFF's first page, from its header (tifffile)."""
    return _tiff_layout(name)[0]


def _tiff_layout(name: str) -> tuple[ImageInfo, np.dtype]:
    """The layout of a TIFF's first page as read_image returns it, and its stored dtype."""
    import tifffile
    try:
        with tifffile.TiffFile(name) as tif:
            page = tif.pages[0]
            shape, axes, dtype = page.shape, page.axes, page.dtype
    except Exception as error:  # tifffile raises many types for bad files
        raise ImageReadError(f"{name}: cannot read the TIFF ({error})") from None
    sizes = dict(zip(axes, shape))
    extra = [axis for axis in axes if axis not in "YXS"]
    if "Y" not in sizes or "X" not in sizes or any(sizes[a] != 1 for a in extra) \
            or sizes.get("S", 1) > 4 or dtype is None or np.dtype(dtype).kind not in "biuf":
        raise ImageReadError(f"{name}: a TIFF page of shape {shape} (axes {axes}) and type "
                             f"{dtype} is not a grey or colour image that can be read")
    stored = np.dtype(dtype)
    returned = np.dtype(np.float32) if stored == np.float16 else stored
    return ImageInfo(sizes["Y"], sizes["X"], sizes.get("S", 1), returned), stored


def _tiff_page_pillow_cannot_read(name: str) -> ImageInfo | None:
    """The first page's layout for a TIFF that Pillow cannot read (float64, or float with
    several channels); None for every other file."""
    try:
        with open(name, "rb") as handle:
            magic = handle.read(4)
    except OSError:
        return None
    if magic not in _TIFF_MAGIC:
        return None
    info, stored = _tiff_layout(name)
    if stored.kind == "f" and (info.channels > 1 or stored != np.float32):
        return info
    return None


def _read_tiff_page(name: str, info: ImageInfo, max_pixels: int | None) -> np.ndarray:
    """The first page of a TIFF through tifffile, (H, W) or (H, W, C), after the pixel-limit
    and memory checks. float16 becomes float32."""
    import tifffile
    limit = default_max_pixels() if max_pixels is None else int(max_pixels)
    if limit and info.width * info.height > limit:
        raise _too_large(name, limit, size=(info.width, info.height))
    _require_decoding_memory(2 * info.height * info.width * info.channels * info.dtype.itemsize,
                             f"decoding {name} ({info.width}x{info.height} pixels, "
                             f"{info.channels} channel(s) of {info.dtype})")
    try:
        with tifffile.TiffFile(name) as tif:
            page = tif.pages[0]
            array, axes = page.asarray(), page.axes
    except Exception as error:  # tifffile raises many types for bad files
        raise ImageReadError(f"{name}: cannot decode the TIFF ({error})") from None
    kept = [axis for axis in axes if axis in "YXS"]  # the other axes have length 1
    array = array.reshape([size for size, axis in zip(array.shape, axes) if axis in "YXS"])
    array = np.moveaxis(array, [kept.index(axis) for axis in "YXS" if axis in kept],
                        range(len(kept)))
    if array.dtype == np.float16:
        array = array.astype(np.float32)
    return np.ascontiguousarray(array)


__all__ = ["IMAGE_SUFFIXES", "ImageInfo", "ImageMemoryError", "ImageReadError",
           "ImageTooLargeError", "RAISE_LIMIT_ADVICE", "decode_bytes", "default_max_pixels",
           "image_info", "open_image", "read_image"]
