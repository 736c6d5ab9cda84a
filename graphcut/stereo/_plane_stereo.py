"""The slanted-plane pipeline (opt-in, CPU prototype): :func:`plane_disparity`.

:func:`~graphcut.stereo.disparity`'s integer map (its alpha-expansion, before the left-right
check) becomes fronto-parallel planes, improved by local expansion moves
(:mod:`._local_expansion`) on raw AD-census costs sampled every ``1 / steps`` pixel of
disparity (:mod:`._subpixel_costs`); then the left-right check (the rounded disparities
against the right view's cheapest integer disparities) and the plane fill
(:func:`~graphcut.stereo.planes_fill`).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from ._costs import check_pair, right_view_labels
from ._disparity import StereoResult, disparity
from ._local_expansion import (LocalExpansion, PlaneResult, check_local_expansion,
                               local_expansion_planes, planes_fill)
from ._occlusion import inconsistent_pixels
from ._plane_terms import cross_support, window_support
from ._subpixel_costs import subpixel_census_costs

__all__ = ["PlaneStereoResult", "plane_disparity"]

SUPPORTS = ("cross", "window")


class PlaneStereoResult(NamedTuple):
    """The outcome of :func:`plane_disparity`.

    disparity: (H, W) float64 disparities in pixels (filled where the check failed);
    planes: the :class:`~graphcut.stereo.PlaneResult` of the local expansion (its planes
    (3, H, W), energies, moves); initial: the integer pipeline's
    :class:`~graphcut.stereo.StereoResult` it started from; inconsistent: bool (H, W), the
    pixels that failed the left-right check (None when filling is off); seconds: wall time
    of each stage ("initial", "costs", "planes", "post", "total").
    """

    disparity: np.ndarray
    planes: PlaneResult
    initial: StereoResult
    inconsistent: np.ndarray | None
    seconds: dict


def plane_disparity(left, right, *, max_disparity: int, channel_axis=None,
                    settings: LocalExpansion = LocalExpansion(), steps: int = 4,
                    support: str = "cross", window_radius: int = 5,
                    fill_occlusions: bool = True, **options) -> PlaneStereoResult:
    """Sub-pixel disparities of the left image from slanted-plane labels (CPU prototype).

    Parameters
    ----------
    left, right
        the rectified pair, same shape; grey (H, W) or colour with ``channel_axis``
        (grey levels 0..255).
    max_disparity
        the largest disparity, pixels (left ``(y, x)`` matches right ``(y, x - d)``).
    channel_axis
        the colour axis of ``left`` and ``right``, None for grey images.
    settings
        :class:`~graphcut.stereo.LocalExpansion` (cells, passes, truncation, proposals).
    steps
        raw costs sampled every ``1 / steps`` pixel of disparity (1..16).
    support
        the data cost's windows: "cross" (the default pipeline's cross regions, at most
        7 x 7) or "window" (colour-similarity weights).
    window_radius
        the "window" support's radius, pixels ((2 r + 1)^2 pixels).
    fill_occlusions
        the left-right check and the plane fill; False returns the planes' disparities.
    **options
        passed to :func:`~graphcut.stereo.disparity` for the initial integer map (its
        smoothness weights are the planes' too); ``device`` defaults to "cpu".

    Returns
    -------
    PlaneStereoResult
        the float disparities, the planes and the integer map they started from.

    Raises
    ------
    ValueError
        for an unknown ``support``, ``steps`` outside 1..16, bad ``settings``, or what
        :func:`~graphcut.stereo.disparity` refuses.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.stereo import LocalExpansion, plane_disparity
    >>> right = np.random.default_rng(0).integers(0, 256, (12, 24)).astype(np.uint8)
    >>> left = np.roll(right, 2, axis=1)
    >>> result = plane_disparity(left, right, max_disparity=4,
    ...                          settings=LocalExpansion(cell_sizes=(4,), iterations=1))
    >>> result.disparity.shape, result.planes.planes.shape
    ((12, 24), (3, 12, 24))
    """
    started = time.perf_counter()
    if support not in SUPPORTS:
        raise ValueError(f"support must be one of {', '.join(SUPPORTS)}, got {support!r}")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) \
            or not 1 <= steps <= 16:
        raise ValueError(f"steps must be an int in 1..16 (samples per pixel), got {steps!r}")
    settings = check_local_expansion(settings)
    options.setdefault("device", "cpu")
    initial = disparity(left, right, max_disparity=max_disparity, channel_axis=channel_axis,
                        fill_occlusions=False, **options)
    initial_done = time.perf_counter()
    left_levels, right_levels = check_pair(left, right, channel_axis, max_disparity)
    left_levels, right_levels = np.rint(left_levels), np.rint(right_levels)
    raw = subpixel_census_costs(left_levels, right_levels, int(max_disparity), int(steps))
    windows = (cross_support(left_levels.astype(np.int32)) if support == "cross"
               else window_support(left_levels, window_radius))
    smoothness = _weights(left_levels, options)
    costs_done = time.perf_counter()
    planes = local_expansion_planes(raw, windows, smoothness, initial.expansion.labels,
                                    settings, steps=int(steps))
    planes_done = time.perf_counter()
    result, inconsistent = planes.disparity, None
    if fill_occlusions:
        aggregated = _aggregated(left_levels, right_levels, int(max_disparity), options)
        inconsistent = inconsistent_pixels(np.rint(result).astype(np.int64),
                                           right_view_labels(aggregated), tolerance=1)
        result = planes_fill(planes.planes, inconsistent, max_disparity)
    done = time.perf_counter()
    return PlaneStereoResult(result, planes, initial, inconsistent, {
        "initial": initial_done - started, "costs": costs_done - initial_done,
        "planes": planes_done - costs_done, "post": done - planes_done,
        "total": done - started})


def _weights(levels, options):
    from ._costs import smoothness_from_levels
    return smoothness_from_levels(levels, int(options.get("smoothness", 8)),
                                  float(options.get("edge_threshold", 8.0)),
                                  int(options.get("flat_factor", 4)))


def _aggregated(left_levels, right_levels, max_disparity, options):
    from ._costs import CensusParameters, census_costs_from_levels
    return census_costs_from_levels(left_levels, right_levels, max_disparity,
                                    options.get("census", CensusParameters()), "cpu")
