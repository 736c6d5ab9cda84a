"""Deprecated: moved to graphcut.segmentation. This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.warmup is deprecated: import from graphcut.segmentation",
              DeprecationWarning, stacklevel=2)

from graphcut.segmentation import warm_up  # noqa: F401
