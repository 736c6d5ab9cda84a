"""Deprecated: moved to graphcut.io. This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.seeds is deprecated: import from graphcut.io",
              DeprecationWarning, stacklevel=2)

from graphcut.io import (BACKGROUND, FOREGROUND, MAX_LABEL, NONE,  # noqa: F401
                         ImageReadError, check_seeds, image_shape, object_labels,
                         read_seeds, strokes_to_labels, write_seeds)
