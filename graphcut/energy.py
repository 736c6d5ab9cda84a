"""Deprecated: moved to graphcut.segmentation (the energy: boundary term, capacities, build_network) and graphcut.models (histograms). This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.energy is deprecated: import from graphcut.segmentation",
              DeprecationWarning, stacklevel=2)

from graphcut._arrays import array_module, image_as_float  # noqa: F401
from graphcut.models import (DEFAULT_COLOUR_BINS, DEFAULT_GREY_BINS, SMOOTHING_PASSES,  # noqa: F401
                             UNIFORM_WEIGHT)
from graphcut.segmentation import (DEFAULT_LAM, DEFAULT_SCALE, SIGMA_MIN,  # noqa: F401
                                   SeedHistograms, build_network, capacities_from_tables,
                                   check_sigma, estimate_sigma, nlink_weights, quantize,
                                   quantize_weights, regional_costs, seed_pins,
                                   spatial_channel_axis, terminal_capacities)
