"""Memory a segmentation needs, per backend, checked before it starts.

A segmentation that would not fit is refused up front with a message that names the image
(the file, where there is one), its size and the memory needed and available, instead of
swapping, being killed by the OOM killer or dying silently inside PyMaxflow. With
``device="auto"`` a segmentation that does not fit in the GPU's free memory runs on the CPU
(with a logged warning) when it fits there.

Figures are bytes per pixel, measured as the peak resident memory of each step on
2000 x 2000 images (``tests/robustness/test_hostile_input.py`` checks that they bound the real
peak) and rounded up:

- building the energy (:func:`graphcut.segmentation.build_network`): about 85 (grey) and 100
  (colour) bytes per pixel on the CPU, the same on the GPU (the network is built there);
- the network itself: 16 (four int32 capacity arrays);
- the CPU solve: PyMaxflow's graph, 176 bytes per pixel (48 per node, 32 per arc, four arcs a
  pixel), plus about 1 per pixel (the mask) and a bounded block of index arrays
  (:func:`graphcut.solver.memory.grid_graph_bytes`);
- the GPU solve: 49 bytes per pixel of solver state (:mod:`graphcut.solver.cuda.grid`).

So an RGB image needs about 195 bytes per pixel on the CPU (a 30-megapixel photo: 5.5 GiB),
and about 115 of GPU memory, with the histogram and strokes alone. The other models hold more
while the graph is cut (the learned model's features, the GMM's per-pixel mixtures and their
kept state), and the histogram's box or lasso cuts at two weights: their whole peaks on the
CPU were measured apiece (:data:`CPU_MODEL_BYTES_PER_PIXEL`); ``"auto"`` counts the larger of
the models it may choose (:func:`model_kinds`). On the GPU the same models take 2.2-8 times
the histogram's 70 bytes per pixel (:data:`GPU_MODEL_BYTES_PER_PIXEL`).
"""

from __future__ import annotations

import logging
import os

import numpy as np

from graphcut.io import ImageInfo, image_info
from graphcut.solver import resolve_device
from graphcut.solver.memory import format_bytes, grid_graph_bytes, require_host_memory

__all__ = ["CPU_MODEL_BYTES_PER_PIXEL", "ENERGY_BYTES_PER_PIXEL", "GPU_MODEL_BYTES_PER_PIXEL", "NETWORK_BYTES_PER_PIXEL",
           "check_image_file", "model_kinds", "segmentation_backend", "segmentation_bytes"]

log = logging.getLogger("graphcut")

# Peak bytes per pixel of building the energy network, for grey (1 or 2 channels) and colour
# (3 or 4) images, whatever their dtype (the image is converted to float64 first).
ENERGY_BYTES_PER_PIXEL = {"grey": 96, "colour": 112}
# The GridNetwork: source, sink, right, down as int32 (left and up share right and down).
NETWORK_BYTES_PER_PIXEL = 16
# The CPU's histogram path beyond the graph and the network: the mask, the seeds' copies.
CPU_MASK_BYTES_PER_PIXEL = 4
# GPU solver state per pixel (solver/cuda/grid.py) and the cut read back.
GPU_STATE_BYTES_PER_PIXEL = 49 + 1
# Volumes (depth > 1): 6-connected, so 3 n-link arrays instead of 2 in the energy and the
# network, and the 3-D GPU state (solver/cuda/grid3d.py); estimated from the 2-D figures.
VOLUME_ENERGY_FACTOR = 1.25
VOLUME_NETWORK_BYTES_PER_VOXEL = 20
VOLUME_GPU_STATE_BYTES_PER_VOXEL = 57 + 1


# Peak host bytes per pixel of a whole 2-D segmentation on the CPU, by model kind, strokes
# alone or with a box or lasso, (grey, colour): the peak resident memory of
# ``graphcut.segment`` on 1500 x 2000 random images (tests/robustness/test_hostile_input.py's
# harness, 2026-11-27), rounded up by about 4 %. Histogram strokes: the formula of
# :func:`segmentation_bytes` (measured 211 / 206).
CPU_MODEL_BYTES_PER_PIXEL = {
    ("histogram", "region"): (320, 337),   # measured 308, 324 (two cuts: lam 10 and 20)
    ("learned", "strokes"): (419, 476),    # measured 383, 457; 402 (grey) on 2026-11-27 pm
    ("learned", "region"): (436, 484),     # measured 418 (grey, with the box ring; 388-410 before)
    ("gmm", "strokes"): (588, 768),        # measured 565, 738
    ("gmm", "region"): (633, 768),         # measured 608, 738
    # GMM(warm=True), auto's model of photographs; grey measured in the thirteenth session
    # (the costs alone, without the mixtures' (N, K) responsibilities): strokes 365 (465
    # before), a box 399 (the GMM's 633 before, not measured)
    ("live-gmm", "strokes"): (380, 623),   # measured 599 (colour; 561 in the thirteenth)
    ("live-gmm", "region"): (415, 758),    # measured 729 (colour)
    ("live-gmm", "volume"): (657, 860),
    # the live GMM on the colours alone (texture=0: auto's colour photographs since the
    # fourteenth session); colour measured: strokes 433, a box 478 (grey: the live GMM's)
    ("live-gmm-colours", "strokes"): (380, 450),
    ("live-gmm-colours", "region"): (415, 497),
    ("live-gmm-colours", "volume"): (657, 860),
    # volumes (6-connected; 30 x 300 x 334 random grey voxels): per voxel, grey measured,
    # colour scaled by the 2-D colour / grey ratio (not measured); histogram: the formula
    ("learned", "volume"): (487, 581),     # measured 468 (grey)
    ("gmm", "volume"): (657, 860),         # measured 631 (grey)
}


