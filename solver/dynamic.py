"""Kohli-Torr updates of a kept preflow, for dynamic (incremental) re-solves: new terminal
capacities (a stroke) and new n-link capacities (another smoothness weight lambda).

Array-module agnostic (NumPy or CuPy). The GPU grid solver does the same per pixel in one kernel
each (``solver/cuda/grid_state.cu``: ``reparameterize_terminals``, ``change_nlinks``), and the
CI tests check these functions on NumPy states against scipy and PyMaxflow, and the kernels
against these functions bit for bit.

Conventions (per pixel, int64 arrays of one shape):
    excess           flow into the pixel minus flow out of it (>= 0 in a preflow);
    to_sink          residual capacity of the pixel's arc to the sink t;
    source_capacity  capacity of s -> pixel in force, an arc that is always saturated;
    sink_capacity    capacity of pixel -> t in force, so its flow is sink_capacity - to_sink.
The terminal update does not need the n-link flows: a pixel's net n-link inflow is recovered
from the above. The n-link update reads them from the residuals of the GPU state's layout:
``residual[k]`` (the grid's shape) is the residual of each pixel's arc in direction
``k = 2 * (ndim - 1 - axis) + backward`` (RIGHT, LEFT, DOWN, UP for an image; then z+1, z-1 for
a volume), zero where the arc would leave the grid. The n-link capacities are given as
:class:`~graphcut.solver.GridNetwork` holds them: ``forward[axis]`` (p -> p + e_axis) and
``backward[axis]`` (p + e_axis -> p), each one shorter than the grid along ``axis``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .arrays import array_module
from .networks import axis_slice

INT32_MAX = 2**31 - 1


@dataclass
class TerminalUpdate:
    """The preflow state after new terminal capacities (see :func:`reparameterize_terminals`)."""

    excess: object            # int64, >= 0
    to_sink: object           # int64, 0 .. INT32_MAX
    source_capacity: object   # int64, the reparameterised s -> pixel capacities
    sink_capacity: object     # int64, the reparameterised pixel -> t capacities
    reparameterization: int   # sum over pixels of the amount added to both terminal arcs


def reparameterize_terminals(excess, to_sink, source_capacity, sink_capacity, new_source,
                             new_sink) -> TerminalUpdate | None:
    """Apply new terminal capacities to a preflow, keeping its n-link flows.

    Where the new capacities cannot hold a pixel's current flows, both of its terminal
    capacities are raised by the same amount ``delta >= 0`` (Kohli & Torr's reparameterisation):
    every s-t cut then costs ``delta`` more, so the minimum cuts are unchanged and the true flow
    value is the reparameterised one minus the sum of the deltas. The source arc stays saturated
    and the sink arc keeps as much of its flow as its new capacity allows.

    Returns None when the new residual to the sink would not fit in int32 (possible only when a
    pixel sends more than ``2**31`` net flow into its neighbours); the caller must then restart
    from the capacities in force (zero n-link flow), which is always representable.
    """
    xp = array_module(excess)
    source = xp.asarray(new_source).astype(xp.int64)
    sink = xp.asarray(new_sink).astype(xp.int64)
    to_sink_flow = sink_capacity - to_sink
    inflow = excess - source_capacity + to_sink_flow  # net flow in from the n-links
    delta = xp.maximum(0, to_sink_flow - inflow - source)
    source = source + delta
    sink = sink + delta
    kept_flow = xp.minimum(to_sink_flow, sink)
    residual = sink - kept_flow
    if int(residual.max()) > INT32_MAX:
        return None
    reparameterization = int(delta.sum(dtype=xp.int64))
    return TerminalUpdate(source - kept_flow + inflow, residual, source, sink, reparameterization)


def fresh_terminals(new_source, new_sink) -> TerminalUpdate:
    """The state of zero n-link flow: min(source, sink) of each pixel goes straight to t."""
    xp = array_module(new_source)
    source = xp.asarray(new_source).astype(xp.int64)
    sink = xp.asarray(new_sink).astype(xp.int64)
    through = xp.minimum(source, sink)
    return TerminalUpdate(source - through, sink - through, source, sink, 0)


@dataclass
class NlinkUpdate(TerminalUpdate):
    """The preflow state after new n-link capacities (see :func:`reparameterize_nlinks`)."""

    residual: object = None   # (2 * ndim, *shape), the dtype of the residuals given


def _direction(ndim: int, axis: int, backward: bool) -> int:
    return 2 * (ndim - 1 - axis) + int(backward)


def _int64(xp, array):
    return xp.asarray(array).astype(xp.int64)


def reparameterize_nlinks(residual, excess, to_sink, source_capacity, sink_capacity,
                          reparameterization: int, old_links, new_links) -> NlinkUpdate | None:
    """Apply new n-link capacities to a preflow, keeping as much of its n-link flow as they
    allow (Kohli & Torr's dynamic graph cuts, for a change of the smoothness weight).

    For each pair of opposite arcs p -> q = p + e_axis the net flow ``f = c(p, q) - r(p, q)``
    (old capacity minus residual) is kept when the new capacities allow it,
    ``-c'(q, p) <= f <= c'(p, q)``, and is otherwise cut to the nearer bound; the residuals
    become ``r'(p, q) = c'(p, q) - f'`` and ``r'(q, p) = c'(q, p) + f'``. Flow cut from a pair
    returns to its tail: the tail's excess grows, the head's shrinks. Where a pixel's excess
    would become negative, both of its terminal capacities are raised by the deficit ``delta``
    (the pixel's source arc, always saturated, brings it in; its sink arc keeps its flow), as
    :func:`reparameterize_terminals` does: every s-t cut costs ``delta`` more, so the minimum
    cuts are unchanged and the true flow value is the reparameterised one minus the sum.

    Parameters
    ----------
    residual
        (2 * ndim, *shape) residuals of the n-links (any integer dtype; see the
        module docstring for the direction order), consistent with ``old_links``.
    excess, to_sink, source_capacity, sink_capacity
        the per-pixel state (module docstring).
    reparameterization
        the sum of the deltas already added to both terminal arcs.
    old_links, new_links
        ``(forward, backward)`` n-link capacities, one array per axis,
        the old ones those in force for ``residual``.

    Returns
    -------
    NlinkUpdate | None
        The new state (arrays of the input's module; ``reparameterization`` the new total), or
        None when a residual to the sink would leave int32 (a pixel losing more than about
        ``2**31`` of net n-link inflow). The caller must then start over from zero n-link flow,
        :func:`restart_nlinks`, which is always representable.
    """
    xp = array_module(excess)
    ndim = excess.ndim
    old_forward, _ = old_links
    new_forward, new_backward = new_links
    flows = xp.asarray(residual).astype(xp.int64)  # becomes the new residuals
    returned = xp.zeros(excess.shape, dtype=xp.int64)  # net flow cut from each pixel's outflow
    for axis in range(ndim):
        ahead, behind = _direction(ndim, axis, False), _direction(ndim, axis, True)
        lower = axis_slice(ndim, axis, 0, -1)
        upper = axis_slice(ndim, axis, 1, None)
        capacity, reverse = _int64(xp, new_forward[axis]), _int64(xp, new_backward[axis])
        flow = _int64(xp, old_forward[axis]) - flows[ahead][lower]  # net flow p -> p + e_axis
        kept = xp.minimum(xp.maximum(flow, -reverse), capacity)
        flows[ahead][lower] = capacity - kept
        flows[behind][upper] = reverse + kept
        returned[lower] += flow - kept
        returned[upper] -= flow - kept
    excess = excess + returned
    delta = xp.maximum(0, -excess)
    to_sink = to_sink + delta
    if int(to_sink.max()) > INT32_MAX:
        return None
    added = int(delta.sum(dtype=xp.int64))
    return NlinkUpdate(excess + delta, to_sink, source_capacity + delta, sink_capacity + delta,
                       reparameterization + added, flows.astype(xp.asarray(residual).dtype))


def restart_nlinks(new_links, source_capacity, sink_capacity, reparameterization: int,
                   residual_dtype) -> NlinkUpdate:
    """The state of zero n-link flow for ``new_links`` (``(forward, backward)``) and the
    terminal capacities in force (which may be reparameterised, hence kept with their
    ``reparameterization``): :func:`fresh_terminals` on them, residuals = capacities.

    Always representable: both capacities in force carry the same added delta, so the residual
    to the sink, ``sink - min(source, sink)``, is at most the int32 sink capacity given."""
    xp = array_module(source_capacity)
    ndim = source_capacity.ndim
    forward, backward = new_links
    residual = xp.zeros((2 * ndim, *source_capacity.shape), dtype=residual_dtype)
    for axis in range(ndim):
        residual[_direction(ndim, axis, False)][axis_slice(ndim, axis, 0, -1)] = \
            xp.asarray(forward[axis])
        residual[_direction(ndim, axis, True)][axis_slice(ndim, axis, 1, None)] = \
            xp.asarray(backward[axis])
    fresh = fresh_terminals(source_capacity, sink_capacity)
    return NlinkUpdate(fresh.excess, fresh.to_sink, fresh.source_capacity, fresh.sink_capacity,
                       reparameterization, residual)
