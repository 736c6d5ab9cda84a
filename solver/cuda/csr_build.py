"""The residual network of a CSRNetwork as a paired-arc CSR, built with NumPy or CuPy.

Every unordered vertex pair {u, v} joined by an arc in either direction gets one *slot* in u's
list and one in v's. ``rcap[e]`` is the residual capacity of slot e's direction (initially the
capacity of that arc, 0 where only the opposite arc exists) and ``twin[e]`` the pair's other slot.
Antiparallel arcs share a pair, so a grid has one slot per neighbour instead of a forward and a
reverse entry, and a push updates two residuals that lie in the two endpoints' own lists.

This module does not import CuPy: every function takes the array module ``xp`` (numpy or
cupy) so the same code builds the graph on the host or on the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

INT32_LIMIT = 2**31 - 1


@dataclass(frozen=True)
class ResidualGraph:
    """Paired-arc CSR of a flow network (arrays of the module that built it).

    Attributes:
        num_vertices: n.
        offsets: int32 (n + 1,), slots of u are ``offsets[u]:offsets[u+1]``.
        heads: int32 (S,), the other endpoint of each slot.
        twin: int32 (S,), the opposite slot of the same pair.
        rcap: uint32 (S,), initial residual capacity of each slot's direction.
    """

    num_vertices: int
    offsets: object
    heads: object
    twin: object
    rcap: object

    @property
    def num_slots(self) -> int:
        return int(self.heads.size)


def slot_count_bound(num_arcs: int) -> int:
    """The largest number of slots a network with ``num_arcs`` arcs can need."""
    return 2 * num_arcs


def build_residual_graph(num_vertices: int, offsets, heads, capacities, xp) -> ResidualGraph:
    """Pair up the arcs of a CSR network (sorted by tail then head, no duplicates or loops).

    Args:
        num_vertices: n.
        offsets: int (n + 1,) CSR offsets of the arcs by tail.
        heads: int (m,) arc heads.
        capacities: int (m,) arc capacities, 0 .. 2**31 - 1.
        xp: numpy or cupy; the inputs must be arrays of that module.

    Raises:
        ValueError: when the slots would not fit int32 indices.
    """
    n = int(num_vertices)
    m = int(heads.size)
    if 2 * m > INT32_LIMIT:
        raise ValueError(f"{m:,} arcs need {2 * m:,} residual slots, more than the int32 "
                         f"index limit {INT32_LIMIT:,} of the GPU kernels")
    offsets = offsets.astype(xp.int64, copy=False)
    heads64 = heads.astype(xp.int64, copy=False)
    tails64 = xp.searchsorted(offsets[1:], xp.arange(m, dtype=xp.int64), side="right")
    # Forward half of each arc (its capacity) and reverse half (capacity 0), keyed tail*n+head.
    keys = xp.concatenate([tails64 * n + heads64, heads64 * n + tails64])
    caps = xp.concatenate([capacities.astype(xp.int64, copy=False),
                           xp.zeros(m, dtype=xp.int64)])
    order = xp.argsort(keys, kind="stable")
    keys = keys[order]
    caps = caps[order]
    del order
    # A key occurs at most twice (arc u->v's forward half and arc v->u's reverse half).
    if keys.size:
        same = keys[1:] == keys[:-1]
        first = xp.concatenate([xp.ones(1, dtype=bool), ~same])
        merged = caps.copy()
        merged[:-1] += xp.where(same, caps[1:], 0)
        keys = keys[first]
        rcap = merged[first].astype(xp.uint32)
        del same, first, merged, caps
    else:
        rcap = xp.zeros(0, dtype=xp.uint32)
    slot_tails = keys // n
    slot_heads = keys - slot_tails * n
    slot_offsets = xp.searchsorted(slot_tails, xp.arange(n + 1, dtype=xp.int64), side="left")
    twin = xp.searchsorted(keys, slot_heads * n + slot_tails, side="left")
    return ResidualGraph(n, slot_offsets.astype(xp.int32), slot_heads.astype(xp.int32),
                         twin.astype(xp.int32), rcap)


def slot_range(graph: ResidualGraph, vertex: int) -> tuple[int, int]:
    """(first, end) slot indices of ``vertex`` as Python ints."""
    pair = graph.offsets[vertex:vertex + 2]
    pair = pair.get() if hasattr(pair, "get") else pair
    return int(pair[0]), int(pair[1])


def residual_sum(rcap, first: int, end: int, xp) -> int:
    """Exact sum of ``rcap[first:end]`` as a Python int."""
    if end <= first:
        return 0
    return int(rcap[first:end].astype(xp.uint64).sum())
