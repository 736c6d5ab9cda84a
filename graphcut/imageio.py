"""Reading images and writing masks and overlays (Pillow; tifffile for the TIFFs Pillow cannot
read: 16-bit colour, float colour, float64).

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
from typing import NamedTuple

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from ._safety import require_regular_file, temporary_prefix
from .solver.memory import HostMemoryError, require_host_memory

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
    >>> read_image("missing.png")
    Traceback (most recent call last):
        ...
    graphcut.imageio.ImageReadError: ...missing.png...
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


def _refuse_inputs(path: Path, inputs) -> None:
    for source in inputs:
        if source is None:
            continue
        if path.exists() and Path(source).exists() and os.path.samefile(path, source):
            raise ValueError(f"refusing to overwrite the input file {os.fspath(source)!r} with "
                             "an output; choose another output path")
        if Path(source).is_dir() and path.parent.is_dir() \
                and os.path.samefile(path.parent, source):
            raise ValueError(f"refusing to write {os.fspath(path)!r} into the input folder "
                             f"{os.fspath(source)!r} (it would replace or add a slice); "
                             "choose an output outside it")


def atomic_write(path, write, *, inputs=(), mode="wb") -> None:
    """Create or replace ``path`` atomically: ``write(handle)`` fills a temporary file in the
    same folder, which is then renamed over ``path`` (``os.replace``). On any error the
    temporary file is removed and ``path`` is left as it was.

    Raises
    ------
    ValueError
        ``path`` is one of ``inputs`` (an existing file it must not replace).
    FileNotFoundError
        the destination folder does not exist.
    OSError
        the file cannot be written (read-only folder, disk full, ...); the message
        names ``path`` and the reason, and ``errno`` is kept.
    """
    path = Path(path)
    _refuse_inputs(path, inputs)
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {os.fspath(path)!r}: the folder "
                                f"{os.fspath(folder)!r} does not exist")
    try:
        descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=temporary_prefix(path),
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


def check_writable_image_suffix(path) -> str:
    """The Pillow format that the suffix of ``path`` names, or a ValueError saying the suffix
    is not an image format that can be written."""
    suffix = Path(path).suffix
    file_format = Image.registered_extensions().get(suffix.lower())
    if file_format is None or file_format not in Image.SAVE:
        raise ValueError(f"{os.fspath(path)!r}: unknown image file suffix {suffix!r}; use .png")
    return file_format


def atomic_save(image: Image.Image, path, *, inputs=(), **save_options) -> None:
    """Save a Pillow image to ``path`` atomically (:func:`atomic_write`); the format follows
    the suffix of ``path``.

    Raises
    ------
    ValueError
        ``path`` is one of ``inputs`` or has an unknown image suffix.
    FileNotFoundError
        the destination folder does not exist.
    """
    file_format = check_writable_image_suffix(path)
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

    Raises
    ------
    ValueError
        the suffix is missing or names another format; the message says which.
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

    Raises
    ------
    ValueError
        a lossy or unknown suffix (:func:`check_lossless_suffix`), or ``path`` is
        one of ``inputs``.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import read_image, write_mask
    >>> mask = np.array([[False, True], [True, True]])
    >>> write_mask("mask.png", mask)
    >>> read_image("mask.png")
    array([[  0, 255],
           [255, 255]], dtype=uint8)
    >>> write_mask("mask.jpg", mask)
    Traceback (most recent call last):
        ...
    ValueError: ...
    """
    check_lossless_suffix(path, "mask")
    mask = _as_mask(mask)
    atomic_save(Image.fromarray(np.where(mask, 255, 0).astype(np.uint8)), path, inputs=inputs)


def display_rgb(image, *, channel_axis=-1) -> np.ndarray:
    """uint8 (H, W, 3) RGB for showing ``image``: grey replicated, alpha dropped, integer types
    scaled from their full range, float images shown as [0, 1] (or stretched from their own
    range when they leave [0, 1])."""
    from .energy import image_as_float
    if isinstance(image, np.ndarray) and image.dtype == np.uint8 and image.size and (
            image.ndim == 2 or (image.ndim == 3 and channel_axis in (-1, 2)
                                and image.shape[2] in (1, 2, 3, 4))):
        # what the float path below gives, without it: rint(v / 255 * 255) == v for uint8
        channels = image[..., None] if image.ndim == 2 else image
        rgb = channels[..., :1] if channels.shape[2] in (1, 2) else channels[..., :3]
        return np.ascontiguousarray(np.broadcast_to(rgb, rgb.shape[:2] + (3,)))
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
    # the tint of every uint8 level per channel (the blend's float formula, tabulated once)
    levels = np.arange(256, dtype=np.float64)[:, None]
    tint = np.clip(np.rint((1.0 - opacity) * levels + opacity * np.asarray(color, dtype=np.float64)),
                   0, 255).astype(np.uint8)
    out = rgb.copy()
    for channel in range(3):
        np.copyto(out[..., channel], np.take(tint[:, channel], rgb[..., channel]), where=mask)
    if outline is not None:
        out[_inner_boundary(mask)] = np.clip(np.rint(np.asarray(outline, dtype=np.float64)), 0, 255)
    return out


def write_overlay(path, image, mask, *, channel_axis=-1, inputs=(), **style) -> None:
    """Write :func:`overlay` of ``image`` and ``mask`` to ``path`` (PNG), atomically.

    ``style``: ``color``, ``opacity``, ``outline`` as in :func:`overlay`.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import read_image, write_overlay
    >>> image = np.full((4, 4), 100, np.uint8)
    >>> mask = np.zeros((4, 4), bool)
    >>> mask[1:3, 1:3] = True
    >>> write_overlay("overlay.png", image, mask)
    >>> overlay = read_image("overlay.png")
    >>> overlay.shape, bool((overlay[0, 0] == 100).all()), bool((overlay[1, 1] != 100).any())
    ((4, 4, 3), True, True)
    """
    atomic_save(Image.fromarray(overlay(image, mask, channel_axis=channel_axis, **style)), path,
                inputs=inputs)


__all__ = ["IMAGE_SUFFIXES", "ImageInfo", "ImageMemoryError", "ImageReadError",
           "ImageTooLargeError", "LOSSLESS_SUFFIXES", "atomic_save", "atomic_write",
           "check_lossless_suffix", "check_writable_image_suffix", "decode_bytes",
           "default_max_pixels", "display_rgb", "image_info", "open_image", "overlay",
           "read_image", "write_mask", "write_overlay"]
