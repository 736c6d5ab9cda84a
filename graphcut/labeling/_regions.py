"""Graphs on a region of a grid's pixels, for :class:`._host_cuts.HostMoveCuts`: the nodes and
arcs of the region (:func:`region_arcs`, shared with the reduced cut), and a certificate that a
move changes no pixel found on a region only (:func:`unchanged_cut`).

Why the certificate is exact. Take a network whose pixels have at most one non-zero terminal
capacity each (a :func:`._host_cuts.balanced` one). The cut with every pixel on the source
side (the move keeps every label) costs the sum ``total`` of the sink capacities, so the
maximum flow is at most ``total``. The pixels of a region, with their own terminal capacities
and the arcs between them only, form a smaller network whose flows are flows of the whole
one. If its maximum flow reaches ``total``, so does the whole network's: that cut is a minimum
cut, and since its source side is every pixel it is the largest minimum-cut source side, the
cut :func:`graphcut.solver.min_cut` returns. The region is the pixels with a sink capacity
(every one must be in it) and those within a few steps of them, which supply their flow. When
the region's flow falls short nothing is concluded (the caller cuts the whole grid).
"""

from __future__ import annotations

import time

import numpy as np

from graphcut.solver import CutResult, GridNetwork

# The certificate is tried when at most this share of the pixels have a sink capacity (the
# moves that confirm convergence: ~1 %; the first cycle's, which change pixels: 4-8 %) ...
TRY_AT_MOST = 0.02
# ... on the pixels within this many 4-connected steps of them.
REACH = 3


def region_arcs(network: GridNetwork, region):
    """The arcs between the pixels of ``region`` (bool (H, W)), nodes numbered in flat order.

    Returns
    -------
    tuple
        ``(where, arcs)``: the region's flat pixel indices (int64; node ``i`` is pixel
        ``where[i]``) and a list of ``(tail nodes, head nodes, forward capacities, backward
        capacities)``, one entry per axis that has arcs (each node at most once a tail and
        once a head in an entry).
    """
    (down, right), (up, left) = network.forward, network.backward
    h, w = network.shape
    where = np.flatnonzero(region)
    inside = np.append(region.reshape(-1), np.zeros(w, dtype=bool))  # padded: none beyond
    ids = np.empty(h * w + w, dtype=np.int64)
    ids[where] = np.arange(where.size, dtype=np.int64)
    rows = where // w
    arcs = []
    across = where[(where - rows * w < w - 1) & inside[where + 1]]  # p and p + 1 inside
    if across.size:  # p + 1 is the next pixel inside: its node is p's + 1
        tails = ids[across]
        flat = across - across // w                     # (y, x) in the (H, W - 1) arrays
        arcs.append((tails, tails + 1, right.reshape(-1)[flat], left.reshape(-1)[flat]))
    below = where[inside[where + w] & (rows < h - 1)]    # p and p + W inside
    if below.size:
        arcs.append((ids[below], ids[below + w], down.reshape(-1)[below],
                     up.reshape(-1)[below]))
    return where, arcs


def _near(mask, steps: int):
    """``mask`` grown by ``steps`` 4-connected steps."""
    grown = mask.copy()
    for _ in range(steps):
        before = grown.copy()
        grown[1:] |= before[:-1]
        grown[:-1] |= before[1:]
        grown[:, 1:] |= before[:, :-1]
        grown[:, :-1] |= before[:, 1:]
    return grown


def unchanged_cut(network: GridNetwork, graph, started=None):
    """The minimum cut of ``network`` when it keeps every pixel on the source side and a flow
    on a region proves it (see the module docstring), else None.

    Parameters
    ----------
    network
        a 2-D host :class:`~graphcut.solver.GridNetwork` with at most one non-zero terminal
        capacity per pixel (:func:`._host_cuts.balanced`'s).
    graph
        a PyMaxflow ``Graph[int]`` to empty and use.
    started
        ``time.perf_counter()`` when the caller's work on the move began (for the stats).

    Returns
    -------
    CutResult or None
        Flow ``total`` (the sum of the sink capacities, exact int) and every pixel on the
        source side, or None when the certificate was not tried (more than
        ``TRY_AT_MOST`` of the pixels have a sink capacity) or the region's flow fell short.
    """
    started = time.perf_counter() if started is None else started
    sinks = network.sink > 0
    if np.count_nonzero(sinks) > TRY_AT_MOST * sinks.size:
        return None
    total = int(network.sink.sum(dtype=np.int64))
    region = _near(sinks, REACH)
    where, arcs = region_arcs(network, region)
    graph.reset()
    graph.add_nodes(int(where.size))
    for tails, heads, forward, backward in arcs:
        graph.add_edges(tails, heads, forward, backward)
    nodes = np.arange(where.size, dtype=np.int64)
    if where.size:
        graph.add_grid_tedges(nodes, network.source.reshape(-1)[where],
                              network.sink.reshape(-1)[where])
    built = time.perf_counter()
    flow = int(graph.maxflow()) if where.size else 0
    solved = time.perf_counter()
    if flow != total:
        return None
    seconds = {"build": built - started, "solve": solved - built, "cut": 0.0,
               "total": solved - started}
    return CutResult(total, np.ones(network.shape, dtype=bool), "cpu",
                     {"seconds": seconds, "device_name": "CPU (PyMaxflow, Boykov-Kolmogorov)",
                      "certified_pixels": int(where.size)})
