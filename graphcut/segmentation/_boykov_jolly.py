"""The Boykov-Jolly segmentation energy as a 4-connected :class:`GridNetwork`.

Energy of a labelling L (object / background) of the pixels:

    E(L) = sum_p R_p(L_p) + lam * sum_{p~q, L_p != L_q} w_pq

- regional term R_p: ``-log P(I_p | object)`` or ``-log P(I_p | background)``, from smoothed
  colour histograms of the seeded pixels (:func:`regional_costs`), in nats;
- boundary term: ``w_pq = exp(-||I_p - I_q||^2 / (2 sigma^2))`` for 4-neighbours
  (:func:`nlink_weights`), in (0, 1];
- hard constraints: seeded pixels are pinned to their label.

As a flow network (source s = object, sink t = background): the n-link p <-> q has capacity
``lam * w_pq`` both ways, s -> p has ``R_p(background)`` and p -> t has ``R_p(object)``, and the
minimum cut's source side is the object. Object seeds get s -> p = K_p and p -> t = 0,
background seeds the reverse, with K_p = 1 + the sum of p's n-link capacities: cutting s -> p
would then always cost more than cutting every n-link around p, so p stays on the source
side in every minimum cut, and K_p is bounded by 1 + 4 * max n-link capacity (no overflow).

Capacities are integers: every float capacity is multiplied by ``scale`` and rounded, so a
capacity is within ``0.5 / scale`` of its float value (``scale`` = 1000: 0.0005 nats). The
maximum flow divided by ``scale`` is then the minimum energy. Capacities above the int32 limit
raise a ValueError that says which term overflowed.

Every function here takes NumPy or CuPy arrays and answers on the image's device. On the GPU
each step is a kernel of ``segmentation/energy_kernels.cu`` (shipped precompiled, loaded by the
package's one CUDA loader; host code in ``graphcut.segmentation.energy_kernels``) with the same
float64 formulas, so a machine's first segmentation does not wait for NVRTC to compile CuPy's
element-wise kernels and does not import CuPy's SciPy extras; the small per-cell colour tables
are computed on the host with NumPy, exactly as on the CPU.

Images: grey (H, W), or (H, W, C) with C = 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA);
alpha is ignored. ``channel_axis`` names the channel axis of a 3-D array (scikit-image
convention); 2-D arrays are always grey. Volumes: grey (D, H, W) with ``channel_axis=None`` (or
seeds of the same shape, which say there is no channel axis), or (D, H, W, C); they get the
6-connected grid, and ``spacing=(dz, dy, dx)`` weighs the n-links along each axis by
``min(spacing) / spacing[axis]`` (anisotropic voxels: slices further apart are tied less).
Integer images are scaled to [0, 1] by their dtype's maximum (uint8 by 255, uint16 by 65535),
bool to 0 / 1, float images are used as they are and must be finite. Inputs are never modified.
"""

from __future__ import annotations

import math

import numpy as np

from graphcut._arrays import array_module, image_as_float, same_device
from graphcut._arrays import energy_kernels as _gpu
from graphcut.io import check_seeds
from graphcut.models import histogram_costs
from graphcut.solver import GridNetwork

from ._boundary import weights_of_values
from ._capacities import DEFAULT_SCALE, quantize_weights, seed_pins, terminal_capacities
from ._seed_histograms import SeedHistograms, capacities_from_tables

# Default weight of the boundary term against the regional term. Chosen on the bundled samples
# (5 to 20 give clean masks there, 1 leaves speckle) and on noisy synthetic discs, where the
# IoU with the truth peaks around 10 and collapses above ~40 at strong noise (the cut shrinks
# to the seeds). See docs/segment.md.
DEFAULT_LAM = 10.0


def regional_costs(image, seeds, *, bins=None, channel_axis=-1):
    """Per-pixel costs of the object and background labels from the seeds' colour statistics.

    Each model is a histogram of the seeded pixels' colours (joint over R, G, B for colour
    images), smoothed with a binomial filter and mixed with 1 % of a uniform distribution;
    the cost of a label is ``-log P(bin of I_p | model)`` in nats (at most about
    ``log(bins ** channels / 0.01)``).

    Parameters
    ----------
    image
        see the module docstring.
    seeds
        (H, W) (or (D, H, W)) labels, 0 none, 1 object, 2 background; both labels must
        be present.
    bins
        histogram bins per channel, over the image's own range of each channel
        (``None``: 64 for grey, 16 for colour images).
    channel_axis
        the channel axis of a 3-D image.

    Returns
    -------
    tuple of numpy.ndarray
        ``(cost_object, cost_background)``, float64 (H, W) (or (D, H, W)) each.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import regional_costs
    >>> image = np.array([[0, 0, 200, 200]], np.uint8)
    >>> seeds = np.array([[2, 0, 0, 1]], np.uint8)
    >>> cost_object, cost_background = regional_costs(image, seeds)
    >>> bool(cost_object[0, 2] < cost_background[0, 2])     # bright: cheaper as object
    True
    >>> bool(cost_object[0, 1] > cost_background[0, 1])     # dark: cheaper as background
    True
    """
    values = image_as_float(image, channel_axis=spatial_channel_axis(image, seeds, channel_axis))
    seeds = check_seeds_for(values, seeds)
    return histogram_costs(values, seeds, bins)


