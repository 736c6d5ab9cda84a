"""The GPU push-relabel core on general networks (graphcut.solver.cuda.csr).

Every GPU answer is compared with PyMaxflow's (``min_cut(net, device="cpu")``): the flow value
and the source side (vertices that cannot reach t) must be identical, and the cut's capacity must
equal the flow. Each network is solved several times: a race in the kernels shows as an answer
that varies between runs. The `gpu` tests skip (with the reason) where CuPy or a GPU is missing;
the kernel-build test needs only `nvcc` and runs on CPU-only CI machines.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from graphcut.solver import CSRNetwork, cut_capacity, min_cut
from graphcut.solver.generators import acyclic_dense, genrmf, random_grid, washington_rlg
from oracle import random_csr_network, random_grid_network

KERNELS = Path(__file__).resolve().parents[2] / "solver" / "cuda" / "csr_kernels.cu"
INT32_MAX = 2**31 - 1
REPEATS = 3


def assert_matches_cpu(network: CSRNetwork, repeats: int = REPEATS, **options):
    """Solve on the GPU ``repeats`` times; each answer must equal the CPU backend's."""
    from graphcut.solver.cuda.csr import Schedule, csr_min_cut

    expected = min_cut(network, device="cpu")
    schedule = Schedule(**options) if options else None
    for run in range(repeats):
        result = (min_cut(network, device="cuda") if schedule is None
                  else csr_min_cut(network, schedule=schedule))
        assert result.backend == "cuda"
        assert result.flow == expected.flow, f"run {run}: flow {result.flow} != {expected.flow}"
        assert result.source_side.dtype == bool
        assert result.source_side.shape == (network.num_vertices,)
        differ = np.flatnonzero(result.source_side != expected.source_side)
        assert differ.size == 0, f"run {run}: source side differs at vertices {differ[:10]}"
        assert cut_capacity(network, result.source_side) == result.flow
    return result


def _unique_arcs(rng, n, m, low, high, source=0, sink=None):
    tails, heads = rng.integers(0, n, m), rng.integers(0, n, m)
    key = np.unique(tails * n + heads)
    caps = rng.integers(low, high + 1, key.size)
    return CSRNetwork.from_arcs(n, source, n - 1 if sink is None else sink, key // n, key % n,
                                caps)


def sparse_network(rng):
    n = int(rng.integers(2, 400))
    return random_csr_network(rng, n, 3 * n, source_degree=int(rng.integers(0, 12)),
                              sink_degree=int(rng.integers(0, 12)),
                              max_capacity=int(rng.choice([1, 10, 1000])))


def dense_network(rng):
    n = int(rng.integers(5, 60))
    return _unique_arcs(rng, n, n * n, 0, int(rng.choice([3, 100, 10**6])))


def multigraph_network(rng):
    n = int(rng.integers(3, 40))
    return random_csr_network(rng, n, int(rng.integers(n, 20 * n)), max_capacity=20,
                              source_degree=8, sink_degree=8)


def bipartite_network(rng):
    left, right = int(rng.integers(1, 60)), int(rng.integers(1, 60))
    n = left + right + 2
    s, t = n - 2, n - 1  # terminals last: the source is not vertex 0
    pairs = int(rng.integers(1, 4 * (left + right)))
    u = rng.integers(0, left, pairs)
    v = left + rng.integers(0, right, pairs)
    tails = np.concatenate([np.full(left, s), u, left + np.arange(right)])
    heads = np.concatenate([np.arange(left), v, np.full(right, t)])
    unit = bool(rng.integers(0, 2))
    caps = np.ones(tails.size, dtype=np.int64) if unit else rng.integers(1, 50, tails.size)
    return CSRNetwork.from_arcs(n, s, t, tails, heads, caps)


def layered_network(rng):
    layers, width = int(rng.integers(2, 12)), int(rng.integers(1, 30))
    n = layers * width + 2
    s, t = 0, n - 1
    ids = 1 + np.arange(layers * width).reshape(layers, width)
    forward = int(3 * width)
    tails = [np.full(width, s), ids[-1], ]
    heads = [ids[0], np.full(width, t)]
    for k in range(layers - 1):
        tails.append(rng.choice(ids[k], forward))
        heads.append(rng.choice(ids[k + 1], forward))
    back = int(rng.integers(0, n))  # arcs against the layering
    tails.append(rng.integers(1, n - 1, back))
    heads.append(rng.integers(1, n - 1, back))
    tails, heads = np.concatenate(tails), np.concatenate(heads)
    return CSRNetwork.from_arcs(n, s, t, tails, heads, rng.integers(1, 100, tails.size))


