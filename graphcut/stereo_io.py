"""Former home of the stereo file helpers; they live in :mod:`graphcut.stereo.io` now."""

from graphcut.stereo.io import *  # noqa: F401,F403
from graphcut.stereo.io import __all__  # noqa: F401
