"""Balancing a grid network: the same minimum cuts with less work for a max-flow solver.

Used by the expansion moves' cutters on both sides (:mod:`._host_cuts` for PyMaxflow,
:mod:`._device_cuts` for the GPU's push-relabel).
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, to_host
from graphcut.solver import GridNetwork

INT32_MAX = int(np.iinfo(np.int32).max)

# CuPy networks are balanced by one kernel (``expansion_kernels.cu``'s ``balance_network``);
# False: by the array code below on the GPU too (the state before the eighteenth session, for
# A/B runs)
DEVICE_KERNEL = True


def balanced(network: GridNetwork):
    """An equivalent network whose minimum cut is faster to find: every pair of opposite arcs
    shares their capacity about equally (a flow of ``(forward - backward) // 2`` pushed along
    the forward arc, whatever the pixels' terminal capacities), each pixel's two terminal
    capacities then net (the smaller one subtracted from both).

    Pushing a flow ``f`` along ``p -> q`` (forward ``-f``, backward ``+f``, ``p``'s source
    capacity minus ``f`` or sink capacity plus ``f``, ``q``'s the other way round) changes
    no cut's capacity; netting a pixel's terminals lowers every cut's capacity by the amount
    netted. So every cut's capacity drops by the same ``offset``: the minimum cuts, hence the
    largest minimum-cut source side, are the network's, and its maximum flow is the new
    one's plus ``offset``.

    Why it is faster: in an expansion move's network (:mod:`._expansion`, arcs only forward)
    a pixel inside a region of one label gets ``+w`` on one terminal from each edge to its
    right or below and ``-w`` from each edge to its left or above: terminal capacities
    everywhere that BK must pair up through the arcs. Shared, each edge's terms cancel (an
    edge between two pixels of one label, neither ``alpha``, puts nothing on their
    terminals), so only the data costs and the labels' borders remain: on a 1 MP image of
    three objects, PyMaxflow's max-flow of an object's move takes a third to a half of the
    time it takes on the move's own network (``bench/RESULTS.md``, fifteenth session).

    The same arithmetic on either side: the CPU's cutter (:mod:`._host_cuts`) and the GPU's
    (:mod:`._device_cuts`) both solve the balanced network.

    Parameters
    ----------
    network
        a 2-D :class:`~graphcut.solver.GridNetwork` (int32 capacities), NumPy or CuPy.

    Returns
    -------
    tuple or None
        ``(balanced network, offset)`` (offset an exact int, capacity units), or None
        when a balanced terminal capacity could leave int32 (the caller solves
        ``network``). On the GPU one kernel computes the same arrays and offset
        (:data:`DEVICE_KERNEL`); it answers None only when a terminal does leave int32.
    """
    xp = array_module(network.source)
    if xp is not np and DEVICE_KERNEL:
        from ._cuda import balanced_network
        return balanced_network(network)
    (down, right), (up, left) = network.forward, network.backward
    source, sink = network.source, network.sink
    net = source - sink
    arcs, bounds = [], [_peak(source, xp), _peak(sink, xp)]  # then one per axis
    for forward, backward, tail, head in ((down, up, np.s_[:-1], np.s_[1:]),
                                          (right, left, np.s_[:, :-1], np.s_[:, 1:])):
        shift = forward - backward  # int32: both in 0 .. INT32_MAX
        shift >>= 1                 # floor((forward - backward) / 2), may be negative
        arcs.append((forward - shift, backward + shift))
        bounds.append(2 * xp.maximum(_peak(shift, xp), -_trough(shift, xp)))
        net[tail] -= shift
        net[head] += shift
    new_source = xp.maximum(net, 0)
    xp.negative(net, out=net)
    new_sink = xp.maximum(net, 0, out=net)
    offset = sink.sum(dtype=np.int64) - new_sink.sum(dtype=np.int64)
    # one read on a GPU: the bound on a pixel's net terminal (s - t - shifts out + shifts in;
    # int32 arithmetic above is exact when it holds) and the offset
    values = to_host(xp.stack([xp.maximum(bounds[0], bounds[1]) + bounds[2] + bounds[3],
                               offset]))
    if int(values[0]) > INT32_MAX:
        return None
    (new_down, new_up), (new_right, new_left) = arcs
    return GridNetwork.from_checked(new_source, new_sink, (new_down, new_right),
                                    (new_up, new_left)), int(values[1])


def _peak(array, xp):
    """The largest value as an int64 scalar on ``array``'s device (0 when empty)."""
    return array.max().astype(np.int64) if array.size else xp.zeros((), np.int64)


def _trough(array, xp):
    """The smallest value as an int64 scalar on ``array``'s device (0 when empty)."""
    return array.min().astype(np.int64) if array.size else xp.zeros((), np.int64)


__all__ = ["balanced"]