FAMILIES = {"sparse": sparse_network, "dense": dense_network, "multigraph": multigraph_network,
            "bipartite": bipartite_network, "layered": layered_network}


@pytest.mark.gpu
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_random_networks_match_cpu(family):
    rng = np.random.default_rng(sum(map(ord, family)))
    for _ in range(40):
        assert_matches_cpu(FAMILIES[family](rng), repeats=2)


@pytest.mark.gpu
@pytest.mark.parametrize("network", [
    pytest.param(washington_rlg(3, 2), id="rlg-3x2"),
    pytest.param(washington_rlg(16, 32, seed=1), id="rlg-16x32"),
    pytest.param(washington_rlg(64, 128, seed=2), id="rlg-64x128"),
    pytest.param(genrmf(2, 2), id="genrmf-2x2"),
    pytest.param(genrmf(4, 8, seed=1), id="genrmf-4x8"),
    pytest.param(genrmf(16, 16, seed=2), id="genrmf-16x16"),
    pytest.param(genrmf(12, 64, seed=3), id="genrmf-12x64"),
    pytest.param(acyclic_dense(10), id="acyclic-10"),
    pytest.param(acyclic_dense(150, seed=1), id="acyclic-150"),
    pytest.param(random_grid((1, 1)).to_csr(), id="grid-1x1"),
    pytest.param(random_grid((7, 5), seed=1).to_csr(), id="grid-7x5"),
    pytest.param(random_grid((96, 128), seed=2).to_csr(), id="grid-96x128"),
    pytest.param(random_grid((200, 150), seed=3, symmetric=False).to_csr(),
                 id="grid-200x150-asym"),
])
def test_generator_families_match_cpu(network):
    assert_matches_cpu(network)


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["random", "sparse", "zero", "saturated"])
def test_random_grids_match_cpu(kind):
    rng = np.random.default_rng(len(kind))
    for shape in [(1, 9), (9, 1), (12, 17), (40, 33)]:
        assert_matches_cpu(random_grid_network(rng, shape, kind=kind).to_csr())


def _network(n, s, t, arcs):
    tails, heads, caps = (np.array(x, dtype=np.int64) for x in zip(*arcs)) if arcs else (
        np.zeros(0, dtype=np.int64),) * 3
    return CSRNetwork.from_arcs(n, s, t, tails, heads, caps)


EDGE_CASES = {
    "two-vertices-no-arc": _network(2, 0, 1, []),
    "only-s-to-t": _network(2, 0, 1, [(0, 1, 7)]),
    "t-to-s-only": _network(2, 0, 1, [(1, 0, 7)]),
    "s-adjacent-to-t": _network(5, 0, 4, [(0, 4, 5), (0, 1, 3), (1, 4, 2), (1, 2, 9), (2, 4, 9),
                                          (4, 3, 8), (3, 0, 8)]),
    "no-path": _network(6, 0, 5, [(0, 1, 4), (1, 2, 4), (2, 1, 3), (3, 4, 5), (4, 5, 5),
                                  (5, 3, 1), (3, 0, 2)]),
    "zero-capacities": _network(4, 0, 3, [(0, 1, 0), (1, 3, 0), (0, 2, 5), (2, 3, 0)]),
    "isolated-vertices": _network(9, 2, 6, [(2, 4, 3), (4, 6, 2), (4, 8, 1), (8, 6, 5)]),
    "sink-before-source": _network(5, 4, 0, [(4, 1, 6), (1, 2, 5), (2, 0, 4), (1, 0, 1)]),
    "antiparallel-int32-max": _network(4, 0, 3, [(0, 1, INT32_MAX), (1, 2, INT32_MAX),
                                                 (2, 1, INT32_MAX), (2, 3, INT32_MAX),
                                                 (1, 3, INT32_MAX)]),
}


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(EDGE_CASES))
def test_edge_cases_match_cpu(name):
    assert_matches_cpu(EDGE_CASES[name])


@pytest.mark.gpu
def test_flow_above_int32_is_exact():
    k = 7  # k disjoint paths of capacity 2**31 - 1 (minus a little): flow ~ 7 * 2**31
    n = 2 * k + 2
    arcs = []
    for i in range(k):
        a, b = 1 + 2 * i, 2 + 2 * i
        arcs += [(0, a, INT32_MAX), (a, b, INT32_MAX - i), (b, n - 1, INT32_MAX), (b, a, 12)]
    network = _network(n, 0, n - 1, arcs)
    result = assert_matches_cpu(network)
    assert result.flow == sum(INT32_MAX - i for i in range(k)) > 2**32


