"""Stereo disparity with graph cuts: AD-census costs, alpha-expansion with a truncated linear
smoothness term, left-right check and occlusion filling; on the CPU or the GPU with the same
answer.

    >>> from graphcut.stereo import disparity, bad_pixel_rate
    >>> result = disparity(left, right, max_disparity=64, channel_axis=-1)  # doctest: +SKIP
    >>> bad_pixel_rate(result.disparity, truth)                             # doctest: +SKIP

The expansion machinery is shared with other multi-label problems and lives in
:mod:`graphcut.labeling` (re-exported here).
"""

from graphcut.labeling import (ExpansionResult, Move, MoveCallback, PairWeights,
                               alpha_expansion, expansion_network, labeling_energy)

from ._costs import (CensusParameters, as_grey_levels, census_costs, data_costs,
                     right_view_labels, smoothness_weights)
from ._disparity import (DATA_COSTS, StereoResult, bad_pixel_rate, check_energy_range,
                         disparity, host_memory_needed, memory_needed)
from ._occlusion import (MedianFill, fill_from_background, inconsistent_pixels,
                         weighted_median_fill)

__all__ = [
    "CensusParameters", "DATA_COSTS", "MedianFill", "ExpansionResult", "Move", "MoveCallback", "PairWeights",
    "StereoResult", "alpha_expansion", "as_grey_levels", "bad_pixel_rate", "census_costs",
    "check_energy_range", "data_costs", "disparity", "expansion_network",
    "fill_from_background", "host_memory_needed", "inconsistent_pixels", "labeling_energy",
    "memory_needed",
    "right_view_labels", "smoothness_weights", "weighted_median_fill",
]