# The same on the GPU: the CuPy memory pool's peak bytes in use during ``graphcut.segment`` of a
# 2000 x 2000 random image on an H100 (2026-11-27, the image's upload included), rounded up by
# about 5 %. Histogram strokes: the formula (measured 70). Volumes: the 2-D figure times
# VOLUME_ENERGY_FACTOR (not measured).
GPU_MODEL_BYTES_PER_PIXEL = {
    ("histogram", "region"): (165, 182),   # measured 157, 173
    ("learned", "strokes"): (163, 180),    # measured 155, 171
    ("learned", "region"): (167, 185),     # measured 159, 176
    ("gmm", "strokes"): (397, 582),        # measured 378, 554
    ("gmm", "region"): (434, 619),         # measured 413, 589
    # strokes: since the fourteenth session the full-size costs are one kernel from the
    # channels (no per-pixel feature matrix): measured 177.5 grey (texture 4) on 1200 x 1600;
    # colour with texture 4 not measured since (444 before), kept as an upper bound
    ("live-gmm", "strokes"): (190, 466),
    ("live-gmm", "region"): (434, 598),    # measured 569 (colour)
    # colour, texture 0: measured 178.6; 202.6 since the nineteenth session's stroke_share
    # (the seeds' own weights and the two weighted samples at full size, H200)
    ("live-gmm-colours", "strokes"): (190, 213),
    ("live-gmm-colours", "region"): (434, 598),    # the live GMM's (not measured)
}


def _colour(channels: int) -> str:
    return "colour" if channels >= 3 else "grey"


def model_kinds(model, channels: int, volume: bool = False) -> tuple:
    """The model kinds (``"histogram"``, ``"learned"``, ``"gmm"``, ``"live-gmm"``: the GMM
    with ``warm=True``, ``"live-gmm-colours"``: that GMM with ``texture=0`` on a colour image,
    auto's colour photographs) whose memory a segmentation with ``model`` (anything
    :func:`graphcut.models.as_model` takes; None: the default) of an image of ``channels``
    channels (a volume when ``volume``) may need: ``"auto"`` may become either of its
    candidates on a colour image or a grey image that is not a volume (it decides from the
    pixels, which a file's header does not show); a pair of colour models or an unknown model
    counts as the GMM (the largest).

    Examples
    --------
    >>> model_kinds("histogram", 3), model_kinds(None, 1), model_kinds("auto", 1, volume=True)
    (('histogram',), ('live-gmm', 'learned'), ('learned',))
    """
    from graphcut.models import GMM, Auto, Histogram, Learned, as_model
    chosen = as_model(model)
    if isinstance(chosen, Auto):  # grey photographs get the live GMM too (eleventh session)
        photo = channels >= 3 or (channels == 1 and not volume)
        live = "live-gmm-colours" if channels >= 3 else "live-gmm"  # grey keeps the texture
        return (live, "learned") if photo else ("learned",)
    if isinstance(chosen, GMM) and chosen.warm:
        return ("live-gmm-colours" if chosen.texture == 0 and channels >= 3 else "live-gmm",)
    for kind, cls in (("histogram", Histogram), ("learned", Learned), ("gmm", GMM)):
        if isinstance(chosen, cls):
            return (kind,)
    return ("gmm",)


