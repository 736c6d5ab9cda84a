"""A vectorised NumPy model of the CSR kernel's dependent steps (csr_kernels.cu's ``phase1``).

``tail_model.py`` runs the kernel's control flow one vertex at a time (pure Python, a few
hundred vertices). This model runs the same schedule with whole NumPy arrays, so it counts the
kernel's dependent steps (sweeps and BFS levels, each ending at a grid barrier on the GPU) on
full-size instances (genrmf a64 b64: seconds):

- a **sweep** discharges every vertex of the worklist for up to ``cycles`` operations,
  synchronously: each reads its neighbours' heights as they were when the sweep began, then
  pushes to its lowest residual neighbour when that is lower, else relabels to that height + 1
  (n when no residual arc leaves it); a push that leaves no excess or a relabel to n ends its
  turn. The GPU's threads are not synchronous (one may see another's new
  height), so its counts differ a little; the trends between schedules are what this is for.
- a **global relabel** is the kernel's BFS from t over residual arcs, one frontier per level,
  early-stopping (``early``) at the level where every active vertex of height < n is found
  (the vertices beyond get max(old height, level + 1)); the BFS that finds no active vertex
  runs to the end and its heights give the cut.
- a global relabel is due after ``gr_min`` sweeps once the sweeps since the last one reach
  ``gr_factor`` x its levels, or (``gr_work`` > 0) once the worklists since then add up to
  ``gr_work`` x n vertices, or after ``gr_max`` sweeps; and when the worklist is empty. With
  ``gr_share`` > 0 (not in the kernel: a candidate) the levels condition also needs the
  relabels since the last global relabel to be at least ``gr_share`` of the operations (a
  sweep that mostly pushes follows good heights), unless the sweeps reach ``gr_hard`` x levels.

Arcs u -> v and v -> u share a pair of residual slots, as on the GPU (csr_build.py). The
result is exact whatever the schedule (the last BFS proves the preflow maximum): the tests
compare the flow with scipy's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

BIG = np.int64(1) << 40


@dataclass
class Slots:
    """Residual slots sorted by tail: slot e goes tail[e] -> head[e], rcap[e] residual,
    twin[e] the reverse slot; off[v]:off[v+1] are v's slots."""
    n: int
    s: int
    t: int
    off: np.ndarray
    head: np.ndarray
    twin: np.ndarray
    rcap: np.ndarray


