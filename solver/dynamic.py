"""Kohli-Torr terminal updates of a kept preflow, for dynamic (incremental) re-solves.

Array-module agnostic (NumPy or CuPy): the GPU grid solver applies it to its state on the GPU,
and the CI tests apply the very same function to NumPy states against PyMaxflow.

Conventions (per pixel, int64 arrays of one shape):
    excess           flow into the pixel minus flow out of it (>= 0 in a preflow);
    to_sink          residual capacity of the pixel's arc to the sink t;
    source_capacity  capacity of s -> pixel in force, an arc that is always saturated;
    sink_capacity    capacity of pixel -> t in force, so its flow is sink_capacity - to_sink.
The n-link flows are not needed: a pixel's net n-link inflow is recovered from the above.
"""

from __future__ import annotations

from dataclasses import dataclass

INT32_MAX = 2**31 - 1


def _array_module(array):
    if type(array).__module__.startswith("cupy"):
        import cupy
        return cupy
    import numpy
    return numpy


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
    xp = _array_module(excess)
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
    xp = _array_module(new_source)
    source = xp.asarray(new_source).astype(xp.int64)
    sink = xp.asarray(new_sink).astype(xp.int64)
    through = xp.minimum(source, sink)
    return TerminalUpdate(source - through, sink - through, source, sink, 0)
