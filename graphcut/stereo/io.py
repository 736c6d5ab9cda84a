"""Files of the stereo tools: disparity maps, colour previews and dumped move instances.

(Formerly ``graphcut.stereo_io``, which still re-exports these names.)

Disparity files:
- ``.npy``: the exact values as a NumPy array (int32 labels, or float for ground truth).
- ``.png``: 16-bit grey PNG holding ``round(disparity * 256)``, the KITTI convention; a stored
  0 means "no value" (KITTI's invalid pixel), so a computed disparity of exactly 0 reads back
  as invalid from a PNG. Use ``.npy`` when that matters.

Everything is written to a temporary name in the destination folder and renamed into place.
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from PIL import Image

from graphcut.io import atomic_write

__all__ = ["DISPARITY_SUFFIXES", "InstanceDump", "KITTI_SCALE", "atomic_path",
           "colorize_disparity", "downscale_pair", "motorcycle_pair", "preview_image",
           "read_disparity", "write_disparity", "write_preview"]

KITTI_SCALE = 256
DISPARITY_SUFFIXES = (".npy", ".png")


@contextmanager
def atomic_path(path, *, suffix=None):
    """Yield a temporary path next to ``path``; rename it onto ``path`` if the block succeeds.

    The temporary name is ``.<name>.<random>.tmp`` (the name shortened when needed, so that it
    fits the file system's limit whatever the length of ``path``'s name; see
    :func:`graphcut._safety.temporary_prefix`): write to it by handle or with an explicit
    format. ``suffix`` is ignored (kept for callers of older versions).
    """
    from graphcut._safety import temporary_prefix
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=temporary_prefix(path), suffix=".tmp",
                                         dir=path.parent if str(path.parent) else ".")
    os.close(handle)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(temporary, 0o666 & ~umask)  # mkstemp creates 0600; give the usual permissions
    try:
        yield Path(temporary)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_disparity(path, disparity) -> None:
    """Write a disparity map to ``path`` (``.npy`` exact, ``.png`` KITTI 16-bit)."""
    path = Path(path)
    disparity = np.asarray(disparity)
    suffix = path.suffix.lower()
    if suffix == ".npy":
        atomic_write(path, lambda handle: np.save(handle, disparity, allow_pickle=False))
    elif suffix == ".png":
        values = np.where(np.isfinite(disparity), disparity, 0).astype(np.float64) * KITTI_SCALE
        values = np.rint(values)
        if values.size and (values.min() < 0 or values.max() > np.iinfo(np.uint16).max):
            raise ValueError(f"disparities must lie in 0..{np.iinfo(np.uint16).max / 256:.2f} "
                             f"to fit a 16-bit KITTI PNG; use .npy for {path.name}")
        image = Image.fromarray(values.astype(np.uint16))
        atomic_write(path, lambda handle: image.save(handle, format="PNG"))
    else:
        raise ValueError(f"unknown disparity file type {path.suffix!r} for {path}; "
                         f"expected one of {', '.join(DISPARITY_SUFFIXES)}")


def read_disparity(path) -> np.ndarray:
    """Read a disparity map: ``.npy`` as stored; ``.png`` (KITTI) as float64 with NaN where
    the stored value is 0; ``.pfm`` (Middlebury's format) as float64 with NaN where the stored
    value is not finite."""
    from graphcut._safety import read_npy
    from graphcut.io import open_image
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npy":
        return read_npy(path, "disparity file")
    if suffix == ".png":
        with open_image(path) as image:  # a regular file, its memory checked before decoding
            values = np.asarray(image)
        if values.ndim != 2 or values.dtype.kind not in "iu" or values.dtype.itemsize < 2:
            raise ValueError(f"{path}: expected a 16-bit grey PNG (KITTI disparity x 256), got "
                             f"{values.dtype} array of shape {values.shape}")
        disparity = values.astype(np.float64) / KITTI_SCALE
        disparity[values == 0] = np.nan
        return disparity
    if suffix == ".pfm":
        return _read_pfm(path)
    raise ValueError(f"unknown disparity file type {path.suffix!r} for {path}; expected one of "
                     f"{', '.join(DISPARITY_SUFFIXES + ('.pfm',))}")


def _read_pfm(path: Path) -> np.ndarray:
    """A grey PFM file (``Pf``, width height, scale < 0 little-endian / > 0 big-endian, rows
    bottom to top) as float64 with NaN for non-finite values."""
    from graphcut._safety import open_regular_file
    handle, _ = open_regular_file(path)
    with handle:
        header = [handle.readline(64).strip() for _ in range(3)]
        if header[0] != b"Pf":
            raise ValueError(f"{path}: expected a grey PFM file starting with 'Pf', got "
                             f"{header[0][:16]!r}")
        try:
            width, height = (int(v) for v in header[1].split())
            scale = float(header[2])
        except ValueError:
            raise ValueError(f"{path}: bad PFM header (size {header[1][:32]!r}, scale "
                             f"{header[2][:32]!r})") from None
        if width < 1 or height < 1 or scale == 0 or width * height > 1 << 30:
            raise ValueError(f"{path}: bad PFM size {width}x{height} or scale {scale}")
        from graphcut.solver.memory import require_host_memory
        require_host_memory(20 * width * height, f"reading the {width}x{height} PFM {path}")
        dtype = np.dtype("<f4" if scale < 0 else ">f4")
        data = np.fromfile(handle, dtype=dtype, count=width * height)
    if data.size != width * height:
        raise ValueError(f"{path}: PFM data holds {data.size} values, the header says "
                         f"{width}x{height}")
    disparity = data.reshape(height, width)[::-1].astype(np.float64)
    disparity[~np.isfinite(disparity)] = np.nan
    return disparity


# Anchor colours of the preview ramp, from far (small disparity, 0) to near (large, 1): a
# perceptually ordered dark-blue -> teal -> yellow -> red ramp; invalid pixels are black.
_RAMP = np.array([[48, 18, 59], [40, 110, 220], [30, 190, 190], [120, 230, 90],
                  [250, 200, 40], [250, 110, 30], [170, 20, 10]], dtype=np.float64)


def colorize_disparity(disparity, *, max_disparity=None) -> np.ndarray:
    """An (H, W, 3) uint8 colour map: small disparities (far) blue, large (near) red, values
    scaled by ``max_disparity`` (default: the largest finite value); non-finite pixels black."""
    disparity = np.asarray(disparity, dtype=np.float64)
    finite = np.isfinite(disparity)
    if max_disparity is None:
        max_disparity = float(disparity[finite].max()) if finite.any() else 1.0
    scaled = np.clip(np.where(finite, disparity, 0) / max(float(max_disparity), 1e-9), 0, 1)
    position = scaled * (len(_RAMP) - 1)
    anchors = np.arange(len(_RAMP))
    rgb = np.stack([np.interp(position, anchors, _RAMP[:, c]) for c in range(3)], axis=-1)
    rgb[~finite] = 0
    return np.rint(rgb).astype(np.uint8)


def _nice_step(span: float, ticks: int = 5) -> float:
    raw = span / max(ticks, 1)
    magnitude = 10 ** np.floor(np.log10(raw)) if raw > 0 else 1.0
    for factor in (1, 2, 5, 10):
        if factor * magnitude >= raw:
            return float(factor * magnitude)
    return float(10 * magnitude)


def preview_image(disparity, *, max_disparity=None, colour_bar: bool = True) -> np.ndarray:
    """:func:`colorize_disparity` with a vertical colour bar on the right, labelled in pixels
    of disparity (0 at the bottom, ``max_disparity`` at the top). Returns (H, W', 3) uint8."""
    from PIL import ImageDraw, ImageFont

    disparity = np.asarray(disparity, dtype=np.float64)
    finite = np.isfinite(disparity)
    if max_disparity is None:
        max_disparity = float(disparity[finite].max()) if finite.any() else 1.0
    max_disparity = max(float(max_disparity), 1e-9)
    rgb = colorize_disparity(disparity, max_disparity=max_disparity)
    if not colour_bar:
        return rgb
    h = rgb.shape[0]
    margin = max(4, h // 40)
    bar_width = max(8, h // 25)
    panel_width = bar_width + 5 * margin + 40
    panel = Image.new("RGB", (panel_width, h), (255, 255, 255))
    top, bottom = margin, h - margin
    if bottom - top >= 2:
        levels = np.linspace(max_disparity, 0, bottom - top)[:, np.newaxis]
        bar = colorize_disparity(np.repeat(levels, bar_width, axis=1),
                                 max_disparity=max_disparity)
        panel.paste(Image.fromarray(bar), (margin, top))
        draw = ImageDraw.Draw(panel)
        font = ImageFont.load_default()
        step = _nice_step(max_disparity)
        for value in np.arange(0, max_disparity + step / 1000, step):
            y = bottom - 1 - (value / max_disparity) * (bottom - top - 1)
            draw.line([(margin + bar_width, y), (margin + bar_width + margin, y)],
                      fill=(0, 0, 0))
            text = f"{value:g}"
            draw.text((margin * 2 + bar_width + 2, y), text, fill=(0, 0, 0), font=font,
                      anchor="lm")
    return np.concatenate([rgb, np.asarray(panel)], axis=1)


def write_preview(path, disparity, *, max_disparity=None, colour_bar: bool = True) -> None:
    """Write :func:`preview_image` (format from the suffix, e.g. PNG)."""
    path = Path(path)
    rgb = preview_image(disparity, max_disparity=max_disparity, colour_bar=colour_bar)
    image_format = Image.registered_extensions().get(path.suffix.lower(), "PNG")
    atomic_write(path, lambda handle: Image.fromarray(rgb).save(handle, format=image_format))


class InstanceDump:
    """A :func:`~graphcut.stereo.alpha_expansion` callback that writes every move's network.

    Files: ``DIR/move_0001.max`` ... (DIMACS max-flow format, via
    :func:`graphcut.solver.dimacs.write_dimacs`) and, when the block ends, ``DIR/index.json``::

        {"instances": [{"file": "move_0001.max", "flow": 123, "alpha": 4, "cycle": 1,
                        "accepted": true, "constant": 4567, "energy_before": 4700,
                        "energy_after": 4690, "vertices": ..., "arcs": ...,
                        "grid": [H, W]}, ...]}

    ``flow`` is the maximum flow value of the file's network (the answer a solver must find);
    ``constant + flow == energy_after`` is the energy of the labelling the minimum cut
    proposes. Pixel ``(y, x)`` is DIMACS vertex ``y * W + x + 1``, the source ``H * W + 1`` and
    the sink ``H * W + 2``.

    Use as a context manager so that the index is written (atomically) when the block ends
    without an error::

        with InstanceDump(directory) as dump:
            alpha_expansion(costs, weights, callback=dump)
    """

    def __init__(self, directory, *, comment: str = ""):
        from graphcut.solver.dimacs import write_dimacs
        self._write_dimacs = write_dimacs
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.comment = comment
        self.instances: list[dict] = []

    def __call__(self, move, network, cut) -> None:
        csr = network.to_csr()
        name = f"move_{move.index:04d}.max"
        self._write_dimacs(csr, self.directory / name, comment=self._comment(move))
        self.instances.append({"file": name, "flow": int(cut.flow), "alpha": move.alpha,
                               "cycle": move.cycle, "accepted": move.accepted,
                               "constant": move.constant, "energy_before": move.energy_before,
                               "energy_after": move.energy_after,
                               "vertices": csr.num_vertices, "arcs": csr.num_arcs,
                               "grid": list(network.shape)})

    def _comment(self, move) -> str:
        lines = [f"alpha-expansion move {move.index}, cycle {move.cycle}, alpha {move.alpha}",
                 f"flow {move.flow}; energy after move = {move.constant} + flow"]
        if self.comment:
            lines.insert(0, self.comment)
        return "\n".join(lines)

    def write_index(self) -> Path:
        path = self.directory / "index.json"
        text = json.dumps({"instances": self.instances}, indent=1) + "\n"
        atomic_write(path, lambda handle: handle.write(text), mode="w")
        return path

    def __enter__(self) -> "InstanceDump":
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is None:
            self.write_index()


def motorcycle_pair(*, downscale: int = 1):
    """scikit-image's Middlebury motorcycle pair (500 x 741, offline) at 1/``downscale`` size.

    Returns ``(left, right, truth)``: uint8 RGB images and the float64 ground-truth disparity
    (NaN where unknown), reduced by :func:`downscale_pair` when ``downscale`` > 1.
    """
    from skimage import data

    left, right, truth = data.stereo_motorcycle()
    truth = truth.astype(np.float64)
    truth[~np.isfinite(truth)] = np.nan  # scikit-image marks missing values with inf
    return downscale_pair(left, right, truth, downscale)


def downscale_pair(left, right, truth, downscale: int):
    """A rectified pair and its ground truth at 1/``downscale`` size.

    Parameters
    ----------
    left, right : (H, W, C) uint8 arrays
        The images.
    truth : (H, W) float array
        Disparities in pixels of the full size, NaN where unknown.
    downscale : int
        Integer reduction (>= 1; 1 returns the inputs as they are).

    Returns
    -------
    tuple
        ``(left, right, truth)``: the pair cropped to a multiple of ``downscale`` and reduced
        by block means (rounded to uint8); a ground-truth block is the mean of its known
        pixels divided by ``downscale``, kept only where at least 3/4 of the block is known
        (NaN elsewhere).

    Examples
    --------
    >>> image = np.zeros((4, 4, 3), np.uint8)
    >>> truth = np.full((4, 4), 6.0)
    >>> downscale_pair(image, image, truth, 2)[2]
    array([[3., 3.],
           [3., 3.]])
    """
    from skimage.transform import downscale_local_mean

    if isinstance(downscale, bool) or not isinstance(downscale, (int, np.integer)) \
            or downscale < 1:
        raise ValueError(f"downscale must be an int >= 1, got {downscale!r}")
    if downscale == 1:
        return left, right, truth
    h, w = (s - s % downscale for s in truth.shape)
    left, right, truth = left[:h, :w], right[:h, :w], truth[:h, :w]

    def reduced(image):
        means = downscale_local_mean(image.astype(np.float64), (downscale, downscale, 1))
        return np.rint(means).astype(np.uint8)

    blocks = truth.reshape(h // downscale, downscale, w // downscale, downscale)
    known = np.isfinite(blocks).sum(axis=(1, 3))
    total = np.where(np.isfinite(blocks), blocks, 0).sum(axis=(1, 3))
    reduced_truth = np.full(known.shape, np.nan)
    enough = known * 4 >= 3 * downscale * downscale
    reduced_truth[enough] = total[enough] / known[enough] / downscale
    return reduced(left), reduced(right), reduced_truth