def residual_slots(network) -> Slots:
    """Pair every arc with its reverse (summing parallel arcs) into residual slots."""
    n, s, t = network.num_vertices, network.source, network.sink
    tails, heads, caps = (np.asarray(a, dtype=np.int64) for a in network.arcs())
    lo, hi = np.minimum(tails, heads), np.maximum(tails, heads)
    keys, inverse = np.unique(lo * n + hi, return_inverse=True)
    up = np.zeros(keys.size, np.int64)      # capacity lo -> hi
    down = np.zeros(keys.size, np.int64)    # capacity hi -> lo
    np.add.at(up, inverse[tails < heads], caps[tails < heads])
    np.add.at(down, inverse[tails > heads], caps[tails > heads])
    a, b = keys // n, keys % n
    p = keys.size
    tail = np.concatenate([a, b])
    head = np.concatenate([b, a])
    rcap = np.concatenate([up, down])
    twin = np.concatenate([np.arange(p, 2 * p), np.arange(p)])
    order = np.argsort(tail, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    off = np.zeros(n + 1, np.int64)
    np.cumsum(np.bincount(tail, minlength=n), out=off[1:])
    return Slots(n, s, t, off, head[order], rank[twin[order]], rcap[order])


def _slots_of(g: Slots, vertices: np.ndarray):
    """(slot indices of ``vertices``, the position in ``vertices`` of each slot's tail)."""
    start, end = g.off[vertices], g.off[vertices + 1]
    deg = end - start
    owner = np.repeat(np.arange(vertices.size), deg)
    first = np.repeat(start - np.concatenate([[0], np.cumsum(deg)[:-1]]), deg)
    return first + np.arange(owner.size), owner


@dataclass
class StepCounts:
    """What the model's schedule did; ``levels`` and ``frontiers`` per global relabel."""
    flow: int = 0
    source_side: np.ndarray = None
    sweeps: int = 0
    global_relabels: int = 0
    bfs_levels: int = 0
    pushes: int = 0
    relabels: int = 0
    work: int = 0
    small_sweeps: int = 0               # sweeps of at most `small` vertices (block 0's)
    gaps: int = 0                       # gap relabels (``gap=True``)
    levels: list = field(default_factory=list)
    frontiers: list = field(default_factory=list)   # per relabel: frontier size per level
    rounds: list = field(default_factory=list)      # per relabel: (levels, active found,
    #                                                  flow into t so far, excess still active)

    def predicted_seconds(self, us_level: float = 5.0, us_sweep: float = 7.0) -> float:
        """A cost model: every BFS level and every sweep one dependent grid step."""
        return (self.bfs_levels * us_level + self.sweeps * us_sweep) * 1e-6


def global_relabel(g: Slots, h: np.ndarray, excess: np.ndarray, early: bool,
                   stop_share: float = 1.0):
    """The kernel's BFS from t; returns (new heights, active vertices found, levels, frontier
    sizes per level). With ``stop_share`` < 1 (not in the kernel: a candidate) an early
    stop comes once that share of the active vertices of height < n is found; the others keep
    max(old height, level + 1) and wait, off the worklist, for the next relabel."""
    n, s, t = g.n, g.s, g.t
    inner = np.ones(n, bool)
    inner[[s, t]] = False
    alive = int(np.count_nonzero(inner & (h < n) & (excess > 0))) if early else 0
    target = int(np.ceil(stop_share * alive)) if alive else 0
    new = np.full(n, n, np.int64)
    new[t] = 0
    frontier = np.array([t])
    level, found, sizes = 0, 0, []
    while frontier.size:
        level += 1
        idx, _ = _slots_of(g, frontier)
        u = g.head[idx]
        ok = (g.rcap[g.twin[idx]] > 0) & (new[u] == n) & (u != s)
        frontier = np.unique(u[ok])
        new[frontier] = level
        sizes.append(int(frontier.size))
        found += int(np.count_nonzero(excess[frontier] > 0))
        if target > 0 and found >= target:
            break
    reached = new < n
    if target > 0 and found >= target:
        floor = min(level + 1, n)
        far = ~reached & (np.arange(n) != s)
        new[far] = np.maximum(h[far], floor)
    new[s] = n + 1
    new[t] = 0
    active = np.flatnonzero(inner & reached & (excess > 0))
    return new, active, level, sizes


def distances(g: Slots) -> np.ndarray:
    """Exact BFS distances to t over residual arcs (n where t cannot be reached)."""
    n = g.n
    dist = np.full(n, n, np.int64)
    dist[g.t] = 0
    frontier, level = np.array([g.t]), 0
    while frontier.size:
        level += 1
        idx, _ = _slots_of(g, frontier)
        u = g.head[idx]
        ok = (g.rcap[g.twin[idx]] > 0) & (dist[u] == n) & (u != g.s)
        frontier = np.unique(u[ok])
        dist[frontier] = level
    return dist


def incremental_bound(network, **schedule) -> tuple[int, int]:
    """(search levels of the schedule's run, a lower bound on the levels an incremental relabel
    would need): after the first, a relabel that re-searched only from the lowest exact distance
    at which a slot's residual turned zero or non-zero since the previous relabel would still
    need the levels from there to the early stop."""
    state = {"live": None, "bound": 0}

    def observe(g, levels):
        live = g.rcap > 0
        if state["live"] is None:
            state["bound"] += levels
        else:
            changed = np.flatnonzero(live != state["live"])
            tails = np.repeat(np.arange(g.n), np.diff(g.off))
            ends = np.concatenate([tails[changed], g.head[changed]])
            lowest = int(distances(g)[ends].min()) if ends.size else levels
            state["bound"] += levels - min(max(lowest, 1), levels) + 1
        state["live"] = live

    run = phase1(network, observe=observe, **schedule)
    return run.bfs_levels, state["bound"]


def sweep(g: Slots, h: np.ndarray, excess: np.ndarray, work: np.ndarray, run: StepCounts,
          cycles: int = 1):
    """One synchronous sweep over ``work``: each vertex does up to ``cycles`` operations (its
    own height and residuals as they change, its neighbours' heights as they were when the
    sweep began); returns the next worklist."""
    n, s, t = g.n, g.s, g.t
    seen = h.copy()                                   # neighbours' heights: start of the sweep
    live = work
    received = []
    for _ in range(cycles):
        if not live.size:
            break
        idx, owner = _slots_of(g, live)
        hw = np.where(g.rcap[idx] > 0, seen[g.head[idx]], BIG)
        key = (hw << 22) | (idx - g.off[live][owner])     # lowest height, then first slot
        best = np.full(live.size, BIG << 22, np.int64)
        np.minimum.at(best, owner, key)
        best_h = best >> 22
        best_e = g.off[live] + (best & ((1 << 22) - 1))
        none = best_h >= BIG
        push = ~none & (h[live] > best_h)
        lift = ~none & ~push
        h[live[none]] = n
        h[live[lift]] = np.minimum(best_h[lift] + 1, n)
        v, e = live[push], best_e[push]
        d = np.minimum(excess[v], g.rcap[e])
        g.rcap[e] -= d
        np.add.at(g.rcap, g.twin[e], d)
        excess[v] -= d
        w = g.head[e]
        np.add.at(excess, w, d)
        received.append(w)
        run.pushes += int(push.sum())
        run.relabels += int((none | lift).sum())
        go_on = (push & (excess[live] > 0)) | (lift & (h[live] < n))
        live = live[go_on]
    cand = np.unique(np.concatenate([work] + received))
    keep = (excess[cand] > 0) & (h[cand] < n) & (cand != s) & (cand != t)
    return cand[keep]


def gap_relabel(g: Slots, h: np.ndarray, work: np.ndarray, run: StepCounts) -> np.ndarray:
    """Gap relabelling (not in the kernel: a candidate): when no vertex has height k (0 < k <
    the highest active height), every vertex above k and below n gets n (it cannot reach t);
    returns the worklist without them."""
    n = g.n
    inner = np.ones(n, bool)
    inner[[g.s, g.t]] = False
    top = int(h[work].max())
    counts = np.bincount(h[inner & (h < n)], minlength=top + 1)
    empty = np.flatnonzero(counts[1:top] == 0)
    if not empty.size:
        return work
    k = int(empty[0]) + 1
    lifted = inner & (h > k) & (h < n)
    h[lifted] = n
    run.gaps += 1
    return work[h[work] < n]


def phase1(network, *, cycles: int = 1, small: int = 512, gr_min: int = 4, gr_max: int = 1 << 30,
           gr_factor: float = 0.5, gr_work: float = 0.0, gr_share: float = 0.0,
           gr_hard: float = 4.0, early: bool = True, gap: bool = False,
           stop_share: float = 1.0, observe=None,
           max_sweeps: int = 10_000_000) -> StepCounts:
    """Run the model on a CSRNetwork; returns the flow, the cut and the step counts.
    ``observe(slots, levels)``, if given, is called after every global relabel."""
    g = residual_slots(network)
    n, s, t = g.n, g.s, g.t
    excess = np.zeros(n, np.int64)
    out = np.arange(g.off[s], g.off[s + 1])
    d = g.rcap[out].copy()
    g.rcap[out] = 0
    np.add.at(g.rcap, g.twin[out], d)
    np.add.at(excess, g.head[out], d)
    h = np.zeros(n, np.int64)
    h[s] = n + 1
    run = StepCounts()
    while True:
        h, work, levels, sizes = global_relabel(g, h, excess, early, stop_share)
        run.global_relabels += 1
        run.bfs_levels += levels
        run.levels.append(levels)
        run.frontiers.append(sizes)
        run.rounds.append((levels, int(work.size), int(excess[t]), int(excess[work].sum())))
        if observe is not None:
            observe(g, levels)
        if not work.size:
            break
        since = work_since = 0
        ops0 = run.pushes + run.relabels
        lifts0 = run.relabels
        while work.size:
            run.small_sweeps += work.size <= small
            work = sweep(g, h, excess, work, run, cycles)
            if gap and work.size:
                work = gap_relabel(g, h, work, run)
            run.sweeps += 1
            since += 1
            work_since += work.size
            run.work += work.size
            if run.sweeps >= max_sweeps:
                raise RuntimeError(f"model stopped after {max_sweeps} sweeps")
            stale = since >= int(gr_factor * levels)
            if gr_share > 0:  # wait while the sweeps mostly push (the heights still guide)
                lifts = run.relabels - lifts0
                ops = run.pushes + run.relabels - ops0
                stale = (stale and lifts >= gr_share * ops) or since >= int(gr_hard * levels)
            if since >= gr_max or (since >= gr_min and (
                    stale or
                    (gr_work > 0 and work_since >= int(gr_work * n)))):
                break
    run.flow = int(excess[t])
    run.source_side = h >= n
    return run
