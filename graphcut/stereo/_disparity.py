"""The disparity pipeline: cost volume, alpha-expansion, left-right check and occlusion filling.

The energy of a disparity map ``f`` of the left image is

    E(f) = sum_p D_p(f_p) + sum_{p~q} w_pq min(|f_p - f_q|, smoothness_truncation)

with AD-census data costs ``D`` (:func:`~graphcut.stereo.census_costs`) and contrast-sensitive
weights ``w`` (:func:`~graphcut.stereo.smoothness_weights`), minimised by alpha-expansion
(:func:`~graphcut.labeling.alpha_expansion`; the truncated linear term is a metric, so every
move is an exact minimum cut). Then pixels that fail the left-right check against the right
view's cheapest disparities are occluded (or mismatched) and take the disparity of the nearest
consistent background pixel on their row.

Every step gives the same integers on the CPU (NumPy, PyMaxflow) and on the GPU (CuPy kernels,
the push-relabel core): the same cost volume, the same moves, the same maps.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np

from graphcut.labeling import ExpansionResult, MoveCallback, alpha_expansion
from graphcut.solver import resolve_device
from graphcut.solver.memory import grid_graph_bytes, require_host_memory

from ._costs import (INT32_MAX, CensusParameters, census_bytes, census_costs_from_levels,
                     check_census_parameters, check_pair, data_costs_from_levels,
                     right_view_labels, smoothness_from_levels)
from ._border import BorderExtrapolation, check_border_extrapolation, extrapolate_left_border
from ._planes import PlaneFill, check_plane_fill
from ._planes import plane_fill as fill_from_planes
from ._occlusion import (MedianFill, check_median_fill, fill_from_background,
                         inconsistent_pixels, weighted_median_fill)
from ._refine import EdgeRefinement, check_edge_refinement, refine_depth_edges
from ._trim import ForegroundTrim, check_foreground_trim, trim_foreground

__all__ = ["DATA_COSTS", "StereoResult", "bad_pixel_rate", "check_energy_range", "disparity",
           "host_memory_needed", "memory_needed"]

log = logging.getLogger("graphcut.stereo")

DATA_COSTS = ("ad-census", "bt", "ad")
# Bytes per pixel of the expansion loop besides the cost volume and the CPU solver's graph
# (graphcut.solver.memory.grid_graph_bytes): labels, current costs, the proposal, the move's
# network and its int64 temporaries; on the GPU also the push-relabel state (49).
EXPANSION_BYTES_PER_PIXEL = {"cpu": 160, "cuda": 180}


@dataclass(frozen=True)
class StereoResult:
    """The outcome of :func:`disparity`.

    Attributes
    ----------
    disparity
        (H, W) int32 NumPy array, the final disparities in pixels (after occlusion
        filling when it is on). Also available as ``labels``.
    expansion
        the :class:`~graphcut.labeling.ExpansionResult` of the energy minimisation
        (its ``labels`` are the map before the left-right check).
    inconsistent
        bool (H, W), the pixels that failed the left-right check and were filled
        (None when filling is off).
    backend
        "cpu" or "cuda".
    stage_seconds
        wall seconds of each stage: "costs" (cost volume, weights and their
        upload), "expansion", "post" (left-right check and filling) and "total".
    """

    disparity: np.ndarray
    expansion: ExpansionResult
    inconsistent: np.ndarray | None
    backend: str
    stage_seconds: dict[str, float]

    @property
    def labels(self) -> np.ndarray:
        return self.disparity

    @property
    def seconds(self) -> float:
        return self.stage_seconds["total"]

    def __getattr__(self, name):  # energy, moves, cycles, ... of the expansion
        if name in ("energy", "initial_energy", "moves", "num_moves", "accepted_moves",
                    "cycles", "converged", "maxflow_seconds", "solve_seconds",
                    "build_seconds"):
            return getattr(self.expansion, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def _largest_data_cost(data_cost: str, census: CensusParameters, truncation: int) -> int:
    return 2 * census.scale if data_cost == "ad-census" else truncation


def check_energy_range(*, max_disparity: int, data_cost: str = "ad-census",
                       census: CensusParameters = CensusParameters(), truncation: int = 20,
                       smoothness: int = 8, flat_factor: int = 4,
                       smoothness_truncation: int = 3) -> None:
    """Raise ValueError when the energy's terms could overflow the solvers' int32 capacities.

    A terminal capacity is at most the largest data cost plus 8 times the largest pairwise
    cost ``smoothness * flat_factor * min(smoothness_truncation, max_disparity)``.
    """
    largest_pair = smoothness * flat_factor * max(1, min(smoothness_truncation, max_disparity))
    largest = _largest_data_cost(data_cost, census, truncation) + 8 * largest_pair
    if largest > INT32_MAX:
        raise ValueError(
            f"smoothness {smoothness} x flat factor {flat_factor} x smoothness truncation "
            f"{min(smoothness_truncation, max_disparity)} makes capacities up to {largest}, "
            f"above the int32 limit {INT32_MAX}; use smaller values")


def memory_needed(shape: tuple[int, int], max_disparity: int, device: str,
                  data_cost: str = "ad-census") -> int:
    """Peak bytes of :func:`disparity` for an (H, W) pair on ``device`` ("cpu" or "cuda"):
    the cost volume with its temporaries plus the expansion loop. (A GPU run with the "bt" or
    "ad" data cost also needs :func:`host_memory_needed` on the host, where that volume is
    computed.)"""
    h, w = shape
    if data_cost == "ad-census":
        volume = census_bytes(shape, max_disparity, device)
    else:
        volume = host_memory_needed(shape, max_disparity, data_cost)
    solver = grid_graph_bytes(h, w) if device == "cpu" else 0
    return volume + EXPANSION_BYTES_PER_PIXEL[device] * h * w + solver


def host_memory_needed(shape: tuple[int, int], max_disparity: int, data_cost: str) -> int:
    """Host bytes of the per-pixel ("bt", "ad") cost volume: the int32 volume plus the float
    temporaries of one disparity; 0 for "ad-census" on the GPU, built there."""
    h, w = shape
    if data_cost == "ad-census":
        return 0
    return 4 * (max_disparity + 1) * h * w + 160 * h * w


def _check_memory(shape, max_disparity, backend, device, data_cost) -> str:
    """The backend to run on after checking the memory need (GPU: free memory; host: the
    memory available to this process); with device="auto" a GPU that is too small falls back
    to the CPU."""
    h, w = shape
    what = (f"a {max_disparity + 1}-label cost volume for a {w}x{h} pair and its expansion "
            f"moves")
    if backend == "cuda":
        from graphcut.solver import GPUMemoryError
        from graphcut.solver import require_gpu_memory as require_free_memory
        try:
            require_free_memory(memory_needed(shape, max_disparity, "cuda", data_cost), what)
        except GPUMemoryError as error:
            if device != "auto":
                raise
            log.warning("%s; falling back to the CPU backend", error)
            backend = "cpu"
    if backend == "cpu":
        require_host_memory(memory_needed(shape, max_disparity, "cpu", data_cost),
                            f"{what} on the CPU")
    else:
        require_host_memory(host_memory_needed(shape, max_disparity, data_cost),
                            f"{what} (the host side)")
    return backend


def _synchronize(backend: str) -> None:
    if backend == "cuda":
        import cupy
        cupy.cuda.Device().synchronize()


def _check_int(name, value, low, high) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not low <= value <= high:
        raise ValueError(f"{name} must be an int in {low}..{high}, got {value!r}")
    return int(value)


def disparity(left, right, *, max_disparity: int, data_cost: str = "ad-census",
              census: CensusParameters = CensusParameters(), truncation: int = 20,
              smoothness: int = 8, flat_factor: int = 4, edge_threshold: float = 8.0,
              smoothness_truncation: int = 3, fill_occlusions: bool = True,
              consistency_tolerance: int = 1, channel_axis=None, device: str = "auto",
              max_cycles: int = 2, callback: MoveCallback | None = None,
              median_fill: MedianFill | None = None,
              border_extrapolation: BorderExtrapolation | None = None,
              edge_refinement: EdgeRefinement | None = None,
              plane_fill: PlaneFill | None = None,
              foreground_trim: ForegroundTrim | None = ForegroundTrim()) -> StereoResult:
    """Disparity map of the left image of a rectified pair, by alpha-expansion.

    Parameters
    ----------
    left, right
        the pair, same shape; grey (H, W) or colour with ``channel_axis``.
    max_disparity
        labels are 0 .. max_disparity (pixels); left ``(y, x)`` matches right
        ``(y, x - d)``.
    data_cost
        "ad-census" (:func:`census_costs` with ``census``), or the per-pixel
        "bt" (Birchfield-Tomasi) or "ad" (absolute difference) of :func:`data_costs`,
        clipped at ``truncation`` grey levels.
    smoothness, flat_factor, edge_threshold
        :func:`smoothness_weights` of the left
        image: weight ``smoothness`` across intensity edges, ``flat_factor`` times more
        between neighbours differing by at most ``edge_threshold`` grey levels.
    smoothness_truncation
        the pairwise cost is ``w min(|d_p - d_q|, this)``; 1 = Potts.
    fill_occlusions
        replace pixels failing the left-right check (tolerance
        ``consistency_tolerance`` pixels) by the nearest consistent background disparity,
        then, when ``median_fill`` is given (e.g. ``MedianFill()``), by the colour-weighted
        median of the labels around them (:func:`~graphcut.stereo.weighted_median_fill`
        with those settings). Off by default: it helps the synthetic scenes (development
        and held-out) but not the Middlebury motorcycle (see the benchmarks page).
    border_extrapolation
        with ``fill_occlusions``, the leading run of inconsistent pixels of each row (the
        strip the right camera does not see, ``x < d``) continues the surface to its right
        along its row-wise slope (:func:`~graphcut.stereo.extrapolate_left_border` with these
        settings, e.g. ``BorderExtrapolation()``) instead of keeping the background fill's
        constant; None (the default) leaves it off (see below).
    plane_fill
        with ``fill_occlusions``, after the background fill and the border extrapolation,
        the inconsistent pixels of colour segments of the left image whose consistent pixels
        lie on one plane take that plane's disparity
        (:func:`~graphcut.stereo.plane_fill` with these settings, e.g. ``PlaneFill()``);
        None (the default) leaves it off (docs/stereo.md).
    foreground_trim
        with ``fill_occlusions``, after the fills, depth edges that lie inside the
        background's colour move back to the object's colour edge
        (:func:`~graphcut.stereo.trim_foreground` with these settings; on by default,
        ``ForegroundTrim()``; None turns it off; docs/stereo.md, "Foreground trimming").
    edge_refinement
        with ``fill_occlusions``, last of all the pixels near depth edges take the
        colour-weighted median of the labels around them
        (:func:`~graphcut.stereo.refine_depth_edges` with these settings): edges move to the
        colour edges of the left image. None (the default) leaves it off: chosen on the real
        development pairs (Middlebury teddy and venus), both steps helped the real held-out
        pairs cones and bull but cost the motorcycle 0.3-0.5 points and about 0.6 s of host
        time at full size, which could not be measured against the 1.5 s GPU goal when they
        were added (docs/stereo.md); pass ``EdgeRefinement()`` and ``BorderExtrapolation()``
        to use them.
    device
        "auto", "cpu" or "cuda" for the cost volume and every move; "auto" falls back
        to the CPU when the GPU has too little free memory.
    max_cycles
        passes over the labels (2 by default: a third changes little).
    callback
        called after every move, see :func:`~graphcut.labeling.alpha_expansion`.

    Returns
    -------
    StereoResult
        :class:`StereoResult`. Raises ValueError/TypeError for bad input, and before building
        anything ``graphcut.solver.memory.HostMemoryError`` (or the GPU's ``GPUMemoryError``)
        when the memory needed is not there (see :func:`memory_needed`).

    Examples
    --------
    A random texture seen 2 pixels further left by the right camera:

    >>> import numpy as np
    >>> from graphcut.stereo import bad_pixel_rate, disparity
    >>> right = np.random.default_rng(0).integers(0, 256, (8, 16)).astype(np.uint8)
    >>> left = np.roll(right, 2, axis=1)          # left (y, x) is right (y, x - 2)
    >>> result = disparity(left, right, max_disparity=4, device="cpu")
    >>> result.disparity[0]
    array([2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]...)
    >>> bad_pixel_rate(result.disparity, np.full((8, 16), 2.0))
    0.0
    >>> result.backend, result.disparity.dtype
    ('cpu', dtype('int32'))
    """
    started = time.perf_counter()
    backend = resolve_device(device)
    if data_cost not in DATA_COSTS:
        raise ValueError(f"data_cost must be one of {', '.join(DATA_COSTS)}, got {data_cost!r}")
    census = check_census_parameters(census)
    left_levels, right_levels = check_pair(left, right, channel_axis, max_disparity)
    smoothness = _check_int("smoothness", smoothness, 0, 1 << 20)
    flat_factor = _check_int("flat_factor", flat_factor, 0, 1024)
    smoothness_truncation = _check_int("smoothness_truncation", smoothness_truncation, 1,
                                       1 << 16)
    consistency_tolerance = _check_int("consistency_tolerance", consistency_tolerance, 0,
                                       1 << 16)
    if data_cost != "ad-census":
        truncation = _check_int("truncation", truncation, 0, 255)
    if isinstance(edge_threshold, bool) or not isinstance(edge_threshold,
                                                          (int, float, np.number)) \
            or not (0 <= edge_threshold <= 255 and math.isfinite(edge_threshold)):
        raise ValueError(f"edge_threshold must be a number in 0..255 (grey levels), got "
                         f"{edge_threshold!r}")
    if median_fill is not None:
        median_fill = check_median_fill(median_fill)
    if border_extrapolation is not None:
        border_extrapolation = check_border_extrapolation(border_extrapolation)
    if edge_refinement is not None:
        edge_refinement = check_edge_refinement(edge_refinement)
    if plane_fill is not None:
        plane_fill = check_plane_fill(plane_fill)
    if foreground_trim is not None:
        foreground_trim = check_foreground_trim(foreground_trim)
    check_energy_range(max_disparity=max_disparity, data_cost=data_cost, census=census,
                       truncation=truncation, smoothness=smoothness, flat_factor=flat_factor,
                       smoothness_truncation=smoothness_truncation)
    shape = left_levels.shape[:2]
    backend = _check_memory(shape, max_disparity, backend, device, data_cost)

    if data_cost == "ad-census":
        costs = census_costs_from_levels(left_levels, right_levels, int(max_disparity), census,
                                         backend)
    else:
        costs = data_costs_from_levels(left_levels, right_levels, int(max_disparity),
                                       truncation, data_cost == "bt")
    weights = smoothness_from_levels(left_levels, smoothness, float(edge_threshold),
                                     flat_factor)
    if backend == "cuda":
        import cupy
        costs = cupy.asarray(costs)
        weights = type(weights)(*(cupy.asarray(w) for w in weights))
    _synchronize(backend)
    costs_done = time.perf_counter()

    expansion = alpha_expansion(costs, weights, device=backend, max_cycles=max_cycles,
                                callback=callback, linear_truncation=smoothness_truncation)
    expansion_done = time.perf_counter()

    inconsistent = None
    result = expansion.labels
    if fill_occlusions:
        right_labels = right_view_labels(costs)
        if backend == "cuda":
            right_labels = right_labels.get()
        inconsistent = inconsistent_pixels(result, right_labels,
                                           tolerance=consistency_tolerance)
        result = fill_from_background(result, inconsistent)
        if border_extrapolation is not None:
            result = extrapolate_left_border(result, inconsistent,
                                             **border_extrapolation._asdict(),
                                             max_label=int(max_disparity))
        if plane_fill is not None:
            result = fill_from_planes(result, inconsistent, left_levels,
                                      **plane_fill._asdict(), max_label=int(max_disparity))
        if median_fill is not None:
            result = weighted_median_fill(result, inconsistent, left_levels,
                                          radius=median_fill.radius, step=median_fill.step,
                                          colour_sigma=median_fill.colour_sigma,
                                          space_sigma=median_fill.space_sigma,
                                          max_label=int(max_disparity))
        if foreground_trim is not None:
            result = trim_foreground(result, left_levels, **foreground_trim._asdict())
        if edge_refinement is not None:
            result = refine_depth_edges(result, left_levels, **edge_refinement._asdict(),
                                        max_label=int(max_disparity))
    done = time.perf_counter()
    return StereoResult(result, expansion, inconsistent, backend,
                        {"costs": costs_done - started, "expansion": expansion_done - costs_done,
                         "post": done - expansion_done, "total": done - started})


def bad_pixel_rate(estimate, ground_truth, *, threshold: float = 1.0, valid=None) -> float:
    """Fraction of valid pixels where ``|estimate - ground_truth| > threshold``.

    Pixels are valid where ``ground_truth`` is finite (and ``valid`` is True, if given).
    Non-finite estimates (e.g. a method's invalid pixels) count as bad.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.stereo import bad_pixel_rate
    >>> truth = np.array([[1.0, 2.0, 3.0, 4.0]])
    >>> bad_pixel_rate(np.array([[1, 2, 5, 4]]), truth)       # one pixel off by 2
    0.25
    >>> bad_pixel_rate(np.array([[1, 2, 5, 4]]), truth, threshold=2.0)
    0.0
    """
    estimate = np.asarray(estimate, dtype=np.float64)
    ground_truth = np.asarray(ground_truth, dtype=np.float64)
    if estimate.shape != ground_truth.shape:
        raise ValueError(f"estimate {estimate.shape} and ground truth {ground_truth.shape} "
                         "differ in shape")
    mask = np.isfinite(ground_truth)
    if valid is not None:
        mask &= np.asarray(valid, dtype=bool)
    if not mask.any():
        raise ValueError("no valid ground-truth pixel")
    return float(np.mean(~(np.abs(estimate[mask] - ground_truth[mask]) <= threshold)))
