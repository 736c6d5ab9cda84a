"""Deprecated: moved to graphcut.segmentation. This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.memory is deprecated: import from graphcut.segmentation",
              DeprecationWarning, stacklevel=2)

from graphcut.segmentation import (ENERGY_BYTES_PER_PIXEL, NETWORK_BYTES_PER_PIXEL,  # noqa: F401
                                   check_image_file, segmentation_backend,
                                   segmentation_bytes)
