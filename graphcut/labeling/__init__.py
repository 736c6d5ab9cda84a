"""Multi-label energies on the pixel grid minimised with graph cuts (alpha-expansion).

Used by :mod:`graphcut.stereo` (disparities) and by anything that labels pixels with one of
several labels given per-pixel costs and smoothness weights.
"""

from ._expansion import ExpansionResult, Move, MoveCallback, alpha_expansion
from ._host_cuts import HostMoveCuts
from ._moves import PairWeights, expansion_network, labeling_energy

__all__ = ["ExpansionResult", "HostMoveCuts", "Move", "MoveCallback", "PairWeights",
           "alpha_expansion", "expansion_network", "labeling_energy"]
