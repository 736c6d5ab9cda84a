"""8-connected n-links for images: the diagonal pairs, GrabCut's neighbourhood (Rother et al.
2004; OpenCV's ``cv2.grabCut``), cut on the CPU with PyMaxflow.

The 4-connected grid of :mod:`._boundary` links each pixel to its right and lower neighbour.
With ``connectivity=8`` each pixel is also linked to its two lower diagonal neighbours, with
the weight ``exp(-||I_p - I_q||^2 / (2 sigma^2)) / sqrt(2)`` (the 1 / distance of Boykov and
Kolmogorov's geometric weights, which ``cv2.grabCut`` uses), and ``sigma`` is then estimated
from the colour differences of all four link directions (right, down, down-right, down-left),
as ``cv2.grabCut``'s beta is.

The minimum cut of the 8-connected grid is computed with PyMaxflow (Boykov-Kolmogorov) on the
CPU, and on the GPU by the general CSR push-relabel solver
(:class:`~graphcut.solver.CSRNetwork`): the package's grid solvers take 4-connected grids
only.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ._boundary import _sigma_from_sums, check_sigma
from ._capacities import quantize_weights, seed_pins

CONNECTIVITIES = (4, 8)
DIAGONAL_FACTOR = 1.0 / math.sqrt(2.0)


def check_connectivity(connectivity) -> int:
    """``connectivity`` as an int, or a ValueError unless it is 4 or 8."""
    if isinstance(connectivity, bool) or connectivity not in CONNECTIVITIES:
        raise ValueError(f"connectivity must be 4 or 8 (pixel neighbours linked in the "
                         f"graph), got {connectivity!r}")
    return int(connectivity)


def _diagonal_differences(values):
    """Squared colour differences of the (down-right, down-left) pairs of an (H, W, C) image:
    ``down_right[y, x]`` for (y, x) - (y+1, x+1), ``down_left[y, x]`` for (y, x+1) - (y+1, x),
    both (H-1, W-1)."""
    down_right = ((values[1:, 1:] - values[:-1, :-1]) ** 2).sum(axis=-1)
    down_left = ((values[1:, :-1] - values[:-1, 1:]) ** 2).sum(axis=-1)
    return down_right, down_left


def estimate_sigma8(values) -> float:
    """sigma from the colour differences of all 8-neighbour pairs of an (H, W, C) float image
    (values scaled as :func:`graphcut._arrays.image_as_float` does): the root mean square of
    the right, down, down-right and down-left differences (``cv2.grabCut``'s
    ``beta = 1 / (2 sigma^2)``). A constant image gives 1.0.

    Parameters
    ----------
    values : numpy.ndarray
        float (H, W, C).

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> estimate_sigma8(np.zeros((3, 3, 1)))
    1.0
    >>> estimate_sigma8(np.array([[[0.0], [1.0]], [[0.0], [1.0]]]))  # 0, 1, 1, 1, 1, 1: 4 / 6
    0.816496580927726
    """
    values = np.asarray(values, dtype=np.float64)
    right = ((values[:, 1:] - values[:, :-1]) ** 2).sum(axis=-1)
    down = ((values[1:] - values[:-1]) ** 2).sum(axis=-1)
    arrays = (right, down, *_diagonal_differences(values))
    return _sigma_from_sums([float(a.sum()) for a in arrays], sum(a.size for a in arrays))


def diagonal_weights(values, sigma):
    """Boundary weights of the diagonal pairs of an (H, W, C) float image:
    ``exp(-||I_p - I_q||^2 / (2 sigma^2)) / sqrt(2)``.

    Parameters
    ----------
    values : numpy.ndarray
        float (H, W, C), scaled as for :func:`graphcut.segmentation.nlink_weights`.
    sigma : float
        as for :func:`graphcut.segmentation.nlink_weights` (> 0).

    Returns
    -------
    tuple of numpy.ndarray
        ``(down_right, down_left)``, float64 (H-1, W-1) in (0, 1/sqrt(2)]:
        ``down_right[y, x]`` weights the pair (y, x) - (y+1, x+1), ``down_left[y, x]`` the
        pair (y, x+1) - (y+1, x).

    Examples
    --------
    >>> import numpy as np
    >>> down_right, down_left = diagonal_weights(np.zeros((2, 2, 1)), 1.0)
    >>> down_right
    array([[0.70710678]])
    """
    exponent = -1.0 / (2.0 * check_sigma(sigma) ** 2)
    return tuple(np.exp(d * exponent) * DIAGONAL_FACTOR
                 for d in _diagonal_differences(np.asarray(values, dtype=np.float64)))


def diagonal_capacities(weights, lam, *, scale):
    """The :func:`diagonal_weights` ``weights`` times ``lam``, quantised as the straight
    n-links are (int32, ``rint(scale * lam * w)``)."""
    return tuple(quantize_weights(w, lam, scale=scale, what="diagonal n-link capacities")
                 for w in weights)


def eight_connected_sigma(values, options) -> float:
    """Check that 8-connected n-links apply to the (H, W, C) host ``values`` with the
    resolved ``options`` (an image, no spacing); returns ``options["sigma"]``, or
    :func:`estimate_sigma8` when it is None."""
    if np.ndim(values) != 3 or options["spacing"]:
        raise ValueError("connectivity=8 is for images: volumes (and spacing) use "
                         "6-connected grids")
    return estimate_sigma8(values) if options["sigma"] is None else options["sigma"]


def _incident(diagonals, shape):
    """Sum over each pixel of its diagonal n-link capacities (int64 (H, W))."""
    down_right, down_left = diagonals
    total = np.zeros(shape, dtype=np.int64)
    total[:-1, :-1] += down_right
    total[1:, 1:] += down_right
    total[:-1, 1:] += down_left
    total[1:, :-1] += down_left
    return total


def _pinned_terminals(network, diagonals):
    """Source and sink capacities with the hard constraints raised above every incident
    n-link, diagonals included: a pinned pixel has ``(K_p, 0)`` or ``(0, K_p)`` with the
    4-connected grid's K_p (:func:`seed_pins`); it gets the sum of its diagonal capacities
    on top."""
    source = np.asarray(network.source, dtype=np.int64)
    sink = np.asarray(network.sink, dtype=np.int64)
    pin = seed_pins((network.right, network.down)).astype(np.int64)
    extra = _incident(diagonals, source.shape)
    source = np.where((source == pin) & (sink == 0), source + extra, source)
    sink = np.where((sink == pin) & (source == 0), sink + extra, sink)
    return source, sink


def _structure(row, column):
    structure = np.zeros((3, 3), dtype=np.int32)
    structure[row, column] = 1
    return structure


def eight_connected_csr(network, diagonals):
    """The 8-connected grid as a general :class:`~graphcut.solver.CSRNetwork` (for the GPU's
    general solver): pixel (y, x) is vertex ``y * W + x``, the source ``H * W``, the sink
    ``H * W + 1``; every n-link gives two arcs, one each way, with its capacity; pinned
    pixels as in :func:`cut_eight`. Built on the host.

    Parameters
    ----------
    network : graphcut.solver.GridNetwork
        as for :func:`cut_eight` (NumPy or CuPy arrays).
    diagonals : tuple of numpy.ndarray
        as for :func:`cut_eight`.

    Returns
    -------
    graphcut.solver.CSRNetwork

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.solver import GridNetwork
    >>> network = GridNetwork(np.array([[5, 0]], np.int32), np.array([[0, 5]], np.int32),
    ...                       np.array([[2]], np.int32), np.zeros((0, 2), np.int32))
    >>> csr = eight_connected_csr(network, (np.zeros((0, 1), np.int32),) * 2)
    >>> csr.num_vertices, csr.num_arcs            # 2 pixels + s + t; s->0, 1->t, 0<->1
    (4, 4)
    """
    from graphcut.solver import CSRNetwork

    network = _on_host(network)
    source, sink = _pinned_terminals(network, diagonals)
    h, w = source.shape
    index = np.arange(h * w, dtype=np.int64).reshape(h, w)
    s, t = h * w, h * w + 1
    pixels = index.ravel()
    tails = [pixels, np.full(h * w, s)]             # p -> t (sink), s -> p (source)
    heads = [np.full(h * w, t), pixels]
    capacities = [sink.ravel(), source.ravel()]
    down_right, down_left = diagonals
    pairs = ((np.asarray(network.right), index[:, :-1], index[:, 1:]),
             (np.asarray(network.down), index[:-1, :], index[1:, :]),
             (np.asarray(down_right), index[:-1, :-1], index[1:, 1:]),
             (np.asarray(down_left), index[:-1, 1:], index[1:, :-1]))
    for caps, p, q in pairs:
        tails += [p.ravel(), q.ravel()]
        heads += [q.ravel(), p.ravel()]
        capacities += [caps.ravel(), caps.ravel()]
    return CSRNetwork.from_arcs(h * w + 2, s, t, np.concatenate(tails),
                                np.concatenate(heads),
                                np.concatenate(capacities).astype(np.int64))


def _on_host(network):
    from graphcut._arrays import to_host
    from graphcut.solver import GridNetwork
    return GridNetwork(*(to_host(a) for a in (network.source, network.sink, network.right,
                                              network.down)))


def cut_eight(network, diagonals, *, device="cpu"):
    """The minimum cut of an image's :class:`~graphcut.solver.GridNetwork` (4-connected,
    source side = object) with the diagonal n-links ``diagonals`` added, by PyMaxflow.

    Parameters
    ----------
    network : graphcut.solver.GridNetwork
        source / sink capacities and the symmetric straight n-links (``right``, ``down``),
        NumPy int32, (H, W) image grid; pixels pinned by :func:`terminal_capacities`.
    diagonals : tuple of numpy.ndarray
        ``(down_right, down_left)`` int32 (H-1, W-1) symmetric capacities
        (:func:`diagonal_capacities`).

    device : {"cpu", "cuda"}
        "cpu": PyMaxflow's grid graph; "cuda": the GPU's general push-relabel solver on
        :func:`eight_connected_csr` (built on the host).

    Returns
    -------
    graphcut.solver.CutResult
        ``flow`` the minimum cut's capacity (diagonals included), ``source_side`` bool
        (H, W) NumPy, the backend, ``stats["seconds"]["total"]``.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.solver import GridNetwork
    >>> network = GridNetwork(np.array([[5, 0], [0, 0]], np.int32),
    ...                       np.array([[0, 0], [0, 5]], np.int32),
    ...                       np.zeros((2, 1), np.int32), np.zeros((1, 2), np.int32))
    >>> diagonals = (np.array([[2]], np.int32), np.array([[3]], np.int32))
    >>> cut_eight(network, diagonals).flow     # the down-right pair carries 2
    2
    """
    from graphcut.solver import CutResult

    started = time.perf_counter()
    if device != "cpu":
        from graphcut.solver import min_cut
        h, w = network.source.shape
        result = min_cut(eight_connected_csr(network, diagonals), device=device)
        side = np.asarray(result.source_side)[:h * w].reshape(h, w)
        return CutResult(int(result.flow), side, result.backend,
                         {"seconds": {"total": time.perf_counter() - started},
                          "connectivity": 8})
    import maxflow

    network = _on_host(network)
    source, sink = _pinned_terminals(network, diagonals)
    h, w = source.shape
    graph = maxflow.Graph[int]()
    nodes = graph.add_grid_nodes((h, w))
    down_right, down_left = diagonals
    links = ((np.asarray(network.right), np.s_[:, :-1], (1, 2)),
             (np.asarray(network.down), np.s_[:-1, :], (2, 1)),
             (down_right, np.s_[:-1, :-1], (2, 2)),
             (down_left, np.s_[:-1, 1:], (2, 0)))
    for capacities, where, offset in links:
        if capacities.size == 0:
            continue
        full = np.zeros((h, w), dtype=np.int64)
        full[where] = capacities
        graph.add_grid_edges(nodes, weights=full, structure=_structure(*offset),
                             symmetric=True)
    graph.add_grid_tedges(nodes, source, sink)
    flow = int(graph.maxflow())
    source_side = ~graph.get_grid_segments(nodes)
    return CutResult(flow, source_side, "cpu",
                     {"seconds": {"total": time.perf_counter() - started},
                      "connectivity": 8})


def diagonal_cut_capacity(diagonals, source_side) -> int:
    """Capacity of the diagonal n-links a cut with this bool source side crosses (each
    symmetric link counted once, from the source side to the sink side)."""
    s = np.asarray(source_side, dtype=bool)
    down_right, down_left = diagonals
    crossed_dr = s[:-1, :-1] != s[1:, 1:]
    crossed_dl = s[:-1, 1:] != s[1:, :-1]
    return int(np.where(crossed_dr, down_right, 0).sum(dtype=np.int64)
               + np.where(crossed_dl, down_left, 0).sum(dtype=np.int64))


__all__ = ["CONNECTIVITIES", "check_connectivity", "cut_eight", "diagonal_capacities",
           "diagonal_cut_capacity", "diagonal_weights", "eight_connected_csr",
           "eight_connected_sigma", "estimate_sigma8"]
