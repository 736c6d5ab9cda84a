"""Stereo disparity with graph cuts: AD-census costs, alpha-expansion with a truncated linear
smoothness term, left-right check and occlusion filling; on the CPU or the GPU with the same
answer: :func:`disparity` (its docstring has an example), scored by :func:`bad_pixel_rate`.

The expansion machinery is shared with other multi-label problems and lives in
:mod:`graphcut.labeling` (re-exported here).
"""

from graphcut.labeling import (ExpansionResult, Move, MoveCallback, PairWeights,
                               alpha_expansion, expansion_network, labeling_energy)

from ._border import BorderExtrapolation, extrapolate_left_border
from ._costs import (CensusParameters, as_grey_levels, census_costs, data_costs,
                     right_view_labels, smoothness_weights)
from ._disparity import (DATA_COSTS, StereoResult, bad_pixel_rate, check_energy_range,
                         disparity, host_memory_needed, memory_needed)
from ._occlusion import (MedianFill, fill_from_background, inconsistent_pixels,
                         weighted_median_fill)
from ._local_expansion import LocalExpansion, PlaneResult, local_expansion_planes, planes_fill
from ._plane_stereo import PlaneStereoResult, plane_disparity
from ._plane_terms import cross_support, plane_data_costs, plane_energy, window_support
from ._planes import PlaneFill, colour_segments, fit_segment_planes, plane_fill
from ._subpixel_costs import subpixel_census_costs
from ._refine import EdgeRefinement, refine_depth_edges
from ._trim import ForegroundTrim, trim_foreground

__all__ = [
    "BorderExtrapolation", "CensusParameters", "DATA_COSTS", "EdgeRefinement", "ExpansionResult", "ForegroundTrim",
    "LocalExpansion", "MedianFill", "Move", "PlaneFill", "PlaneResult", "PlaneStereoResult", "MoveCallback", "PairWeights", "StereoResult", "alpha_expansion", "as_grey_levels", "bad_pixel_rate", "census_costs",
    "check_energy_range", "colour_segments", "data_costs", "disparity", "expansion_network",
    "extrapolate_left_border",
    "fill_from_background", "fit_segment_planes", "host_memory_needed", "inconsistent_pixels", "labeling_energy",
    "memory_needed", "plane_fill", "refine_depth_edges", "trim_foreground",
    "right_view_labels", "smoothness_weights", "weighted_median_fill",
    "cross_support", "local_expansion_planes", "plane_data_costs", "plane_disparity",
    "plane_energy", "planes_fill", "subpixel_census_costs", "window_support",
]
