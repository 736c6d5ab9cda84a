"""Depth-edge refinement: a colour-weighted median of the labels in a band around depth edges.

Graph cuts on aggregated costs put depth edges a few pixels off the colour edges of the left
image (a foreground object "fattens" over the background next to it) and leave narrow wrong
streaks where the left-right check filled occlusions. Around every depth edge, each pixel takes
the colour-weighted median of the labels around it (:func:`~graphcut.stereo.weighted_median_fill`),
so the edge moves to where the colours change (the weighted median filter of cost-volume
filtering, Hosni et al. 2013, applied only where the labels change). Runs on the host with
NumPy and SciPy after either backend, so it is the same on every backend.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import ndimage

from ._checks import checked_int, unpacked
from ._occlusion import MedianFill, check_median_fill, weighted_median_fill

__all__ = ["EdgeRefinement", "check_edge_refinement", "depth_edge_band", "refine_depth_edges"]


class EdgeRefinement(NamedTuple):
    """Settings of :func:`refine_depth_edges` as :func:`~graphcut.stereo.disparity` applies
    it (``edge_refinement=EdgeRefinement()``; off by default, see docs/stereo.md). Chosen on the
    real development pairs of bench/bench_stereo.py (Middlebury teddy and venus) only: see
    docs/stereo.md.

    radius, step, colour_sigma, space_sigma: the weighted median's window (pixels; every
    step-th row and column) and weight decays (grey levels, pixels), as in
    :func:`~graphcut.stereo.weighted_median_fill`; band: pixels within this many 4-connected
    steps of a depth edge are refined.
    """

    radius: int = 15
    step: int = 5
    colour_sigma: float = 10.0
    space_sigma: float = 15.0
    band: int = 2


def check_edge_refinement(settings) -> EdgeRefinement:
    """``settings`` as an :class:`EdgeRefinement` after checking its values (ValueError)."""
    radius, step, colour_sigma, space_sigma, band = unpacked(
        settings, "edge_refinement", "EdgeRefinement", EdgeRefinement._fields)
    try:
        window = check_median_fill(MedianFill(radius, step, colour_sigma, space_sigma))
    except ValueError as error:
        raise ValueError(f"edge refinement: {error}") from None
    band = checked_int("edge refinement", "band", band, 0, 256, " pixels")
    return EdgeRefinement(*window, band)


def depth_edge_band(labels, band: int) -> np.ndarray:
    """Pixels within ``band`` 4-connected steps of a depth edge: a pixel whose 3 x 3
    neighbourhood (inside the image) holds labels more than 1 apart.

    Returns
    -------
    numpy.ndarray
        bool (H, W).
    """
    labels = np.asarray(labels)
    spread = ndimage.maximum_filter(labels, 3, mode="nearest") \
        - ndimage.minimum_filter(labels, 3, mode="nearest")
    edges = spread > 1
    if band == 0 or not edges.any():
        return edges
    return ndimage.binary_dilation(edges, iterations=band)


def refine_depth_edges(labels, image, *, radius: int = 15, step: int = 5,
                       colour_sigma: float = 10.0, space_sigma: float = 15.0, band: int = 2,
                       max_label: int | None = None) -> np.ndarray:
    """Replace the labels in a band around depth edges by their colour-weighted median.

    Every pixel of :func:`depth_edge_band` ``(labels, band)`` takes the weighted median of the
    labels of its window (all of them as they were before this call), with the weights of
    :func:`~graphcut.stereo.weighted_median_fill`.

    Parameters
    ----------
    labels : (H, W) integer array
        A disparity map, labels >= 0.
    image : (H, W) or (H, W, C) array
        The left image on the 0..255 scale.
    radius, step : int
        Half the window's side and the sampling step, pixels (1 <= step <= radius).
    colour_sigma, space_sigma : float
        Decay of the weights in grey levels and in pixels (> 0).
    band : int
        Pixels within this many 4-connected steps of an edge are refined (>= 0).
    max_label : int, optional
        The largest label (default: the map's maximum).

    Returns
    -------
    numpy.ndarray
        A new map of ``labels``' dtype; pixels away from depth edges are unchanged.

    Raises
    ------
    ValueError
        On shapes that differ, negative labels or parameters out of range.

    Examples
    --------
    A depth edge one pixel to the right of the colour edge (the background "fattened"):

    >>> image = np.repeat([[10] * 8 + [200] * 8], 9, axis=0)
    >>> labels = np.repeat([[5] * 9 + [9] * 7], 9, axis=0)
    >>> refine_depth_edges(labels, image, radius=3, step=1, band=2)[4].tolist()
    [5, 5, 5, 5, 5, 5, 5, 5, 9, 9, 9, 9, 9, 9, 9, 9]
    """
    radius, step, colour_sigma, space_sigma, band = check_edge_refinement(
        EdgeRefinement(radius, step, colour_sigma, space_sigma, band))
    labels = np.asarray(labels)
    if labels.ndim != 2:
        raise ValueError(f"labels must be 2-D, got shape {labels.shape}")
    target = depth_edge_band(labels, band)
    return weighted_median_fill(labels, target, image, radius=radius, step=step,
                                colour_sigma=colour_sigma, space_sigma=space_sigma,
                                max_label=max_label)
