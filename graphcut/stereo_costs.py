"""Deprecated: moved to graphcut.stereo. This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.stereo_costs is deprecated: import from graphcut.stereo",
              DeprecationWarning, stacklevel=2)

from graphcut.stereo import (CensusParameters, PairWeights, as_grey_levels,  # noqa: F401
                             census_costs, data_costs, right_view_labels,
                             smoothness_weights)
