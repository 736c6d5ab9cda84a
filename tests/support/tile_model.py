"""A NumPy model of the CSR kernel's tiled BFS expansion (csr_kernels.cu, ``expand_tiles``).

A block takes ``width`` frontier vertices at a time (a tile), writes the exclusive prefix sum of
their degrees and their first slots, and gives slot ``k`` of the tile's slot sequence to thread
``k % width`` in groups: thread ``tid`` handles ``k0 + j * width + tid`` for ``j <
TILE_GROUP``. Each thread finds the vertex that owns its slot with an upper-bound search over the
prefix sums (the last vertex whose slots start at or before it). :func:`tile_slots` reproduces
that arithmetic: the tests check that it yields every slot of every frontier vertex exactly once,
with vertices of degree 0 and of huge degree, and that a BFS run level by level with it gives the
same distances as a plain BFS.
"""

from __future__ import annotations

from collections import deque

import numpy as np

TILE_GROUP = 4  # csr_kernels.cu's TILE_GROUP


def _owner(excl: np.ndarray, nv: int, idx: int) -> int:
    """The kernel's binary search: the last i < nv with excl[i] <= idx."""
    lo, hi = 0, nv
    while lo < hi:
        mid = (lo + hi) >> 1
        if excl[mid] <= idx:
            lo = mid + 1
        else:
            hi = mid
    return lo - 1


def tile_slots(offsets: np.ndarray, front: list[int], width: int,
               threads: int | None = None) -> list[tuple[int, int]]:
    """(thread, slot) pairs in the order one block of ``threads`` threads (default ``width``)
    would visit them, taking tiles of ``width`` <= ``threads`` frontier vertices (the kernel
    narrows the tiles when the whole grid expands a small frontier)."""
    threads = width if threads is None else threads
    assert width <= threads and threads % 32 == 0
    visits = []
    for base in range(0, len(front), width):
        tile = front[base:base + width]
        nv = len(tile)
        first = np.array([offsets[w] for w in tile] + [0] * (threads - nv), dtype=np.int64)
        deg = np.array([offsets[w + 1] - offsets[w] for w in tile] + [0] * (threads - nv),
                       dtype=np.int64)
        # warp-wise inclusive scans, then the warp offsets (what the kernel computes)
        incl = np.concatenate([np.cumsum(deg[w:w + 32]) for w in range(0, threads, 32)])
        warp_tot = np.array([incl[w + 31] for w in range(0, threads, 32)])
        warp_off = np.concatenate([[0], np.cumsum(warp_tot)[:-1]])
        excl = np.array([warp_off[i // 32] + incl[i] - deg[i] for i in range(threads)])
        total = int(warp_tot.sum())
        for k0 in range(0, total, threads * TILE_GROUP):
            for tid in range(threads):
                for j in range(TILE_GROUP):
                    idx = k0 + j * threads + tid
                    if idx < total:
                        i = _owner(excl, nv, idx)
                        visits.append((tid, int(first[i] + idx - excl[i])))
    return visits


def tiled_bfs(offsets, heads, residual_in, t: int, n: int, width: int) -> np.ndarray:
    """Distances to t by a level-synchronous BFS whose levels use :func:`tile_slots`; slot e of
    frontier vertex w labels heads[e] when ``residual_in[e]`` (the arc heads[e] -> w has
    residual capacity) and heads[e] is not labelled yet. Unreached vertices keep n."""
    dist = np.full(n, n, dtype=np.int64)
    dist[t] = 0
    front, level = [t], 0
    while front:
        level += 1
        nxt = []
        for _, e in tile_slots(offsets, front, width):
            u = int(heads[e])
            if residual_in[e] and dist[u] == n:
                dist[u] = level
                nxt.append(u)
        front = nxt
    return dist


def plain_bfs(offsets, heads, residual_in, t: int, n: int) -> np.ndarray:
    """The same distances by an ordinary queue BFS (the oracle)."""
    dist = np.full(n, n, dtype=np.int64)
    dist[t] = 0
    queue = deque([t])
    while queue:
        w = queue.popleft()
        for e in range(offsets[w], offsets[w + 1]):
            u = int(heads[e])
            if residual_in[e] and dist[u] == n:
                dist[u] = dist[w] + 1
                queue.append(u)
    return dist
