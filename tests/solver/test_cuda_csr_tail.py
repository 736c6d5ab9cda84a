"""Tail mode of the CSR core (``Schedule(tail_threshold=...)``) and its instrumentation.

The control flow of tail mode (block 0 sweeps the small worklists and runs the global relabels
that come due there itself, early-stopping BFS included, until the active set outgrows the bound
or a relabel finds no active vertex) is checked on a NumPy model (tests/support/tail_model.py)
against scipy's maximum flow on random and adversarial networks, forced through the tail path;
the GPU kernel is checked against the CPU backend with the tail path forced (marked `gpu`).
"""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.solver import CSRNetwork, cut_capacity, min_cut
from graphcut.solver.generators import genrmf, washington_rlg
from oracle import random_csr_network, scipy_min_cut
from tail_model import phase1, preflow_violations


def chain(length: int, capacity: int, *, rungs: int = 0, seed: int = 0) -> CSRNetwork:
    """s -> 1 -> 2 -> ... -> length -> t, each arc ``capacity`` (the last one less, so excess
    must travel back), plus ``rungs`` random backward arcs."""
    rng = np.random.default_rng(seed)
    n = length + 2
    tails = list(range(0, length + 1))
    heads = list(range(1, length + 2))
    caps = [capacity] * (length + 1)
    caps[-1] = max(1, capacity // 3)
    for _ in range(rungs):
        u = int(rng.integers(2, length + 1))
        tails.append(u)
        heads.append(int(rng.integers(1, u)))
        caps.append(int(rng.integers(1, capacity + 1)))
    return CSRNetwork.from_arcs(n, 0, n - 1, np.array(tails), np.array(heads), np.array(caps))


def parallel_paths(paths: int, length: int, *, seed: int = 0, top: int = 100) -> CSRNetwork:
    """``paths`` disjoint s-t paths of ``length`` inner vertices with random capacities (the
    bottleneck somewhere along each), and cross arcs between neighbouring paths."""
    rng = np.random.default_rng(seed)
    ids = 1 + np.arange(paths * length).reshape(paths, length)
    n = paths * length + 2
    s, t = 0, n - 1
    tails = [np.full(paths, s), ids[:, :-1].ravel(), ids[:, -1]]
    heads = [ids[:, 0], ids[:, 1:].ravel(), np.full(paths, t)]
    cross = rng.integers(0, paths - 1, size=paths * length // 2) if paths > 1 else []
    cols = rng.integers(0, length, size=len(cross))
    # each cross arc once: parallel arcs would be summed, above int32 with huge capacities
    pairs = np.unique(np.stack([np.asarray(cross, dtype=np.int64), cols]), axis=1)
    cross, cols = pairs if len(cross) else ([], [])
    tails.append(ids[cross, cols])
    heads.append(ids[np.asarray(cross, dtype=np.int64) + 1, cols])
    tails, heads = np.concatenate(tails), np.concatenate(heads)
    return CSRNetwork.from_arcs(n, s, t, tails, heads, rng.integers(1, top + 1, tails.size))


def labels_valid(r, height) -> bool:
    """h(u) <= h(v) + 1 on every residual arc u -> v out of a vertex other than s."""
    for u in range(r.n):
        if u == r.s:
            continue
        for e in r.out[u]:
            if r.rcap[e] > 0 and height[u] > height[int(r.head[e])] + 1:
                return False
    return True


def assert_model_exact(network, **schedule):
    """The model's flow, preflow and cut against scipy; returns the model's run."""
    seen = []
    run = phase1(network, check=lambda r, h: seen.append(labels_valid(r, h)), **schedule)
    flow, side = scipy_min_cut(network)
    assert run.flow == flow
    assert preflow_violations(network, run.residual) == []
    assert np.array_equal(run.source_side, side)
    assert cut_capacity(network, run.source_side) == flow
    assert all(seen), "a relabel left an invalid labelling"
    return run


TAIL = {"tail": 64, "small": 4, "gr_min": 1, "gr_factor": 0.5}


@pytest.mark.parametrize("early", [True, False], ids=["early-stop", "full-bfs"])
def test_model_tail_random_networks_match_scipy(early):
    rng = np.random.default_rng(27)
    tail_runs = 0
    for _ in range(40):
        n = int(rng.integers(3, 60))
        network = random_csr_network(rng, n, 3 * n, source_degree=int(rng.integers(0, 8)),
                                     sink_degree=int(rng.integers(0, 8)),
                                     max_capacity=int(rng.choice([1, 10, 1000])))
        run = assert_model_exact(network, early=early, **TAIL)
        tail_runs += run.tail_relabels > 0
        assert run.flow == assert_model_exact(network, early=early, tail=0).flow
    assert tail_runs > 20  # the tail path is exercised, not skipped


def test_model_tail_long_chains():
    """Long chains: excess has to climb back over the whole chain (many relabel waves), every
    relabel after the first inside the tail loop."""
    for length, rungs in [(80, 0), (150, 40), (60, 200)]:
        run = assert_model_exact(chain(length, 50, rungs=rungs, seed=length), **TAIL)
        assert run.tail_relabels > 0 and run.ended_in_tail


def comb(length: int, *, seed: int = 0) -> CSRNetwork:
    """A chain 1 -> 2 -> ... -> length -> t fed by s at every vertex: after the source's arcs
    are saturated every chain vertex is active, while every BFS level holds one vertex."""
    rng = np.random.default_rng(seed)
    n = length + 2
    chain_v = np.arange(1, length + 1)
    tails = np.concatenate([np.zeros(length, int), chain_v[:-1], [length]])
    heads = np.concatenate([chain_v, chain_v[1:], [n - 1]])
    caps = np.concatenate([rng.integers(1, 20, length), rng.integers(5, 40, length - 1), [30]])
    return CSRNetwork.from_arcs(n, 0, n - 1, tails, heads, caps)


def star(leaves: int, *, seed: int = 0) -> CSRNetwork:
    """s -> hub -> each leaf -> t, leaves also chained leaf -> next leaf: one active vertex (the
    hub) that hands excess to many at once when it may do many pushes per turn."""
    rng = np.random.default_rng(seed)
    n = leaves + 3
    s, hub, t = 0, 1, n - 1
    leaf = np.arange(2, leaves + 2)
    tails = np.concatenate([[s], np.full(leaves, hub), leaf, leaf[:-1]])
    heads = np.concatenate([[hub], leaf, np.full(leaves, t), leaf[1:]])
    caps = np.concatenate([[10**6], rng.integers(5, 50, leaves), rng.integers(1, 30, leaves),
                           rng.integers(1, 10, leaves - 1)])
    return CSRNetwork.from_arcs(n, s, t, tails, heads, caps)


def test_model_tail_hands_back_to_the_grid_when_the_active_set_grows():
    """A worklist of one vertex (block 0's) that grows past the bound in one sweep (many pushes
    per turn): the tail loop hands back to the grid, and the answer stays exact."""
    for seed in range(4):
        run = assert_model_exact(star(150, seed=seed), tail=16, small=4, gr_min=1,
                                 gr_factor=0.5, cycles=400)
        assert run.handbacks > 0


def test_model_tail_gives_up_relabels_too_wide_for_one_block():
    """Many parallel paths: BFS levels wider than the bound, so the tail relabel is given up
    (heights untouched) and the grid relabels for the rest of the solve; still exact."""
    for seed in range(6):
        run = assert_model_exact(parallel_paths(40, 6, seed=seed), tail=12, small=4, gr_min=1,
                                 gr_factor=0.5)
        assert run.tail_aborts == 1 and run.tail_relabels == 0
        wide = assert_model_exact(parallel_paths(40, 6, seed=seed), tail=64, small=4,
                                  gr_min=1, gr_factor=0.5)
        assert wide.tail_aborts == 0 and wide.tail_relabels > 0


def test_model_tail_huge_capacities():
    """Capacities near 2**31 and flows above 2**32: exact int64 arithmetic on every path."""
    rng = np.random.default_rng(5)
    top = 2**31 - 1
    for _ in range(8):
        n = int(rng.integers(6, 40))
        pairs = np.unique(rng.integers(0, n, 3 * n) * n + rng.integers(0, n, 3 * n))
        pairs = pairs[pairs // n != pairs % n]  # no parallel arcs, no self-loops
        network = CSRNetwork.from_arcs(n, 0, n - 1, pairs // n, pairs % n,
                                       rng.integers(top // 2, top + 1, pairs.size))
        run = assert_model_exact(network, **TAIL)
        assert run.tail_relabels > 0 or run.grid_relabels > 0
    # four saturated paths of capacity 2**31 - 1 with random cross arcs: flow 4 * (2**31 - 1)
    paths = parallel_paths(4, 5, seed=1)
    tails, heads, _ = paths.arcs()
    big = CSRNetwork.from_arcs(paths.num_vertices, paths.source, paths.sink, tails, heads,
                               np.full(tails.size, top))
    assert assert_model_exact(big, **TAIL).flow == 4 * top


def test_model_tail_generator_families():
    for network in (genrmf(3, 4, seed=1), washington_rlg(4, 8, seed=2)):
        run = assert_model_exact(network, **TAIL)
        assert run.tail_relabels > 0


def test_instrument_summary_splits_at_the_tail_bound():
    from graphcut.solver.cuda.csr_instrument import (LOG_COUNT, LOG_START, TAIL_ACTIVE,
                                                     instrument_buffer, instrument_stats)
    buf = instrument_buffer(np)
    cells = buf[:LOG_COUNT].reshape(6, 32, 2)
    cells[0, 12] = (3, 3000)   # 3 grid sweeps of 4096..8191 vertices, 3 us
    cells[1, 2] = (10, 5000)   # 10 block-0 sweeps of 4..7 vertices
    cells[1, 9] = (2, 700)     # 2 block-0 sweeps of 512..1023 vertices: not tail
    cells[2, 5] = (1, 9000)    # 1 tail relabel
    cells[3, 10] = (4, 8000)   # 4 grid BFS levels
    cells[4, 3] = (7, 2100)    # 7 block-0 BFS levels
    buf[LOG_COUNT] = 2
    buf[LOG_START:LOG_START + 4] = [4096 | (0 << 32), 1000, 5 | (1 << 32), 500]
    stats = instrument_stats(buf)
    summary = stats["summary"]
    assert TAIL_ACTIVE == 512
    assert summary["many_sweeps"] == 5 and summary["tail_sweeps"] == 10
    assert summary["many_seconds"] == pytest.approx(3.7e-6)
    assert summary["tail_seconds"] == pytest.approx(5e-6)
    assert summary["tail_relabels"] == 1 and summary["grid_sweeps"] == 3
    assert summary["grid_levels"] == 4 and summary["solo_levels"] == 7
    assert summary["solo_level_seconds"] == pytest.approx(2.1e-6)
    assert stats["log"]["kind"].tolist() == [0, 1]
    assert stats["log"]["size"].tolist() == [4096, 5]


# ----------------------------------------------------------------- GPU (tail path forced)

def assert_gpu_matches_cpu(network, repeats=2, **options):
    from graphcut.solver.cuda.csr import Schedule, csr_min_cut

    expected = min_cut(network, device="cpu")
    for run in range(repeats):
        result = csr_min_cut(network, schedule=Schedule(**options))
        assert result.flow == expected.flow, f"run {run}: {result.flow} != {expected.flow}"
        assert np.array_equal(result.source_side, expected.source_side)
        assert cut_capacity(network, result.source_side) == result.flow
    return result


GPU_TAIL = [{"tail_threshold": 10**6}, {"tail_threshold": 64, "solo_threshold": 0},
            {"tail_threshold": 4096, "relabel_min_sweeps": 1, "relabel_levels_factor": 0.0},
            {"tail_threshold": 10**6, "bfs_early_stop": False},
            {"tail_threshold": 10**6, "instrument": True},
            {"tail_threshold": 16, "instrument": True},  # relabels given up: frontiers > 16
            {"tail_threshold": 64, "cycles": 64}]


@pytest.mark.gpu
@pytest.mark.parametrize("options", GPU_TAIL,
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_gpu_tail_matches_cpu(options):
    rng = np.random.default_rng(31)
    networks = [genrmf(8, 12, seed=5), washington_rlg(20, 40, seed=6),
                chain(3000, 50, rungs=500), comb(3000), star(5000),
                parallel_paths(300, 20, seed=2),
                parallel_paths(50, 10, seed=3, top=2**31 - 1)]
    networks += [random_csr_network(rng, n, 3 * n, source_degree=8, sink_degree=8,
                                    max_capacity=1000) for n in (5, 50, 400, 3000)]
    for network in networks:
        assert_gpu_matches_cpu(network, **options)


@pytest.mark.gpu
def test_gpu_tail_runs_relabels_in_block_and_counts_them():
    result = assert_gpu_matches_cpu(genrmf(10, 20, seed=3), repeats=1,
                                    tail_threshold=10**6, instrument=True)
    stats = result.stats
    trace = stats["trace"]
    summary = stats["instrument"]["summary"]
    assert summary["tail_relabels"] > 0
    assert len(trace["levels"]) == stats["global_relabels"]
    assert int(trace["levels"].sum()) == stats["bfs_levels"]
    assert int(trace["sweeps_after"].sum()) == stats["iterations"]
    assert summary["grid_sweeps"] + summary["solo_sweeps"] == stats["iterations"]
    assert summary["solo_sweeps"] == stats["solo_sweeps"]
    # every BFS level is recorded: the grid's levels (grid-wide or block 0's, level 1 excluded)
    # plus the tail relabels' (block 0, level 1 excluded)
    assert summary["solo_levels"] <= stats["solo_levels"]
    assert summary["grid_levels"] + summary["solo_levels"] <= stats["bfs_levels"]
    assert stats["global_relabels"] > summary["tail_relabels"]  # the first is the grid's
    assert trace["active"][-1] == 0


@pytest.mark.gpu
@pytest.mark.parametrize("limit", [{"max_sweeps": 1}, {"time_limit_seconds": 1e-9}],
                         ids=["sweeps", "seconds"])
def test_gpu_tail_limits_raise(limit):
    from graphcut.solver.cuda.csr import Schedule, SolverStalledError, csr_min_cut

    with pytest.raises(SolverStalledError, match="limit"):
        csr_min_cut(genrmf(10, 20, seed=3), schedule=Schedule(tail_threshold=10**6, **limit))
