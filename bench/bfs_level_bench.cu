// Microbenchmark of the CSR kernel's BFS levels (bench/bfs_level_bench.py builds it with
// -I solver/cuda). It includes the kernel source itself, so what it times is the solver's own
// global_relabel / expand code, on a residual network the driver uploads.
//
// relabel_bench, launched cooperatively with the solver's grid (every block resident), mode:
//   0: one exact global relabel (a BFS from t over residual arcs, no early stop), frontiers of
//      at most `small` vertices by block 0 alone, larger ones by the whole grid; `tiles`
//      selects the tiled expansion. out: [0] ns, [1] levels, [2] levels by block 0, [3] active
//      vertices found.
//   1: `iters` grid barriers (grid.sync) and nothing else. out[0] ns.
//   2: `iters` block barriers (__syncthreads) in block 0 alone. out[0] ns.
//   3: `iters` times, in block 0: thread 0 reads a global control word (__ldcg), then a block
//      barrier (what the solo level loop paid per level for its found count). out[0] ns.
//   4: `iters` times, in block 0: thread 0 reads %globaltimer, then a block barrier. out[0] ns.
//   5: `iters` steps in block 0: every thread loads off[w] of a pseudo-random vertex w, then a
//      block barrier (one random round trip per step).
//   6: the same with w -> off[w] -> adj[off[w]] -> h[that] (three dependent round trips).
#include "csr_kernels.cu"

extern "C" __global__ void __launch_bounds__(512, 1) relabel_bench(
    const int n, const int s, const int t, const int* __restrict__ off,
    const int* __restrict__ adj, const int* __restrict__ twin, const u32* __restrict__ capsum,
    u32* rcap, i64* excess, int* h, int* hold, int* act, int* front_a, int* front_b, int* ctl,
    i64* out, const int small, const int tiles, const int mode, const int iters) {
    cg::grid_group grid = cg::this_grid();
    __shared__ int s_lists[2 * SOLO_CAP];
    __shared__ int s_cnt[3];
    __shared__ int s_found[3];
    __shared__ int s_tiles[BFS_TILE_SCRATCH];
    __shared__ int s_sink;
    const Solo solo = {s_lists, s_cnt, s_found};
    Ctx c;
    c.n = n; c.s = s; c.t = t;
    c.off = off; c.adj = adj; c.twin = twin; c.capsum = capsum;
    c.rcap = rcap; c.excess = excess; c.h = h; c.stamp = nullptr; c.ctl = ctl;
    c.cycles = 1; c.heavy = 32;
    c.tiles = (tiles & 1) ? s_tiles : nullptr;
    c.spread = (tiles & 2) ? 1 : 0;
    const bool leader = blockIdx.x == 0 && threadIdx.x == 0;
    u64 t0 = 0;
    if (mode == 0) {
        grid.sync();
        if (leader) t0 = now_ns();
        int handoffs = 0, levels = 0, alive = 0;
        i64 solo_levels = 0;
        const int found = global_relabel(c, grid, act, front_a, front_b, hold, small, 0, 0,
                                         solo, handoffs, levels, alive, solo_levels, nullptr, 0);
        if (leader) {
            out[0] = (i64)(now_ns() - t0);
            out[1] = levels;
            out[2] = solo_levels;
            out[3] = found;
        }
    } else if (mode == 1) {
        grid.sync();
        if (leader) t0 = now_ns();
        for (int k = 0; k < iters; ++k) grid.sync();
        if (leader) out[0] = (i64)(now_ns() - t0);
    } else if (blockIdx.x == 0) {
        if (threadIdx.x == 0) { t0 = now_ns(); s_sink = 0; }
        __syncthreads();
        int levels = 0;
        if (mode == 2) {
            for (int k = 0; k < iters; ++k) __syncthreads();
        } else if (mode == 3) {
            for (int k = 0; k < iters; ++k) {
                if (threadIdx.x == 0) s_sink += __ldcg(&ctl[(k & 1) + CTL_SIZE - 2]);
                __syncthreads();
            }
        } else if (mode == 4) {
            for (int k = 0; k < iters; ++k) {
                if (threadIdx.x == 0) s_sink += (int)(now_ns() & 1);
                __syncthreads();
            }
        } else if (mode == 5 || mode == 6) {
            // Per step, every thread of block 0 loads off[w] of a pseudo-random vertex w (mode
            // 5: one round trip per step), or follows w -> off[w] -> adj[.] -> h[.] (mode 6:
            // three dependent round trips per step), then a block barrier.
            int acc = 0;
            for (int k = 0; k < iters; ++k) {
                u32 x = (u32)(k * 512 + threadIdx.x) * 2654435761u;
                x ^= x >> 15;
                const int w = (int)(x % (u32)n);
                const int e = __ldcg(&off[w]);
                if (mode == 6) {
                    const int u = __ldcg(&adj[e > 0 ? e - 1 : 0]);  // a slot < off[n]
                    acc += __ldcg(&h[u]);
                } else {
                    acc += e;
                }
                if (acc == -12345) s_sink = acc;
                __syncthreads();
                ++levels;
            }
        }
        if (threadIdx.x == 0) {
            out[0] = (i64)(now_ns() - t0);
            out[1] = levels;
            out[4] = s_sink;
        }
    }
}
