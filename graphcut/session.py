"""Deprecated: moved to graphcut.segmentation. This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.session is deprecated: import from graphcut.segmentation",
              DeprecationWarning, stacklevel=2)

from graphcut.segmentation import Segmenter  # noqa: F401
