"""The vectorised step model (tests/support/step_model.py) against scipy, and HPF's arc orders
(bench/hpf_orders.py).

The step model counts the kernel's dependent steps per relabel schedule (bench/csr_step_counts.py);
whatever the schedule its answer must be a maximum flow with the right cut, or its counts would
describe a wrong run. Random and adversarial networks (long chains, many parallel paths, huge
capacities), every schedule of the counting script.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from graphcut.solver import CSRNetwork, cut_capacity, min_cut
from graphcut.solver.generators import genrmf, washington_rlg
from oracle import random_csr_network, scipy_min_cut
from step_model import distances, global_relabel, incremental_bound, phase1, residual_slots
from test_cuda_csr_tail import chain, comb, parallel_paths

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

SCHEDULES = [{}, {"gr_factor": 0.25}, {"gr_factor": 1e9, "gr_work": 0.5}, {"gr_work": 1.0},
             {"gr_min": 1, "gr_factor": 0.0}, {"early": False}, {"gr_max": 1}, {"cycles": 3},
             {"gr_share": 0.25, "gr_hard": 2.0}, {"gap": True}, {"stop_share": 0.5}]


def assert_exact(network, **schedule):
    run = phase1(network, **schedule)
    flow, side = scipy_min_cut(network)
    assert run.flow == flow
    assert np.array_equal(run.source_side, side)
    assert cut_capacity(network, run.source_side) == flow
    return run


@pytest.mark.parametrize("schedule", SCHEDULES, ids=str)
def test_step_model_random_networks_match_scipy(schedule):
    rng = np.random.default_rng(8)
    for _ in range(25):
        n = int(rng.integers(3, 80))
        network = random_csr_network(rng, n, 3 * n, source_degree=int(rng.integers(0, 8)),
                                     sink_degree=int(rng.integers(0, 8)),
                                     max_capacity=int(rng.choice([1, 10, 1000])))
        assert_exact(network, **schedule)


@pytest.mark.parametrize("schedule", SCHEDULES, ids=str)
def test_step_model_adversarial_networks(schedule):
    """Long chains (excess climbs back over the whole chain), a comb (every BFS level one
    vertex), many parallel paths, and capacities near 2**31 with flows above 2**32."""
    for network in (chain(120, 50, rungs=30, seed=1), comb(60, seed=2),
                    parallel_paths(30, 8, seed=3)):
        run = assert_exact(network, **schedule)
        assert run.global_relabels >= 1 and run.bfs_levels >= run.global_relabels
    top = 2**31 - 1
    paths = parallel_paths(4, 5, seed=1)
    tails, heads, _ = paths.arcs()
    big = CSRNetwork.from_arcs(paths.num_vertices, paths.source, paths.sink, tails, heads,
                               np.full(tails.size, top))
    assert assert_exact(big, **schedule).flow == 4 * top


def test_step_model_generator_families_and_counts():
    """genrmf and RLG: exact; a relabel after fewer sweeps (x0.25) runs more relabels than the
    default, and an exact BFS never has fewer levels per relabel than the early-stopping one's
    first relabel."""
    for network in (genrmf(6, 6, seed=1), washington_rlg(16, 24, seed=2)):
        default = assert_exact(network)
        frequent = assert_exact(network, gr_factor=0.25)
        assert frequent.global_relabels >= default.global_relabels
        exact = assert_exact(network, early=False)
        assert exact.levels[0] >= default.levels[0]
        assert default.bfs_levels == sum(default.levels)
        assert default.predicted_seconds(5.0, 7.0) == pytest.approx(
            (default.bfs_levels * 5 + default.sweeps * 7) * 1e-6)


def test_step_model_relabel_labels_are_valid_lower_bounds():
    """After a global relabel (early stop or not) h(u) <= h(v) + 1 on every residual arc out of
    u != s, and the BFS levels are exact distances where the BFS reached."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        n = int(rng.integers(10, 60))
        network = random_csr_network(rng, n, 4 * n, source_degree=6, sink_degree=6)
        g = residual_slots(network)
        # saturate s as phase1 does, then relabel from zero heights
        out = np.arange(g.off[g.s], g.off[g.s + 1])
        excess = np.zeros(g.n, np.int64)
        np.add.at(excess, g.head[out], g.rcap[out])
        np.add.at(g.rcap, g.twin[out], g.rcap[out].copy())
        g.rcap[out] = 0
        for early in (True, False):
            h0 = np.zeros(g.n, np.int64)
            h, _, _, _ = global_relabel(g, h0, excess, early)
            tail = np.repeat(np.arange(g.n), np.diff(g.off))
            live = (g.rcap > 0) & (tail != g.s)
            assert (h[tail[live]] <= h[g.head[live]] + 1).all()


