"""The seed labels, in one place for the whole library (files, models, segmentation, app).

Label form of seeds: 0 = no seed, 1 = the (first) object, 2 = background; further objects of a
multi-object seed array are 3, 4, ... up to :data:`MAX_LABEL`. Imports nothing.
"""

NONE, FOREGROUND, BACKGROUND = 0, 1, 2
# The largest object label of a multi-object seed array (255 is refused: it is a mask's).
MAX_LABEL = 254

__all__ = ["BACKGROUND", "FOREGROUND", "MAX_LABEL", "NONE"]
