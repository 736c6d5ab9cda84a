"""Former home of the stereo energy terms; they live in :mod:`graphcut.stereo` now."""

from graphcut.stereo._costs import *  # noqa: F401,F403
from graphcut.stereo._costs import __all__  # noqa: F401
