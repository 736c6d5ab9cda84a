"""CPU minimum cuts of the expansion moves on one PyMaxflow graph, emptied and filled again
for every move (one image-sized graph per run instead of one per move: no fresh pages to
fault in, about a third of a new graph's setup, see :func:`graphcut.solver.cpu.grid_graph`).

The cut is the one :func:`graphcut.solver.min_cut` gives on the CPU: the source side is the set
of pixels that cannot reach the sink in the residual network, the same for every maximum
flow, so a reused graph and a fresh one give the same flow and the same cut.

Pixels whose side of that cut is known before solving are left out of the graph
(:func:`fixed_pixels`): in a move for ``alpha`` every pixel labelled ``alpha`` already has no
capacity at all, and a pixel whose data cost of switching exceeds everything its neighbours
could save stays too. When most pixels are fixed (the background's moves, where the
background already covers most of the image) the move is solved on a graph of the free pixels
only (:func:`reduced_cut`), with the same flow and the same source side.

Either graph is filled *balanced* (:func:`balanced`): each pair of opposite arcs shares its
capacity about equally and the terminal capacities are adjusted so that every cut costs the
same less one offset. The move's network puts ``+w`` and ``-w`` on the terminals of every
edge's two pixels (all its capacity is on the forward arc); balanced, an edge inside a region
of one label puts nothing there, and BK has far fewer terminal capacities to pair up (an
object's move about 2x faster at 1 MP). Same minimum cuts, same flow (plus the offset).
A balanced whole-grid move is first tried on a region around its pixels with a sink capacity
(:func:`._regions.unchanged_cut`): when that flow proves the move changes no pixel (the
second cycle's moves), the whole grid is not cut.
"""

from __future__ import annotations

import time

import maxflow
import numpy as np

from graphcut.solver import CutResult, GridNetwork
from graphcut.solver.cpu import cut_grid_graph, grid_bytes
from graphcut.solver.memory import require_host_memory

from ._balance import balanced
from ._regions import region_arcs, unchanged_cut

# A move with at most this share of free pixels is solved on the graph of its free pixels.
REDUCE_AT_MOST = 0.5
# A label whose move was not reduced is checked again after this many of its moves (the
# cutter is kept from stroke to stroke; an object's moves are rarely reducible, and the check
# costs about a tenth of a whole-grid move).
RECHECK_AFTER = 6
# Whole-grid cuts are solved on the balanced network (:func:`balanced`), and the reduced graph's
# arcs are balanced the same way; False: as given (the state before the fifteenth session, for
# A/B runs).
BALANCE = True
BALANCE_REDUCED = True
# A balanced whole-grid move is first tried on a region: when the region's flow proves that
# the move changes no pixel (:func:`._regions.unchanged_cut`), the whole grid is not cut.
CERTIFY = True
INT32_MAX = int(np.iinfo(np.int32).max)