def build_network(image, seeds, *, lam=DEFAULT_LAM, sigma=None, bins=None, channel_axis=-1,
                  scale=DEFAULT_SCALE, spacing=None) -> GridNetwork:
    """The Boykov-Jolly segmentation network of ``image`` with ``seeds`` (module docstring).

    Parameters
    ----------
    image
        grey or colour image, or volume (NumPy or CuPy; the network is built on the
        same device).
    seeds
        (H, W) (or (D, H, W)) labels, 0 none, 1 object, 2 background; both labels
        must be present.
    lam
        weight of the boundary term against the regional term (>= 0); larger values give
        smoother boundaries that follow image edges more than colour statistics.
    sigma
        colour-difference scale of the n-link weights (:func:`nlink_weights`).
    bins
        histogram bins per channel (:func:`regional_costs`).
    channel_axis
        the channel axis of a 3-D image; ignored when the image has as many
        dimensions as the seeds (no channel axis: a grey image or volume).
    scale
        float capacities are multiplied by this and rounded (precision 0.5 / scale).
    spacing
        ``(dy, dx)`` or ``(dz, dy, dx)`` pixel (voxel) size; the n-links along an
        axis are weighed by ``min(spacing) / spacing[axis]``. ``None``: isotropic.

    Returns
    -------
    GridNetwork
        A :class:`GridNetwork` (4-connected, or 6-connected for a volume) with symmetric
        n-links whose minimum cut's source side is the object; its maximum flow / scale is the
        minimum energy.

    Raises
    ------
    ValueError
        bad image, bad seeds (size, labels, no object or no background seed), bad
        options, or capacities above the int32 limit.

    Examples
    --------
    The network :func:`graphcut.segment` cuts, built and cut by hand:

    >>> import numpy as np
    >>> from graphcut import build_network, min_cut
    >>> image = np.zeros((4, 5), np.uint8)
    >>> image[1:3, 1:4] = 200
    >>> seeds = np.zeros((4, 5), np.uint8)
    >>> seeds[1, 2], seeds[0, 0] = 1, 2
    >>> network = build_network(image, seeds, lam=10)
    >>> network.shape, network.right.shape, network.down.shape
    ((4, 5), (4, 4), (3, 5))
    >>> min_cut(network, device="cpu").source_side.astype(int)
    array([[0, 0, 0, 0, 0],
           [0, 1, 1, 1, 0],
           [0, 1, 1, 1, 0],
           [0, 0, 0, 0, 0]])
    """
    lam = float(lam)
    if not (math.isfinite(lam) and lam >= 0.0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam}")
    values = image_as_float(image, channel_axis=spatial_channel_axis(image, seeds, channel_axis))
    seeds = check_seeds_for(values, seeds)
    links = tuple(quantize_weights(w, lam, scale=scale, what="n-link capacities (lam * weights)")
                  for w in weights_of_values(values, sigma, spacing))
    if array_module(values) is not np:
        return _build_network_gpu(values, seeds, links, bins, scale)
    cost_object, cost_background = histogram_costs(values, seeds, bins)
    source, sink = terminal_capacities(cost_object, cost_background, links, seeds,
                                       scale=scale)
    return GridNetwork(source, sink, forward=links[::-1])


def _build_network_gpu(values, labels, links, bins, scale) -> GridNetwork:
    """The rest of :func:`build_network` on the GPU: the per-pixel costs are lookups of
    per-cell tables (so the terminal capacities are those tables quantised, looked up, then
    the seeds' hard constraints), computed by :class:`SeedHistograms`'s tables."""
    import cupy
    histograms = SeedHistograms(values, bins=bins, host_index=False)
    histograms.counts = _gpu().seed_histograms(histograms.index, labels, histograms.cells)
    tables = (cupy.asarray(t) for t in histograms.capacity_tables(scale))
    source, sink = capacities_from_tables(histograms.index, labels, seed_pins(links), *tables)
    return GridNetwork.from_checked(source, sink, forward=links[::-1])  # checked by the kernels


def check_seeds_for(values, seeds, **options):
    """The seeds, checked against the image's values (..., C) and moved to their device (on
    the GPU: as C-contiguous uint8 labels)."""
    spatial = values.shape[:-1]
    if getattr(seeds, "ndim", len(spatial)) != len(spatial):
        raise ValueError(f"seeds have shape {tuple(seeds.shape)} but the image's spatial shape "
                         f"is {tuple(spatial)}: a {len(spatial)}-D image needs "
                         f"{len(spatial)}-D seeds")
    seeds = check_seeds(same_device(seeds, values), spatial, **options)
    if array_module(values) is not np:
        return _gpu().seed_labels(seeds)[0]
    return seeds


def spatial_channel_axis(image, seeds, channel_axis):
    """``channel_axis``, or None when ``image`` has as many dimensions as ``seeds`` (a grey
    image or volume: the seeds say there is no channel axis)."""
    if getattr(seeds, "ndim", None) is not None and getattr(image, "ndim", None) == seeds.ndim:
        return None
    return channel_axis


__all__ = ["DEFAULT_LAM", "build_network", "check_seeds_for", "regional_costs",
           "spatial_channel_axis"]