@pytest.mark.gpu
def test_large_capacities_random():
    rng = np.random.default_rng(31)
    for _ in range(10):
        n = int(rng.integers(3, 40))
        assert_matches_cpu(_unique_arcs(rng, n, 4 * n, INT32_MAX - 10**6, INT32_MAX))


@pytest.mark.gpu
def test_vertex_with_thousands_of_arcs():
    rng = np.random.default_rng(5)
    n = 6002
    hub, s, t = 1, 0, n - 1
    leaves = np.arange(2, n - 1)
    tails = np.concatenate([[s], np.full(leaves.size, hub), leaves, leaves[::3]])
    heads = np.concatenate([[hub], leaves, np.full(leaves.size, t), np.full(leaves[::3].size,
                                                                             hub)])
    caps = rng.integers(1, 100, tails.size)
    caps[0] = 10**7
    assert_matches_cpu(CSRNetwork.from_arcs(n, s, t, tails, heads, caps))
    # the source and the sink themselves with thousands of arcs
    tails = np.concatenate([np.full(leaves.size, s), leaves, leaves[:-1]])
    heads = np.concatenate([leaves, np.full(leaves.size, t), leaves[1:]])
    assert_matches_cpu(CSRNetwork.from_arcs(n, s, t, tails, heads,
                                            rng.integers(1, 100, tails.size)))