class HostMoveCuts:
    """Minimum cuts of expansion-move networks on the CPU, on one PyMaxflow graph.

    Call it as ``cuts(network, label=None)`` with a 2-D :class:`~graphcut.solver.GridNetwork`
    (NumPy or CuPy; a new shape allocates a new graph). It returns the
    :class:`~graphcut.solver.CutResult` that ``min_cut(network, device="cpu")`` returns (the
    same flow and source side), solved on the graph of the free pixels only when most pixels'
    sides are known beforehand (``stats["free_pixels"]`` then says how many were free), or
    proved to change nothing on a region (``stats["certified_pixels"]``: its size).
    ``label`` (optional) names the move's label: a label whose last move had too many free
    pixels to reduce is not checked again for ``RECHECK_AFTER`` of its moves (the check costs
    a few passes over the image; the cut is the same either way).

    Keep one per grid to allocate its graph once (``alpha_expansion`` takes it as ``cuts``;
    ``graphcut.Segmenter`` keeps one for all strokes).

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.labeling import HostMoveCuts, PairWeights, expansion_network
    >>> costs = np.array([[[0, 4, 9]], [[9, 5, 0]]], np.int32)
    >>> weights = PairWeights(np.array([[5, 5]]), np.zeros((0, 3), int))
    >>> network, constant = expansion_network(costs, weights, np.zeros((1, 3), np.int32), 1)
    >>> cut = HostMoveCuts()(network, label=1)
    >>> constant + cut.flow, cut.source_side.tolist()   # energy after the move; kept pixels
    (9, [[True, True, False]])
    """

    def __init__(self):
        self._graph = None
        self._shape = None
        self._unreduced = {}  # label -> moves since its last check found too many free pixels

    def __call__(self, network: GridNetwork, label=None) -> CutResult:
        network = network.to_numpy()
        if network.shape != self._shape:
            require_host_memory(grid_bytes(network.shape),
                                f"solving a {network.shape} expansion move on the CPU")
            self._graph, self._shape = None, network.shape
        started = time.perf_counter()
        skipped = self._unreduced.get(label)
        if skipped is not None and label is not None and skipped < RECHECK_AFTER:
            self._unreduced[label] = skipped + 1
            return self._whole(network)
        fixed_source, fixed_sink = fixed_pixels(network)
        free = network.source.size - int(np.count_nonzero(fixed_source)) \
            - int(np.count_nonzero(fixed_sink))
        self._unreduced.pop(label, None)
        if free > REDUCE_AT_MOST * network.source.size:
            self._unreduced[label] = 0
        else:
            if self._graph is None:  # sized for the whole grid: later moves may need it
                self._graph = _whole_graph(network.shape)
            result = reduced_cut(network, fixed_source, fixed_sink, self._graph, started)
            if result is not None:
                return result
        return self._whole(network)

    def _whole(self, network):
        """The whole grid's cut, solved on :func:`balanced` ``network`` (the same cuts, less
        work for BK) when its capacities fit in int32, else on ``network`` itself."""
        started = time.perf_counter()
        even = balanced(network) if BALANCE else None
        if even is None:
            result, self._graph = cut_grid_graph(network, graph=self._graph)
            return result
        balancing = time.perf_counter() - started
        if CERTIFY:  # a move that changes nothing, proved on a region (the second cycle's)
            if self._graph is None:
                self._graph = _whole_graph(network.shape)
            result = unchanged_cut(even[0], self._graph, started)
            if result is not None:
                return CutResult(result.flow + even[1], result.source_side, "cpu",
                                 dict(result.stats, balanced=True))
        result, self._graph = cut_grid_graph(even[0], graph=self._graph)
        seconds = dict(result.stats["seconds"])  # the balancing counts as building the graph
        seconds["build"] += balancing
        seconds["total"] += balancing
        return CutResult(result.flow + even[1], result.source_side, "cpu",
                         dict(result.stats, seconds=seconds, balanced=True))


def _whole_graph(shape):
    """An empty PyMaxflow graph with room for the whole grid of ``shape``."""
    h, w = shape
    return maxflow.Graph[int](h * w, h * (w - 1) + (h - 1) * w)


def _balance_arcs(source_caps, sink_caps, arcs):
    """:func:`balanced` for a graph of nodes (int64 terminal capacities) and arc lists, each
    node at most once the tail and once the head in one list; returns the new capacities,
    arcs and the offset (what every cut's capacity dropped by)."""
    net = source_caps - sink_caps
    shared = []
    for tails, heads, forward, backward in arcs:
        shift = forward.astype(np.int64)
        shift -= backward
        shift >>= 1
        net[tails] -= shift   # a node is one tail and one head at most: no repeated index
        net[heads] += shift
        shared.append((tails, heads, forward - shift, backward + shift))
    new_sink = np.maximum(-net, 0)
    offset = int(sink_caps.sum()) - int(new_sink.sum())
    return np.maximum(net, 0), new_sink, shared, offset


def _neighbour_sums(network: GridNetwork):
    """Per pixel (int64): the capacity of its arcs to its neighbours and of theirs to it."""
    (down, right), (up, left) = network.forward, network.backward
    out = np.zeros(network.shape, dtype=np.int64)
    into = np.zeros(network.shape, dtype=np.int64)
    out[:, :-1] += right   # (y, x) -> (y, x + 1)
    into[:, 1:] += right
    out[:-1] += down       # (y, x) -> (y + 1, x)
    into[1:] += down
    if left.any():         # (expansion moves have no backward arcs)
        out[:, 1:] += left     # (y, x + 1) -> (y, x)
        into[:, :-1] += left
    if up.any():
        out[1:] += up          # (y + 1, x) -> (y, x)
        into[:-1] += up
    return out, into


def fixed_pixels(network: GridNetwork):
    """Pixels on the source side, and pixels on the sink side, of the cut whose source side is
    the largest (the one :func:`graphcut.solver.min_cut` returns), known without solving.

    For a minimum cut ``S`` without pixel ``p``, adding ``p`` changes the capacity by at most
    ``t_p - s_p + (capacity of p's arcs to its neighbours)``; when that is ``<= 0`` the
    larger set is a minimum cut too, so the largest one holds ``p``. Likewise removing ``p``
    from a minimum cut changes it by at most ``s_p - t_p + (capacity of the arcs into p)``;
    when that is ``< 0`` no minimum cut holds ``p``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(fixed_source, fixed_sink)``, two disjoint bool arrays of the grid's shape.
    """
    out, into = _neighbour_sums(network)
    slack = network.source.astype(np.int64)
    slack -= network.sink
    fixed_source = slack >= out
    np.negative(slack, out=slack)
    fixed_sink = slack > into
    return fixed_source, fixed_sink


