"""A plain-Python push-relabel (phase I) on tiny grids that can start from any preflow.

Used to check the Kohli-Torr terminal update (graphcut.solver.dynamic) in CI without a GPU:
the GPU grid solver keeps its state in the same form (per-direction n-link residuals, excess,
residual to the sink), so this model runs the same steps on NumPy int64 arrays. Slow (pure
Python): keep grids below a few hundred pixels.
"""

from __future__ import annotations

from collections import deque

import numpy as np

# direction -> (dy, dx); the opposite direction of d is d ^ 1
OFFSETS = ((0, 1), (0, -1), (1, 0), (-1, 0))  # RIGHT, LEFT, DOWN, UP


def nlink_capacities(network) -> np.ndarray:
    """(4, H, W) int64 capacities towards RIGHT, LEFT, DOWN, UP (0 off the grid)."""
    h, w = network.shape
    caps = np.zeros((4, h, w), dtype=np.int64)
    caps[0, :, :-1] = network.right
    caps[1, :, 1:] = network.left
    caps[2, :-1, :] = network.down
    caps[3, 1:, :] = network.up
    return caps


def net_outflow(capacities: np.ndarray, residual: np.ndarray) -> np.ndarray:
    """Net n-link flow out of each pixel: on each pair the residuals sum to both capacities,
    so the net flow p -> q is ``c(p, q) - r(p, q)``."""
    return (capacities - residual).sum(axis=0)


def max_preflow(residual: np.ndarray, excess: np.ndarray, to_sink: np.ndarray) -> None:
    """Push-relabel (FIFO) in place until no pixel that can reach t holds excess."""
    _, h, w = residual.shape
    n = h * w
    height = _bfs_heights(residual, to_sink)
    queue = deque((y, x) for y in range(h) for x in range(w)
                  if excess[y, x] > 0 and height[y, x] < n + 1)
    while queue:
        y, x = queue.popleft()
        while excess[y, x] > 0 and height[y, x] < n + 1:
            if to_sink[y, x] > 0 and height[y, x] == 1:
                amount = min(excess[y, x], to_sink[y, x])
                to_sink[y, x] -= amount
                excess[y, x] -= amount
                continue
            pushed = False
            for d, (dy, dx) in enumerate(OFFSETS):
                qy, qx = y + dy, x + dx
                if (residual[d, y, x] > 0 and 0 <= qy < h and 0 <= qx < w
                        and height[y, x] == height[qy, qx] + 1):
                    amount = min(excess[y, x], residual[d, y, x])
                    residual[d, y, x] -= amount
                    residual[d ^ 1, qy, qx] += amount
                    excess[y, x] -= amount
                    excess[qy, qx] += amount
                    if excess[qy, qx] == amount and height[qy, qx] < n + 1:
                        queue.append((qy, qx))
                    pushed = True
                    break
            if not pushed:
                lowest = 1 if to_sink[y, x] > 0 else 2 * n + 2
                for d, (dy, dx) in enumerate(OFFSETS):
                    qy, qx = y + dy, x + dx
                    if residual[d, y, x] > 0 and 0 <= qy < h and 0 <= qx < w:
                        lowest = min(lowest, height[qy, qx] + 1)
                height[y, x] = lowest


def _bfs_heights(residual: np.ndarray, to_sink: np.ndarray) -> np.ndarray:
    """Exact distances to t over residual arcs (n + 1 where t is unreachable)."""
    _, h, w = residual.shape
    n = h * w
    height = np.full((h, w), n + 1, dtype=np.int64)
    queue = deque()
    for y in range(h):
        for x in range(w):
            if to_sink[y, x] > 0:
                height[y, x] = 1
                queue.append((y, x))
    while queue:
        y, x = queue.popleft()
        for d, (dy, dx) in enumerate(OFFSETS):
            py, px = y - dy, x - dx  # p -> (y, x) is direction d from p
            if 0 <= py < h and 0 <= px < w and residual[d, py, px] > 0 \
                    and height[py, px] == n + 1:
                height[py, px] = height[y, x] + 1
                queue.append((py, px))
    return height


def source_side(residual: np.ndarray, to_sink: np.ndarray) -> np.ndarray:
    """Pixels that cannot reach t in the residual network."""
    _, h, w = residual.shape
    return _bfs_heights(residual, to_sink) > h * w


def random_links(rng, shape, top: int, zero_share: float = 0.2):
    """``(forward, backward)`` random int32 n-link capacities of a grid of ``shape`` (2-D or
    3-D), with zeros and saturated (``top``) arcs."""
    def draw(link_shape):
        values = rng.integers(0, top + 1, size=link_shape)
        kind = rng.random(link_shape)
        return np.where(kind < zero_share, 0, np.where(kind < zero_share + 0.15, top, values)
                        ).astype(np.int32)
    shapes = [tuple(n - (a == axis) for a, n in enumerate(shape)) for axis in range(len(shape))]
    return tuple(draw(s) for s in shapes), tuple(draw(s) for s in shapes)


def random_state(rng, shape, links, top: int) -> dict:
    """A random state in the GPU solver's layout for the n-links ``links``: every arc pair
    carries a random net flow its capacities allow (residuals (2 * ndim, *shape) uint32, zero
    off the grid), random terminal capacities in force, residuals to the sink and excesses
    (small, so that cutting n-link flow often leaves a deficit). Conservation is not kept:
    for comparing two implementations of an update, not for solving."""
    ndim = len(shape)
    forward, backward = links
    residual = np.zeros((2 * ndim, *shape), dtype=np.uint32)
    for axis in range(ndim):
        ahead = 2 * (ndim - 1 - axis)
        lower = tuple(slice(0, -1) if a == axis else slice(None) for a in range(ndim))
        upper = tuple(slice(1, None) if a == axis else slice(None) for a in range(ndim))
        cap, rev = forward[axis].astype(np.int64), backward[axis].astype(np.int64)
        flow = rng.integers(-rev, cap + 1)
        residual[ahead][lower] = cap - flow
        residual[ahead + 1][upper] = rev + flow
    sink_capacity = rng.integers(0, top + 1, size=shape)
    return {"residual": residual,
            "excess": rng.integers(0, max(2, top // 8), size=shape),
            "to_sink": rng.integers(0, sink_capacity + 1).astype(np.int32),
            "source_capacity": rng.integers(0, top + 1, size=shape),
            "sink_capacity": sink_capacity}
