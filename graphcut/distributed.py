"""Deprecated: moved to graphcut.batch.dask. This module only re-exports those names, with a
DeprecationWarning, and will be removed."""

import warnings

warnings.warn("graphcut.distributed is deprecated: import from graphcut.batch.dask",
              DeprecationWarning, stacklevel=2)

from graphcut.batch.dask import *  # noqa: F401,F403
from graphcut.batch.dask import __all__  # noqa: F401