def _free_terminals(network: GridNetwork, fs, ft, free):
    """The terminal capacities (int64) of the ``free`` pixels (in flat order), with the arcs
    from held source pixels (``fs``) added to their source capacity and the arcs to held sink
    pixels (``ft``) to their sink capacity. Masked in-place sums, no temporaries; backward arcs
    only when there are any (an expansion move has none)."""
    (down, right), (up, left) = network.forward, network.backward
    gain_source = network.source.astype(np.int64)
    gain_sink = network.sink.astype(np.int64)
    terms = [(gain_source, np.s_[:, 1:], right, fs, np.s_[:, :-1]),
             (gain_source, np.s_[1:], down, fs, np.s_[:-1]),
             (gain_sink, np.s_[:, :-1], right, ft, np.s_[:, 1:]),
             (gain_sink, np.s_[:-1], down, ft, np.s_[1:])]
    if left.any() or up.any():
        terms += [(gain_source, np.s_[:, :-1], left, fs, np.s_[:, 1:]),
                  (gain_source, np.s_[:-1], up, fs, np.s_[1:]),
                  (gain_sink, np.s_[:, 1:], left, ft, np.s_[:, :-1]),
                  (gain_sink, np.s_[1:], up, ft, np.s_[:-1])]
    for gain, part, arcs, held, neighbour in terms:  # gain[part] += arcs where held[nb]
        np.add(gain[part], arcs, out=gain[part], where=held[neighbour])
    return gain_source[free], gain_sink[free]


def reduced_cut(network: GridNetwork, fixed_source, fixed_sink, graph, started=None):
    """The minimum cut of ``network`` (2-D, NumPy) with the pixels of ``fixed_source`` and
    ``fixed_sink`` (:func:`fixed_pixels`) held on their sides, solved on ``graph`` (a PyMaxflow
    ``Graph[int]``, emptied first) with one node per free pixel.

    An arc from a held source pixel to a free one acts as a source capacity of the free
    pixel, an arc from a free pixel to a held sink pixel as its sink capacity; arcs between
    held pixels and the held pixels' terminal capacities add a constant to the flow.

    Returns
    -------
    CutResult or None
        The flow and the largest source side of ``network`` itself (the same as
        :func:`graphcut.solver.min_cut`'s), or None when a free pixel's terminal capacity
        would leave int32 (the caller then solves the whole grid).
    """
    started = time.perf_counter() if started is None else started
    (down, right), (up, left) = network.forward, network.backward
    source, sink = network.source, network.sink
    fs, ft = fixed_source, fixed_sink
    free = ~(fs | ft)  # their terminal capacities, then their nodes and arcs by flat index
    source_caps, sink_caps = _free_terminals(network, fs, ft, free)
    count = int(np.count_nonzero(free))
    constant = (int(source.sum(where=ft, dtype=np.int64))
                + int(sink.sum(where=fs, dtype=np.int64))
                + int(right.sum(where=fs[:, :-1] & ft[:, 1:], dtype=np.int64))
                + int(left.sum(where=fs[:, 1:] & ft[:, :-1], dtype=np.int64))
                + int(down.sum(where=fs[:-1] & ft[1:], dtype=np.int64))
                + int(up.sum(where=fs[1:] & ft[:-1], dtype=np.int64)))
    where, arcs = region_arcs(network, free)
    if BALANCE_REDUCED and arcs:
        source_caps, sink_caps, arcs, netted = _balance_arcs(source_caps, sink_caps, arcs)
        constant += netted
    if count and max(int(source_caps.max()), int(sink_caps.max())) > INT32_MAX:
        return None
    graph.reset()
    graph.add_nodes(count)
    for tails, heads, forward, backward in arcs:
        graph.add_edges(tails, heads, forward, backward)
    nodes = np.arange(count, dtype=np.int64)
    if count:
        graph.add_grid_tedges(nodes, source_caps, sink_caps)
    built = time.perf_counter()
    flow = constant + (int(graph.maxflow()) if count else 0)
    solved = time.perf_counter()
    source_side = fs.copy()
    if count:
        source_side.reshape(-1)[where] = ~graph.get_grid_segments(nodes)
    done = time.perf_counter()
    stats = {"seconds": {"build": built - started, "solve": solved - built, "cut": done - solved,
                         "total": done - started},
             "device_name": "CPU (PyMaxflow, Boykov-Kolmogorov)", "free_pixels": count}
    return CutResult(flow, source_side, "cpu", stats)
