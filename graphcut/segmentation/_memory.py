"""Memory a segmentation needs, per backend, checked before it starts.

A segmentation that would not fit is refused up front with a message that names the image
(the file, where there is one), its size and the memory needed and available, instead of
swapping, being killed by the OOM killer or dying silently inside PyMaxflow. With
``device="auto"`` a segmentation that does not fit in the GPU's free memory runs on the CPU
(with a logged warning) when it fits there.

Figures are bytes per pixel, measured as the peak resident memory of each step on
2000 x 2000 images (``tests/test_hostile_input.py`` checks that they bound the real peak) and
rounded up:

- building the energy (:func:`graphcut.segmentation.build_network`): about 85 (grey) and 100 (colour)
  bytes per pixel on the CPU, the same on the GPU (the network is built there);
- the network itself: 16 (four int32 capacity arrays);
- the CPU solve: PyMaxflow's graph, 176 bytes per pixel (48 per node, 32 per arc, four arcs a
  pixel), plus about 1 per pixel (the mask) and a bounded block of index arrays
  (:func:`graphcut.solver.memory.grid_graph_bytes`);
- the GPU solve: 49 bytes per pixel of solver state (:mod:`graphcut.solver.cuda.grid`).

So an RGB image needs about 195 bytes per pixel on the CPU (a 30-megapixel photo: 5.5 GiB),
and about 115 of GPU memory.
"""

from __future__ import annotations

import logging
import os

import numpy as np

from graphcut.io import ImageInfo, image_info
from graphcut.solver import resolve_device
from graphcut.solver.memory import format_bytes, grid_graph_bytes, require_host_memory

__all__ = ["ENERGY_BYTES_PER_PIXEL", "NETWORK_BYTES_PER_PIXEL", "check_image_file",
           "segmentation_backend", "segmentation_bytes"]

log = logging.getLogger("graphcut")

# Peak bytes per pixel of building the energy network, for grey (1 or 2 channels) and colour
# (3 or 4) images, whatever their dtype (the image is converted to float64 first).
ENERGY_BYTES_PER_PIXEL = {"grey": 96, "colour": 112}
# The GridNetwork: source, sink, right, down as int32 (left and up share right and down).
NETWORK_BYTES_PER_PIXEL = 16
# GPU solver state per pixel (solver/cuda/grid.py) and the cut read back.
GPU_STATE_BYTES_PER_PIXEL = 49 + 1
# Volumes (depth > 1): 6-connected, so 3 n-link arrays instead of 2 in the energy and the
# network, and the 3-D GPU state (solver/cuda/grid3d.py); estimated from the 2-D figures.
VOLUME_ENERGY_FACTOR = 1.25
VOLUME_NETWORK_BYTES_PER_VOXEL = 20
VOLUME_GPU_STATE_BYTES_PER_VOXEL = 57 + 1


def _colour(channels: int) -> str:
    return "colour" if channels >= 3 else "grey"


def segmentation_bytes(height: int, width: int, channels: int, backend: str, *,
                       depth: int = 1) -> int:
    """Peak bytes a segmentation of an H x W image (a D x H x W volume with ``depth`` D > 1)
    with ``channels`` channels needs on ``backend`` ("cpu": host memory, "cuda": GPU memory),
    beyond the image and seed arrays already in memory (on the GPU: plus their upload)."""
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
        return max(energy, network * pixels + graph)
    upload = (8 * channels + 1) * pixels  # the image (at most 8 bytes a value) and the seeds
    return upload + max(energy, (network + state) * pixels)


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
                         name: str = "the image", held_bytes: int = 0, depth: int = 1) -> str:
    """The backend ("cpu" or "cuda") a segmentation will run on, after checking that it fits.

    ``device``: "auto", "cpu" or "cuda". With "auto", a segmentation too large for the GPU's
    free memory goes to the CPU (a logged warning). ``held_bytes``: host memory the caller
    will allocate first (decoding the files), counted with the CPU's need.

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
    if backend == "cuda" and _fits_on_gpu(segmentation_bytes(height, width, channels, "cuda",
                                                             depth=depth),
                                          f"{what} on the GPU", device):
        require_host_memory(held_bytes, f"reading {name}")
        return "cuda"
    need = segmentation_bytes(height, width, channels, "cpu", depth=depth)
    require_host_memory(held_bytes + need, f"{what} on the CPU ({format_bytes(need)} for the "
                                           "energy and PyMaxflow's graph)")
    return "cpu"


def _image_pixels_and_channels(image, seeds) -> tuple[int, int, int]:
    shape = tuple(getattr(seeds, "shape", None) or np.shape(seeds))
    if len(shape) != 2:
        shape = tuple(getattr(image, "shape", None) or np.shape(image))[:2]
    height, width = (int(v) for v in shape[:2]) if len(shape) >= 2 else (0, 0)
    size = int(getattr(image, "size", None) or np.size(image))
    channels = size // (height * width) if height * width else 1
    return height, width, max(1, min(channels, 4))


def array_segmentation_backend(image, seeds, device: str) -> str:
    """:func:`segmentation_backend` for arrays already in memory (``image`` (H, W) or
    (H, W, C) in any channel position, ``seeds`` (H, W))."""
    seeds_shape = tuple(getattr(seeds, "shape", None) or np.shape(seeds))
    if len(seeds_shape) == 3:  # a volume: (D, H, W) seeds
        depth, height, width = (int(v) for v in seeds_shape)
        size = int(getattr(image, "size", None) or np.size(image))
        channels = max(1, min(size // max(1, depth * height * width), 4))
        return segmentation_backend(height, width, channels, device, depth=depth)
    height, width, channels = _image_pixels_and_channels(image, seeds)
    return segmentation_backend(height, width, channels, device)


def file_bytes(info: ImageInfo) -> int:
    """Host bytes held once an image file and its seed file are decoded: the image array, its
    decoding transient and the seed labels (with their own decoding)."""
    pixels = info.height * info.width
    image = info.channels * info.dtype.itemsize * pixels
    decode = 2 * max(4, info.channels * info.dtype.itemsize) * pixels
    return image + max(decode, 12 * pixels) + pixels


def check_image_file(path, device: str, *, max_pixels: int | None = None) -> str:
    """Check, from the image file's header alone (nothing is decoded), that segmenting it fits
    in memory on ``device``; returns the backend it will run on.

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
                                name=os.fspath(path), held_bytes=file_bytes(info))


def check_volume_file(path, device: str, *, max_pixels: int | None = None) -> str | None:
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
                                name=os.fspath(path), held_bytes=held, depth=depth)