def test_hpf_orders_are_permutations_of_the_same_arcs():
    import hpf_orders

    network, generated = hpf_orders.build_with_order(lambda: genrmf(4, 5, seed=2))
    assert generated is not None
    assert CSRNetwork.from_arcs(network.num_vertices, network.source, network.sink,
                                *generated).heads.tolist() == network.heads.tolist()
    assert "recording" not in repr(CSRNetwork.__dict__["from_arcs"].__func__)  # restored
    reference = sorted(zip(*(a.tolist() for a in network.arcs())))
    for order in hpf_orders.ORDERS:
        arcs, used = hpf_orders.arcs_in_order(network, order, generated)
        assert used == order
        assert sorted(zip(*(np.asarray(a).tolist() for a in arcs))) == reference
    _, used = hpf_orders.arcs_in_order(network, "generator", None)
    assert used == "csr"
    rlg, rlg_generated = hpf_orders.build_with_order(lambda: washington_rlg(5, 6, seed=1))
    _, used = hpf_orders.arcs_in_order(rlg, "generator", rlg_generated)
    assert used == "csr"  # RLG is generated in CSR order
    with pytest.raises(ValueError, match="unknown arc order"):
        hpf_orders.arcs_in_order(network, "sideways")


def test_hpf_sweep_flows_agree_with_the_cpu_backend():
    pytest.importorskip("thinhpf")
    import hpf_orders

    # RLG is generated in CSR order: its "generator" order is timed once, as "csr"
    for builder, orders in ((lambda: genrmf(5, 6, seed=3), 5),
                            (lambda: washington_rlg(8, 12, seed=4), 4)):
        network, generated = hpf_orders.build_with_order(builder)
        results = hpf_orders.hpf_sweep(network, generated, hpf_orders.ORDERS,
                                       hpf_orders.CONFIGS, 1)
        assert len(results) == orders * len(hpf_orders.CONFIGS)
        assert all(len(v[2]) == 1 for v in results.values())
        seconds, flow, label = hpf_orders.best_hpf(results)
        assert flow == min_cut(network, device="cpu").flow
        assert seconds == min(v[0] for v in results.values())


def test_hpf_generator_order_of_a_dimacs_file_is_the_files(tmp_path):
    import hpf_orders
    from graphcut.solver.dimacs import read_dimacs

    path = tmp_path / "order.max"
    path.write_text("p max 4 5\nn 1 s\nn 4 t\na 3 4 5\na 1 3 2\na 2 4 7\na 1 2 9\na 2 3 1\n")
    network, generated = hpf_orders.build_with_order(lambda: read_dimacs(path))
    assert np.asarray(generated[0]).tolist() == [2, 0, 1, 0, 1]   # the file's order, 0-based
    assert np.asarray(generated[1]).tolist() == [3, 2, 3, 1, 2]
    arcs, used = hpf_orders.arcs_in_order(network, "generator", generated)
    assert used == "generator" and np.asarray(arcs[2]).tolist() == [5, 2, 7, 9, 1]


def test_incremental_bound_is_between_the_relabels_and_the_levels():
    for network in (genrmf(6, 6, seed=1), washington_rlg(16, 24, seed=2), comb(40, seed=3)):
        run = phase1(network)
        levels, bound = incremental_bound(network)
        assert levels == run.bfs_levels
        assert run.global_relabels <= bound <= levels


def test_distances_are_scipy_shortest_paths():
    """distances(): unweighted shortest paths to t over residual arcs (scipy on the reverse
    residual graph), n where t cannot be reached."""
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import shortest_path

    rng = np.random.default_rng(11)
    for _ in range(10):
        network = random_csr_network(rng, 30, 90, source_degree=5, sink_degree=5)
        g = residual_slots(network)
        tail = np.repeat(np.arange(g.n), np.diff(g.off))
        live = (g.rcap > 0) & (tail != g.s)
        reverse = csr_array((np.ones(int(live.sum())), (g.head[live], tail[live])),
                            shape=(g.n, g.n))
        expected = shortest_path(reverse, indices=g.t, unweighted=True)
        expected = np.where(np.isinf(expected), g.n, expected).astype(np.int64)
        assert np.array_equal(distances(g), expected)