def _model_bytes(backend: str, pixels: int, channels: int, model, region: bool,
                 volume: bool) -> int:
    """The largest measured whole-segmentation peak of ``model``'s kinds on ``backend`` (0
    where the histogram's formula applies)."""
    column = 1 if channels >= 3 else 0
    kinds = model_kinds(model, channels, volume)
    if backend == "cpu":
        shape = "volume" if volume else "region" if region else "strokes"
        figures = [CPU_MODEL_BYTES_PER_PIXEL.get((kind, shape), (0, 0))[column]
                   for kind in kinds]
        return max(figures) * pixels
    shape = "region" if region else "strokes"
    figures = [GPU_MODEL_BYTES_PER_PIXEL.get((kind, shape), (0, 0))[column] for kind in kinds]
    return int(max(figures) * pixels * (VOLUME_ENERGY_FACTOR if volume else 1))


def segmentation_bytes(height: int, width: int, channels: int, backend: str, *,
                       depth: int = 1, model=None, region: bool = False) -> int:
    """Peak bytes a segmentation of an H x W image (a D x H x W volume with ``depth`` D > 1)
    with ``channels`` channels needs on ``backend`` ("cpu": host memory, "cuda": GPU memory),
    beyond the image and seed arrays already in memory (on the GPU: plus their upload), with
    the appearance ``model`` (None: the default) and, when ``region``, a box or lasso.

    Examples
    --------
    >>> mib = lambda n: round(n / 2**20)
    >>> mib(segmentation_bytes(1000, 1000, 3, "cpu", model="histogram"))
    218
    >>> mib(segmentation_bytes(1000, 1000, 3, "cpu", model="gmm"))
    732
    """
    pixels = depth * height * width
    energy = ENERGY_BYTES_PER_PIXEL[_colour(channels)] * pixels
    network, state = NETWORK_BYTES_PER_PIXEL, GPU_STATE_BYTES_PER_PIXEL
    graph = grid_graph_bytes(height, width)
    if depth > 1:
        from graphcut.solver.cpu import grid_bytes
        energy = int(VOLUME_ENERGY_FACTOR * energy)
        network, state = VOLUME_NETWORK_BYTES_PER_VOXEL, VOLUME_GPU_STATE_BYTES_PER_VOXEL
        graph = grid_bytes((depth, height, width))
    if backend == "cpu":
        histogram = max(energy, (network + CPU_MASK_BYTES_PER_PIXEL) * pixels + graph)
        return max(histogram, _model_bytes("cpu", pixels, channels, model, region, depth > 1))
    upload = (8 * channels + 1) * pixels  # the image (at most 8 bytes a value) and the seeds
    histogram = upload + max(energy, (network + state) * pixels)
    return max(histogram, _model_bytes("cuda", pixels, channels, model, region, depth > 1))


def _describe(name: str, height: int, width: int, channels: int) -> str:
    kind = {1: "grey", 2: "grey + alpha", 3: "RGB", 4: "RGBA"}.get(channels, f"{channels}-channel")
    return f"{name} ({width}x{height} {kind})"


def _fits_on_gpu(need: int, what: str, device: str) -> bool:
    """Whether ``need`` bytes fit in the GPU; with device="auto" a no is logged, otherwise
    raised (GPUMemoryError)."""
    from graphcut.solver import GPUMemoryError
    from graphcut.solver import require_gpu_memory as require_free_memory
    try:
        require_free_memory(need, what)
    except GPUMemoryError as error:
        if device != "auto":
            raise
        log.warning("%s; segmenting on the CPU instead", error)
        return False
    return True


def segmentation_backend(height: int, width: int, channels: int, device: str, *,
                         name: str = "the image", held_bytes: int = 0, depth: int = 1,
                         model=None, region: bool = False) -> str:
    """The backend ("cpu" or "cuda") a segmentation will run on, after checking that it fits.

    ``device``: "auto", "cpu" or "cuda". With "auto", a segmentation too large for the GPU's
    free memory goes to the CPU (a logged warning). ``held_bytes``: host memory the caller
    will allocate first (decoding the files), counted with the CPU's need. ``model``,
    ``region``: as :func:`segmentation_bytes`.

    Raises
    ------
    HostMemoryError
        it would not fit in the host memory available (a MemoryError).
    GPUMemoryError
        ``device="cuda"`` and it would not fit in the GPU's free memory.
    BackendUnavailableError
        ``device="cuda"`` without a usable GPU.
    """
    backend = resolve_device(device)
    what = f"segmenting {_describe(name, height, width, channels)}"
    if depth > 1:
        what += f", {depth} slices"
    sizes = dict(depth=depth, model=model, region=region)
    if backend == "cuda" and _fits_on_gpu(segmentation_bytes(height, width, channels, "cuda",
                                                             **sizes),
                                          f"{what} on the GPU", device):
        require_host_memory(held_bytes, f"reading {name}")
        return "cuda"
    need = segmentation_bytes(height, width, channels, "cpu", **sizes)
    lighter = ""
    if model_kinds(model, channels) != ("histogram",):
        histogram = segmentation_bytes(height, width, channels, "cpu",
                                       **dict(sizes, model="histogram"))
        lighter = f"; model 'histogram' would need {format_bytes(held_bytes + histogram)}"
    require_host_memory(held_bytes + need, f"{what} on the CPU ({format_bytes(need)} for the "
                                           "appearance model, the energy and PyMaxflow's "
                                           f"graph{lighter})")
    return "cpu"


