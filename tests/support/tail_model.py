"""A plain-Python model of the CSR kernel's phase I with its tail mode (csr_kernels.cu).

The model runs the kernel's control flow on a residual CSR in NumPy int64 arrays: saturate the
arcs out of s, a global relabel (BFS from t, early-stopping as in the kernel when ``early``),
then sweeps over the worklist. A sweep takes every listed vertex in turn and discharges it for
up to ``cycles`` operations (push to the lowest residual neighbour when it is lower, else
relabel to that height + 1, or to n when no residual arc leaves it); a serial order of the
kernel's lock-free discharges. When the worklist has at most ``solo_max`` vertices the sweeps
are "block 0's"; in tail mode (``tail > 0``) a relabel that comes due there is done "by block 0"
too: the worklist is replaced by the active vertices that relabel finds, and the loop goes on
until a relabel finds none (the end: its heights give the cut) or the list outgrows
``solo_max`` (back to "the grid"). A relabel due on the grid's side ends the round, as in the
kernel. The result must be a maximum preflow whatever the schedule: the tests compare it with
scipy's maximum flow. Slow (pure Python): keep networks below a few hundred vertices.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Residual:
    """Residual slots: slot e goes from tail[e] to head[e] with residual rcap[e]; twin[e] is
    the reverse slot; out[v] lists v's slots."""
    n: int
    s: int
    t: int
    head: np.ndarray
    rcap: np.ndarray
    twin: np.ndarray
    cap: np.ndarray          # original capacity of each slot (0 for reverse slots)
    out: list
    excess: np.ndarray = field(default=None)


def residual_network(network) -> Residual:
    """One forward slot (capacity c) and one reverse slot (capacity 0) per arc of a
    CSRNetwork."""
    n, s, t = network.num_vertices, network.source, network.sink
    tails, heads, caps = (np.asarray(a, dtype=np.int64) for a in network.arcs())
    m = tails.size
    head = np.concatenate([heads, tails])
    cap = np.concatenate([caps, np.zeros(m, dtype=np.int64)])
    twin = np.concatenate([np.arange(m, 2 * m), np.arange(m)])
    tail_of = np.concatenate([tails, heads])
    out = [[] for _ in range(n)]
    for e, u in enumerate(tail_of):
        out[int(u)].append(e)
    return Residual(n, s, t, head, cap.copy(), twin, cap, out, np.zeros(n, dtype=np.int64))


def _distances(r: Residual) -> np.ndarray:
    """Exact BFS levels to t over residual arcs (n where t cannot be reached), t = 0."""
    into = [[] for _ in range(r.n)]
    for v in range(r.n):
        for e in r.out[v]:
            if r.rcap[e] > 0:
                into[int(r.head[e])].append(v)
    dist = np.full(r.n, r.n, dtype=np.int64)
    dist[r.t] = 0
    queue = deque([r.t])
    while queue:
        w = queue.popleft()
        for u in into[w]:
            if dist[u] == r.n and u != r.s:
                dist[u] = dist[w] + 1
                queue.append(u)
    return dist


def global_relabel(r: Residual, height: np.ndarray, early: bool,
                   bound: int | None = None) -> tuple[np.ndarray, list, int] | None:
    """The kernel's global relabel. Returns (new heights, active vertices found in BFS order,
    last level). Early-stopping: the BFS stops after the level where every active vertex of
    height < n is found; the vertices beyond get max(old height, level + 1). With ``bound``
    (block 0's tail relabel): None, heights untouched, when the BFS would go on to expand a
    level of more than ``bound`` vertices."""
    n = r.n
    dist = _distances(r)
    targets = [v for v in range(n) if v not in (r.s, r.t) and height[v] < n and r.excess[v] > 0]
    levels = int(dist[dist < n].max()) if (dist < n).any() else 0
    order = sorted((v for v in range(n) if dist[v] < n and v not in (r.s, r.t)),
                   key=lambda v: dist[v])
    found_all = bool(targets) and all(dist[v] < n for v in targets)
    stop = max(1, max(int(dist[v]) for v in targets)) if early and found_all else None
    if bound is not None:
        sizes = np.bincount(dist[dist < n], minlength=levels + 1)
        expanded = range(1, stop if stop is not None else levels + 1)  # levels the BFS expands
        if any(sizes[d] > bound for d in expanded):
            return None
    if stop is not None:
        last = stop
        floor = min(last + 1, n)
        new = np.where(dist <= last, dist, np.maximum(height, floor))
        levels = last
    else:
        new = dist.copy()
    new[r.s] = n + 1
    new[r.t] = 0
    active = [v for v in order if r.excess[v] > 0 and new[v] < n]
    return new, active, levels


