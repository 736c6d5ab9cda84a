"""Deprecated: moved to graphcut.stereo.io. This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.stereo_io is deprecated: import from graphcut.stereo.io",
              DeprecationWarning, stacklevel=2)

from graphcut.stereo.io import *  # noqa: F401,F403
from graphcut.stereo.io import __all__  # noqa: F401
