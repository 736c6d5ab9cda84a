"""The answer every min-cut backend returns."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class CutResult:
    """A maximum flow value and the minimum cut that certifies it.

    Attributes
    ----------
    flow
        the maximum flow value, an exact Python int (may exceed 2**31).
    source_side
        bool array, shaped like the grid for a GridNetwork, (n,) for a
        CSRNetwork: NumPy, except from the CUDA backend given a network whose arrays are
        CuPy, which answers with a CuPy array (no copy to the host). True marks vertices that cannot reach the sink in the final residual
        network: the largest minimum-cut source set. For segmentation this is the object.
        Every backend reports this same set.
    backend
        which solver ran: "cpu" (PyMaxflow, Boykov-Kolmogorov) or "cuda".
    stats
        per-backend numbers: "seconds" (dict of stage -> wall seconds, including "total"),
        and where the backend has them "iterations", "global_relabels", "device_name".

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.solver import CSRNetwork, min_cut
    >>> result = min_cut(CSRNetwork.from_arcs(3, 0, 2, [0, 1], [1, 2], [4, 3]), device="cpu")
    >>> result.flow, result.backend, result.source_side
    (3, 'cpu', array([ True,  True, False]))
    >>> result.seconds >= 0
    True
    """

    flow: int
    source_side: np.ndarray
    backend: str
    stats: dict = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        """Total wall-clock seconds of the solve, as measured by the backend."""
        return float(self.stats.get("seconds", {}).get("total", float("nan")))


class SolveCancelled(RuntimeError):
    """A solve stopped early because its caller asked (a newer request made it useless).

    The solver's state stays consistent: a later call may change capacities and solve again.
    """
