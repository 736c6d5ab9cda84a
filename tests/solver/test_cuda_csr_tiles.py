"""The CSR core's tiled BFS expansion (``Schedule(bfs_tiles=True)``), the BFS's own block-0
bound (``Schedule(bfs_solo_threshold=...)``) and grid steps with their warps spread over the
blocks (``Schedule(spread_warps=True)``).

The tile arithmetic (prefix sums of the degrees, slot k to thread k % width, the owner found by
an upper-bound search) is checked on a NumPy model (tests/support/tile_model.py): every slot of
every frontier vertex exactly once, and BFS distances equal to a plain BFS's. The GPU kernel is
checked against the CPU backend with the tiled path forced, by block 0 alone and by the grid
(marked `gpu`).
"""

from __future__ import annotations

import numpy as np
import pytest

from graphcut.solver import cut_capacity, min_cut
from graphcut.solver.cuda.csr_build import build_residual_graph
from graphcut.solver.generators import genrmf, washington_rlg
from oracle import random_csr_network
from tile_model import plain_bfs, tile_slots, tiled_bfs
from test_cuda_csr_tail import chain, comb, parallel_paths, star


@pytest.mark.parametrize("width, threads", [(32, 32), (64, 64), (512, 512), (32, 512),
                                            (96, 512)])
def test_tiles_visit_every_slot_once(width, threads):
    rng = np.random.default_rng(width + threads)
    for _ in range(20):
        n = int(rng.integers(1, 3 * width))
        deg = rng.integers(0, 9, n)
        deg[rng.random(n) < 0.3] = 0  # many vertices without slots, runs of them too
        if rng.random() < 0.5:
            deg[int(rng.integers(0, n))] = int(rng.integers(width * 5, width * 11))  # a hub
        offsets = np.concatenate([[0], np.cumsum(deg)])
        front = [int(x) for x in rng.permutation(n)[:int(rng.integers(1, n + 1))]]
        visits = tile_slots(offsets, front, width, threads)
        slots = sorted(e for _, e in visits)
        expected = sorted(e for w in front for e in range(offsets[w], offsets[w + 1]))
        assert slots == expected
        assert all(0 <= tid < threads for tid, _ in visits)


@pytest.mark.parametrize("width", [32, 512])
def test_tiled_bfs_distances_equal_a_plain_bfs(width):
    rng = np.random.default_rng(7 + width)
    networks = [washington_rlg(12, 30, seed=1), genrmf(4, 6, seed=2), star(300), comb(200),
                random_csr_network(rng, 300, 900, source_degree=5, sink_degree=40)]
    for network in networks:
        n, t = network.num_vertices, network.sink
        graph = build_residual_graph(n, network.offsets, network.heads, network.capacities, np)
        # the BFS follows slot e of w back to its head u when the arc u -> w has residual
        residual_in = graph.rcap[graph.twin] > 0
        offsets, heads = graph.offsets, graph.heads
        assert np.array_equal(tiled_bfs(offsets, heads, residual_in, t, n, width),
                              plain_bfs(offsets, heads, residual_in, t, n))


# ------------------------------------------------------------------ GPU (tiled path forced)

def assert_gpu_matches_cpu(network, repeats=2, **options):
    from graphcut.solver.cuda.csr import Schedule, csr_min_cut

    expected = min_cut(network, device="cpu")
    for run in range(repeats):
        result = csr_min_cut(network, schedule=Schedule(**options))
        assert result.flow == expected.flow, f"run {run}: {result.flow} != {expected.flow}"
        assert np.array_equal(result.source_side, expected.source_side), f"run {run}"
        assert cut_capacity(network, result.source_side) == result.flow
    return result


GPU_TILES = [{"bfs_tiles": True},
             {"bfs_tiles": True, "bfs_solo_threshold": 0},        # every level by the grid
             {"bfs_tiles": True, "bfs_solo_threshold": 10**6},    # every level by block 0
             {"bfs_tiles": True, "bfs_solo_threshold": 10**6, "bfs_early_stop": False},
             {"bfs_tiles": True, "solo_threshold": 0, "bfs_solo_threshold": 2048},
             {"bfs_tiles": True, "blocks_per_sm": 2, "bfs_solo_threshold": 0},
             {"bfs_tiles": True, "tail_threshold": 10**6},
             {"bfs_tiles": True, "instrument": True, "bfs_solo_threshold": 4096},
             {"bfs_solo_threshold": 10**6}, {"bfs_solo_threshold": 0},
             {"spread_warps": True}, {"spread_warps": True, "solo_threshold": 0},
             {"spread_warps": True, "bfs_tiles": True, "solo_threshold": 0,
              "bfs_solo_threshold": 0},
             # the defaults before issue 27's change (per-vertex BFS, block 0's levels, no
             # spread), and each of the three new defaults switched off alone
             {"bfs_tiles": False, "spread_warps": False, "bfs_solo_threshold": None},
             {"bfs_tiles": False}, {"spread_warps": False}, {"bfs_solo_threshold": None}]


@pytest.mark.gpu
def test_default_schedule_is_the_measured_one():
    """The defaults chosen on the H100 (bench/RESULTS.md, 2026-11-27): BFS tiles, warps spread
    over the blocks, every BFS level by the grid."""
    from graphcut.solver.cuda.csr import Schedule

    schedule = Schedule()
    assert (schedule.bfs_tiles, schedule.spread_warps, schedule.bfs_threshold) == (True, True, 0)
    assert Schedule(bfs_solo_threshold=None).bfs_threshold == schedule.solo_threshold


@pytest.mark.gpu
@pytest.mark.parametrize("options", GPU_TILES,
                         ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()))
def test_gpu_tiles_match_cpu(options):
    rng = np.random.default_rng(41)
    networks = [genrmf(8, 12, seed=5), washington_rlg(20, 40, seed=6),
                washington_rlg(600, 8, seed=7),  # frontiers wider than a block
                chain(3000, 50, rungs=500), comb(3000), star(5000),
                parallel_paths(300, 20, seed=2),
                parallel_paths(50, 10, seed=3, top=2**31 - 1)]
    networks += [random_csr_network(rng, n, 3 * n, source_degree=8, sink_degree=8,
                                    max_capacity=1000) for n in (5, 50, 400, 3000)]
    for network in networks:
        assert_gpu_matches_cpu(network, **options)