def _image_pixels_and_channels(image, seeds) -> tuple[int, int, int]:
    shape = tuple(getattr(seeds, "shape", None) or np.shape(seeds))
    if len(shape) != 2:
        shape = tuple(getattr(image, "shape", None) or np.shape(image))[:2]
    height, width = (int(v) for v in shape[:2]) if len(shape) >= 2 else (0, 0)
    size = int(getattr(image, "size", None) or np.size(image))
    channels = size // (height * width) if height * width else 1
    return height, width, max(1, min(channels, 4))


def array_segmentation_backend(image, seeds, device: str, *, model=None,
                               region: bool = False) -> str:
    """:func:`segmentation_backend` for arrays already in memory (``image`` (H, W) or
    (H, W, C) in any channel position, ``seeds`` (H, W)); ``model``, ``region`` as
    :func:`segmentation_bytes`."""
    seeds_shape = tuple(getattr(seeds, "shape", None) or np.shape(seeds))
    if len(seeds_shape) == 3:  # a volume: (D, H, W) seeds
        depth, height, width = (int(v) for v in seeds_shape)
        size = int(getattr(image, "size", None) or np.size(image))
        channels = max(1, min(size // max(1, depth * height * width), 4))
        return segmentation_backend(height, width, channels, device, depth=depth, model=model,
                                    region=region)
    height, width, channels = _image_pixels_and_channels(image, seeds)
    return segmentation_backend(height, width, channels, device, model=model, region=region)


def file_bytes(info: ImageInfo) -> int:
    """Host bytes held once an image file and its seed file are decoded: the image array, its
    decoding transient and the seed labels (with their own decoding)."""
    pixels = info.height * info.width
    image = info.channels * info.dtype.itemsize * pixels
    decode = 2 * max(4, info.channels * info.dtype.itemsize) * pixels
    return image + max(decode, 12 * pixels) + pixels


def check_image_file(path, device: str, *, max_pixels: int | None = None, model=None,
                     region: bool = False) -> str:
    """Check, from the image file's header alone (nothing is decoded), that segmenting it fits
    in memory on ``device``; returns the backend it will run on. ``model``, ``region``: the
    appearance model and whether a box or lasso is given (:func:`segmentation_bytes`).

    Raises
    ------
    ImageReadError
        the file is not an image that can be read (see
        :func:`graphcut.io.image_info`).
    HostMemoryError or GPUMemoryError
        as :func:`segmentation_backend`; the message names
        the file.
    """
    info = image_info(path, max_pixels=max_pixels)
    return segmentation_backend(info.height, info.width, info.channels, device,
                                name=os.fspath(path), held_bytes=file_bytes(info),
                                model=model, region=region)


def check_volume_file(path, device: str, *, max_pixels: int | None = None, model=None,
                      region: bool = False) -> str | None:
    """:func:`check_image_file` for a volume (multi-page TIFF, ``.npy``, folder of slices):
    from the headers alone (:func:`graphcut.io.volume_layout`), check that decoding the volume
    and its seeds and segmenting it fit on ``device``.

    Parameters
    ----------
    path : str or os.PathLike
        The volume.
    device : str
        "auto", "cpu" or "cuda".
    max_pixels : int, optional
        The per-slice pixel limit (see :func:`graphcut.io.read_volume`).
    model : optional
        The appearance model (anything :func:`graphcut.models.as_model` takes; None: the
        default).
    region : bool
        Whether a box or lasso is given.

    Returns
    -------
    str or None
        The backend it will run on; None when the headers cannot be read (the readers then
        say why).

    Raises
    ------
    HostMemoryError, GPUMemoryError
        As :func:`segmentation_backend`; the message names the file, its size and the memory
        needed and available.
    """
    from graphcut.io import volume_layout
    try:
        shape, dtype = volume_layout(path, max_pixels=max_pixels)
    except (OSError, ValueError):
        return None
    if len(shape) not in (3, 4):
        return None
    depth, height, width = shape[:3]
    channels = shape[3] if len(shape) == 4 else 1
    voxels = depth * height * width
    held = 2 * voxels * channels * dtype.itemsize + 2 * voxels  # the volume and the seeds
    return segmentation_backend(height, width, min(max(channels, 1), 4), device,
                                name=os.fspath(path), held_bytes=held, depth=depth,
                                model=model, region=region)