@pytest.mark.gpu
@pytest.mark.parametrize("options", [
    {"cycles": 1}, {"cycles": 64}, {"solo_threshold": 0}, {"solo_threshold": 100000},
    {"heavy_degree": 0}, {"blocks_per_sm": 2}, {"blocks_per_sm": 64},
    {"relabel_min_sweeps": 1, "relabel_levels_factor": 0.0},
    {"relabel_min_sweeps": 1000, "relabel_levels_factor": 100.0, "relabel_work_factor": 2.0},
    {"bfs_early_stop": True}, {"bfs_early_stop": True, "solo_threshold": 0},
    {"bfs_early_stop": True, "relabel_min_sweeps": 1, "relabel_levels_factor": 0.0},
    {"solo_threshold": 4096}, {"bfs_early_stop": False},
    {"bfs_early_stop": False, "solo_threshold": 0},
    {"bfs_early_stop": False, "relabel_min_sweeps": 1, "relabel_levels_factor": 0.0},
], ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_schedules_match_cpu(options):
    rng = np.random.default_rng(11)
    networks = [random_grid((64, 80), seed=4, symmetric=False).to_csr(), genrmf(8, 12, seed=5),
                washington_rlg(20, 40, seed=6), sparse_network(rng), bipartite_network(rng)]
    for network in networks:
        assert_matches_cpu(network, repeats=2, **options)


@pytest.mark.gpu
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_random_networks_bfs_variants_match_cpu(family):
    """The early-stopping BFS (the default) and the exact one, and long solo lists (lists past
    the shared-memory part), on every random family."""
    rng = np.random.default_rng(100 + sum(map(ord, family)))
    for _ in range(15):
        network = FAMILIES[family](rng)
        assert_matches_cpu(network, repeats=1, bfs_early_stop=True)
        assert_matches_cpu(network, repeats=1, bfs_early_stop=True, solo_threshold=100000)
        assert_matches_cpu(network, repeats=1, bfs_early_stop=False)


@pytest.mark.gpu
def test_trace_counts_every_relabel():
    from graphcut.solver.cuda.csr import csr_min_cut
    result = csr_min_cut(genrmf(8, 16, seed=2))
    trace = result.stats["trace"]
    assert len(trace["levels"]) == result.stats["global_relabels"]
    assert int(trace["levels"].sum()) == result.stats["bfs_levels"]
    assert int(trace["sweeps_after"].sum()) == result.stats["iterations"]
    assert trace["active"][-1] == 0 and (trace["active"][:-1] > 0).all()


def _bfs_distances(n, t, residual_arcs):
    """Exact distances to t over residual arcs (u, v) (n where t cannot be reached)."""
    from collections import deque
    into = [[] for _ in range(n)]
    for u, v in residual_arcs:
        into[v].append(u)
    dist = [n] * n
    dist[t] = 0
    queue = deque([t])
    while queue:
        w = queue.popleft()
        for u in into[w]:
            if dist[u] == n:
                dist[u] = dist[w] + 1
                queue.append(u)
    return np.array(dist)


def early_stop_relabel(n, s, t, residual_arcs, old_heights, active):
    """NumPy model of csr_kernels.cu's early-stopping global relabel: a level-synchronous BFS
    from t that stops after the level where every active vertex of old height < n is labelled;
    vertices not reached get max(old height, last level + 1). Returns the new heights."""
    dist = _bfs_distances(n, t, residual_arcs)
    target = {v for v in np.flatnonzero(active) if old_heights[v] < n and v not in (s, t)}
    found = {v for v in target if dist[v] < n}
    if not target or found != target:  # never stops early: exact BFS
        heights = dist.copy()
    else:
        last = max([1] + [int(dist[v]) for v in target])
        heights = np.where(dist <= last, dist, np.maximum(old_heights, min(last + 1, n)))
    heights[s] = n + 1
    return heights


def test_early_stop_relabel_keeps_labels_valid():
    """The rule of the early-stopping BFS (model): from any valid labelling, the new one is
    valid (h(u) <= h(v) + 1 on every residual arc u -> v other than out of s), exact on the
    active vertices, and never below the true distance (a lower bound, so the cut of the final,
    complete BFS is unaffected)."""
    rng = np.random.default_rng(7)
    checked_early = 0
    for _ in range(300):
        n = int(rng.integers(3, 40))
        s, t = 0, n - 1
        arcs = {(int(a), int(b)) for a, b in rng.integers(0, n, (int(rng.integers(1, 4 * n)), 2))
                if a != b}
        arcs = sorted(arcs)
        dist = _bfs_distances(n, t, arcs)
        # a valid labelling below the distances: distances lowered by a random amount, made
        # valid by relaxing h(u) <= h(v) + 1
        old = np.maximum(dist - rng.integers(0, 3, n), 0)
        old[t] = 0
        for _ in range(n):
            for u, v in arcs:
                old[u] = min(old[u], old[v] + 1)
        old[s] = n + 1
        active = rng.random(n) < 0.3
        new = early_stop_relabel(n, s, t, arcs, old, active)
        assert all(new[u] <= new[v] + 1 for u, v in arcs if u != s)
        assert (new[np.arange(n) != s] <= np.minimum(dist, n)[np.arange(n) != s]).all()
        exact = [v for v in np.flatnonzero(active) if old[v] < n and v not in (s, t)]
        if exact and all(dist[v] < n for v in exact):
            checked_early += 1
            assert all(new[v] == dist[v] for v in exact)
    assert checked_early > 50


@pytest.mark.gpu
@pytest.mark.parametrize("limit", [{"max_sweeps": 1}, {"time_limit_seconds": 1e-9}],
                         ids=["sweeps", "seconds"])
@pytest.mark.parametrize("steps", [{"solo_threshold": 0}, {"solo_threshold": 10**6}],
                         ids=["grid", "one-block"])
def test_kernel_limits_raise_a_clear_error(limit, steps):
    """The livelock guards are reachable from grid-wide steps and from block 0's solo loops: a
    network that needs many sweeps stops at a tiny limit with SolverStalledError instead of
    hanging."""
    from graphcut.solver.cuda.csr import Schedule, SolverStalledError, csr_min_cut

    network = genrmf(10, 20, seed=3)
    with pytest.raises(SolverStalledError, match="limit"):
        csr_min_cut(network, schedule=Schedule(**steps, **limit))
    assert csr_min_cut(network).flow == min_cut(network, device="cpu").flow


def test_default_limits_grow_with_the_network():
    pytest.importorskip("cupy")
    from graphcut.solver.cuda.csr import Schedule
    small, large = Schedule().limits(100, 400), Schedule().limits(10**7, 4 * 10**7)
    assert small[0] == 4 * 100**2 + 1024 and large[0] > small[0]
    assert 60 <= small[1] < large[1]
    with pytest.raises(ValueError):
        Schedule(max_sweeps=0).limits(10, 10)


@pytest.mark.gpu
def test_cupy_arrays_and_stats():
    import cupy

    network = genrmf(6, 6, seed=7)
    on_gpu = CSRNetwork(network.num_vertices, network.source, network.sink,
                        cupy.asarray(network.offsets), cupy.asarray(network.heads),
                        cupy.asarray(network.capacities))
    result = min_cut(on_gpu, device="cuda")
    expected = min_cut(network, device="cpu")
    assert result.flow == expected.flow
    assert isinstance(result.source_side, cupy.ndarray)  # CuPy in, CuPy out
    assert np.array_equal(result.source_side.get(), expected.source_side)
    seconds = result.stats["seconds"]
    assert set(seconds) >= {"upload", "build", "solve", "cut", "total"}
    assert all(v >= 0 for v in seconds.values())
    assert result.stats["iterations"] >= 1 and result.stats["global_relabels"] >= 1
    assert result.stats["device_name"]


@pytest.mark.gpu
def test_too_large_for_gpu_memory(monkeypatch):
    from graphcut.solver import cuda
    from graphcut.solver.cuda import csr

    network = genrmf(16, 16)  # above AUTO_CPU_BELOW_ARCS: "auto" tries the GPU first
    monkeypatch.setattr(csr, "bytes_needed", lambda n, m: 2**62)
    with pytest.raises(cuda.GPUMemoryError, match="GiB"):
        min_cut(network, device="cuda")
    fallback = min_cut(network, device="auto")
    assert fallback.backend == "cpu"
    assert fallback.flow == min_cut(network, device="cpu").flow


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on the PATH")
@pytest.mark.parametrize("defines", [["-DMIN_BLOCKS=1"], ["-DMIN_BLOCKS=2"]],
                         ids=["1-block", "2-blocks"])
def test_kernels_build_for_sm90(tmp_path, defines):
    """The CUDA source compiles for Hopper (sm_90) with every option the solver uses."""
    done = subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", *defines, "-c", str(KERNELS),
                           "-o", str(tmp_path / "csr.o")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.gpu
def test_direct_cupy_csr_is_canonicalised_on_the_gpu():
    """Three parallel s -> 1 arcs of capacity 5 built directly from CuPy CSR arrays: the GPU
    path must see 15 (it saw 10 when direct construction skipped the canonicalisation)."""
    import cupy
    network = CSRNetwork(3, 0, 2, cupy.asarray([0, 3, 4, 4]), cupy.asarray([1, 1, 1, 2]),
                         cupy.asarray([5, 5, 5, 100]))
    assert isinstance(network.heads, cupy.ndarray)
    assert min_cut(network, device="cuda").flow == 15
    rng = np.random.default_rng(3)
    for _ in range(10):
        n = int(rng.integers(3, 40))
        m = int(rng.integers(1, 200))
        tails = np.sort(rng.integers(0, n, m))
        heads = rng.integers(0, n, m)
        caps = rng.integers(0, 50, m)
        offsets = np.searchsorted(tails, np.arange(n + 1))
        direct = CSRNetwork(n, 0, n - 1, cupy.asarray(offsets), cupy.asarray(heads),
                            cupy.asarray(caps))
        expected = min_cut(CSRNetwork.from_arcs(n, 0, n - 1, tails, heads, caps), device="cpu")
        got = min_cut(direct, device="cuda")
        assert got.flow == expected.flow
        np.testing.assert_array_equal(got.source_side.get(), expected.source_side)


def test_auto_runs_small_csr_networks_on_the_cpu(monkeypatch, caplog):
    """device="auto" with a GPU available: a CSR network under AUTO_CPU_BELOW_ARCS arcs goes to
    the CPU (the measured crossover, bench/RESULTS.md) and the log says why; larger CSR networks
    and grids keep the GPU."""
    import logging

    from graphcut.solver import api

    small = genrmf(4, 4)
    assert small.num_arcs < api.AUTO_CPU_BELOW_ARCS
    assert api.auto_prefers_cpu(small)
    assert not api.auto_prefers_cpu(genrmf(16, 16))  # 19,200 arcs: the GPU was faster
    assert genrmf(16, 16).num_arcs >= api.AUTO_CPU_BELOW_ARCS
    assert not api.auto_prefers_cpu(random_grid((4, 4)))  # grids: the grid solver's own rule
    monkeypatch.setattr(api, "resolve_device",  # as if a GPU were there
                        lambda device: "cpu" if device == "cpu" else "cuda")
    with caplog.at_level(logging.INFO, logger="graphcut.solver"):
        result = min_cut(small, device="auto")
    assert result.backend == "cpu"
    assert "chose cpu for a CSR network of 240 arcs" in caplog.text
    assert result.flow == min_cut(small, device="cpu").flow


@pytest.mark.gpu
def test_auto_runs_larger_csr_networks_on_the_gpu():
    network = genrmf(16, 16, seed=1)
    result = min_cut(network, device="auto")
    assert result.backend == "cuda"
    assert result.flow == min_cut(network, device="cpu").flow
    assert min_cut(genrmf(4, 4), device="auto").backend == "cpu"