def _discharge(r: Residual, v: int, height: np.ndarray, cycles: int, nxt: list, queued: set):
    n = r.n
    for _ in range(cycles):
        if r.excess[v] <= 0 or height[v] >= n:
            break
        live = [e for e in r.out[v] if r.rcap[e] > 0]
        if not live:
            height[v] = n
            break
        e = min(live, key=lambda k: (height[int(r.head[k])], k))
        w = int(r.head[e])
        if height[v] > height[w]:
            d = min(int(r.excess[v]), int(r.rcap[e]))
            r.rcap[e] -= d
            r.rcap[r.twin[e]] += d
            r.excess[v] -= d
            was = r.excess[w]
            r.excess[w] += d
            if w not in (r.s, r.t) and was == 0 and w not in queued:
                queued.add(w)
                nxt.append(w)
        else:
            height[v] = min(height[w] + 1, n)
    if height[v] < n and r.excess[v] > 0 and v not in queued:
        queued.add(v)
        nxt.append(v)


@dataclass
class ModelRun:
    """The model's answer and what its schedule did."""
    flow: int
    source_side: np.ndarray
    residual: Residual
    grid_sweeps: int = 0
    solo_sweeps: int = 0
    grid_relabels: int = 0
    tail_relabels: int = 0
    handbacks: int = 0          # tail loops left because the active set outgrew solo_max
    tail_aborts: int = 0        # tail relabels given up (a frontier wider than solo_max)
    ended_in_tail: bool = False


def phase1(network, *, tail: int = 0, small: int = 512, cycles: int = 1, gr_min: int = 4,
           gr_factor: float = 0.5, early: bool = True, check=None) -> ModelRun:
    """Run the model; ``check(residual, height)`` (if given) is called after every relabel."""
    r = residual_network(network)
    n, s, t = r.n, r.s, r.t
    for e in r.out[s]:
        d = int(r.rcap[e])
        if d > 0:
            r.rcap[e] = 0
            r.rcap[r.twin[e]] += d
            if int(r.head[e]) != t:
                r.excess[int(r.head[e])] += d
    height = np.zeros(n, dtype=np.int64)
    height[s] = n + 1
    solo_max = max(tail, small)
    tail_on = tail > 0
    run = ModelRun(0, np.zeros(n, bool), r)
    finished = False
    while not finished:
        height, work, levels = global_relabel(r, height, early)
        run.grid_relabels += 1
        if check:
            check(r, height)
        if not work:
            break
        since = 0
        while True:
            in_block = solo_max > 0 and len(work) <= solo_max
            nxt, queued = [], set()
            for v in work:
                _discharge(r, v, height, cycles, nxt, queued)
            work = nxt
            since += 1
            run.solo_sweeps += in_block
            run.grid_sweeps += not in_block
            due = not work or (since >= gr_min and since >= gr_factor * levels)
            if not due:
                if in_block and len(work) > solo_max:
                    run.handbacks += 1
                continue
            if not (in_block and tail_on):
                break  # the grid (or block 0 without tail mode) hands the relabel to the grid
            relabelled = global_relabel(r, height, early, bound=solo_max)
            if relabelled is None:  # too wide for one block: the grid relabels from now on
                run.tail_aborts += 1
                tail_on = False
                break
            height, work, levels = relabelled
            run.tail_relabels += 1
            since = 0
            if check:
                check(r, height)
            if not work:
                finished = run.ended_in_tail = True
                break
            if len(work) > solo_max:
                run.handbacks += 1
    m = len(r.cap) // 2
    flow = r.cap[:m] - r.rcap[:m]
    run.flow = int(flow[r.head[:m] == t].sum() - flow[r.head[m:] == t].sum())
    run.source_side = height >= n
    return run


def preflow_violations(network, r: Residual) -> list[str]:
    """Capacity and conservation violations of the model's final state (empty when valid):
    0 <= flow <= capacity on every arc, excess >= 0 at every vertex other than s, and the
    excess equal to inflow - outflow."""
    problems = []
    m = len(r.cap) // 2
    flow = r.cap[:m] - r.rcap[:m]
    if (flow < 0).any() or (flow > r.cap[:m]).any():
        problems.append("arc flow outside [0, capacity]")
    tails, heads, _ = (np.asarray(a, dtype=np.int64) for a in network.arcs())
    balance = np.zeros(r.n, dtype=np.int64)
    np.add.at(balance, heads, flow)
    np.add.at(balance, tails, -flow)
    inner = np.ones(r.n, bool)
    inner[[r.s, r.t]] = False
    if (balance[inner] != r.excess[inner]).any():
        problems.append("excess differs from inflow - outflow")
    if (balance[inner] < 0).any():
        problems.append("negative excess")
    return problems
