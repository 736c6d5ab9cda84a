"""graphcut: image segmentation and max-flow/min-cut with a GPU push-relabel core.

The public names of the subpackages most programs need are importable from here: segmentation
(:func:`segment`, :class:`Segmenter`), image, seed and volume files, the energy's parts, and
the solver's networks and :func:`min_cut`.

Examples
--------
>>> import numpy as np
>>> import graphcut
>>> image = np.zeros((5, 6), np.uint8)
>>> image[1:4, 1:4] = 200                  # a bright square on a dark ground
>>> seeds = np.zeros((5, 6), np.uint8)
>>> seeds[2, 2] = graphcut.FOREGROUND      # 1: object
>>> seeds[0, 5] = graphcut.BACKGROUND      # 2: background
>>> graphcut.segment(image, seeds, device="cpu").astype(int)
array([[0, 0, 0, 0, 0, 0],
       [0, 1, 1, 1, 0, 0],
       [0, 1, 1, 1, 0, 0],
       [0, 1, 1, 1, 0, 0],
       [0, 0, 0, 0, 0, 0]])
"""

from .energy import (DEFAULT_LAM, DEFAULT_SCALE, build_network, estimate_sigma, nlink_weights,
                     regional_costs, terminal_capacities)
from .imageio import ImageReadError, ImageTooLargeError, read_image, write_mask, write_overlay
from .seeds import BACKGROUND, FOREGROUND, NONE, check_seeds, read_seeds, write_seeds
from .segmentation import segment
from .session import Segmenter
from .solver import CSRNetwork, CutResult, GridNetwork, min_cut
from .volumeio import (VolumeReadError, read_volume, read_volume_seeds, write_volume_mask,
                       write_volume_seeds)

__all__ = [
    "BACKGROUND", "CSRNetwork", "CutResult", "DEFAULT_LAM", "DEFAULT_SCALE", "FOREGROUND",
    "GridNetwork", "ImageReadError", "ImageTooLargeError", "NONE", "Segmenter", "build_network",
    "check_seeds", "estimate_sigma",
    "min_cut", "nlink_weights", "read_image", "read_seeds", "regional_costs", "segment",
    "terminal_capacities", "write_mask", "write_overlay", "write_seeds",
    "VolumeReadError", "read_volume", "read_volume_seeds", "write_volume_mask",
    "write_volume_seeds",
]
