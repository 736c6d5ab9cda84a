"""Deprecated: moved to graphcut.io. This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.imageio is deprecated: import from graphcut.io",
              DeprecationWarning, stacklevel=2)

from graphcut.io import *  # noqa: F401,F403
