// Push-relabel phase I for general flow networks (graphcut.solver.cuda.csr).
//
// Residual network: a paired-arc CSR. Every unordered pair {u, v} joined by an arc in either
// direction has one slot in u's list and one in v's; `twin[e]` is the other slot of the pair and
// `rcap[e]` the residual capacity of the slot's direction (uint32: a pair's two residuals sum to
// c(u,v) + c(v,u) <= 2**32 - 2). Antiparallel arcs share their pair, so a 4-connected grid has 4
// neighbour slots per pixel, not 8 as with separate forward and reverse lists.
//
// Heights: t = 0, s = n + 1 (never visited by the BFS, never pushed to), a vertex that cannot
// reach t has n. A vertex is active when excess > 0 and height < n. Excess is int64; t's excess
// is not tracked (the flow is read off t's slots at the end), s's is not either.
//
// One persistent cooperative kernel runs the whole phase: global relabel (a BFS from t over
// residual arcs, level-synchronous), then sweeps over the active worklist, each vertex
// discharged asynchronously (lock-free, Hong 2008: push to the lowest residual neighbour or
// relabel to lowest + 1) for up to `cycles` operations, until the worklist is empty or the
// relabel policy asks for a new BFS. The run ends when a BFS finds no active vertex; the heights
// of that last BFS give the cut (height >= n: cannot reach t).
//
// When a worklist or a BFS frontier is small, block 0 alone runs sweeps / levels with block
// barriers (cheap) instead of grid barriers, until it grows again; its lists and their counters
// then live in shared memory (the first SOLO_CAP entries; the rest, if any, in the global list).
//
// Early-stopping BFS (`early` != 0): the BFS stops after the level at which it has found every
// active vertex with height < n (counted before it starts). The vertices it has not reached
// (distance > L, the last level) get max(old height, L + 1): still a valid labelling when the old
// one was valid. The BFS that finds no active vertex always runs to the end, so the final heights
// (and the cut) are exact.

// Grid-wide barriers: cooperative groups' grid.sync(). The kernel is only ever launched
// cooperatively (cudaLaunchCooperativeKernel), which guarantees that all its blocks are resident
// at once; a grid barrier without that guarantee can deadlock.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

typedef unsigned int u32;
typedef long long i64;
typedef unsigned long long u64;

// Layout of the int control array `ctl` (zeroed by the host before the launch).
// Counter rings: grid-wide step j appends to ring slot j % 3 and clears slot (j + 1) % 3, so a
// slot is cleared two barriers after it was read. Block 0's solo loops use a ring of their own:
// a thread of another block may still be reading the grid ring's last slot while block 0 runs
// many solo steps.
#define CTL_PR 0        // 3 ints: ring of worklist sizes (grid-wide sweeps)
#define CTL_BFS 3       // 3 ints: ring of BFS frontier sizes (grid-wide levels)
#define CTL_ACT 6       // active vertices found by the current BFS
#define CTL_ALIVE 7     // 2 ints: active vertices with height < n before BFS k (slot k % 2)
#define CTL_ACTR 9      // 3 ints: ring of active vertices found per grid-wide BFS level (the
                        // stop test sums them: CTL_ACT itself may already grow with the next
                        // level's appends while a slow block still reads it)
#define CTL_SOLO 12     // 2 x 16 ints: state handed from block 0's solo loop to the whole grid
                        // (handoff j uses CTL_SOLO + 16 * (j % 2): a slow thread may still be
                        // reading handoff j - 1 while block 0 writes handoff j)
#define HAND 16         // ints per handoff
#define CTL_STOP 44     // 2 ints: set by the leader when the time limit has passed; grid sweep
                        // j uses CTL_STOP + j % 2, written before that step's barrier and read
                        // after it, so every thread sees the same value
#define CTL_GSTOP 46    // 2 ints: the same for the steps of block 0's solo loops
#define CTL_SIZE 48

// Per global relabel k < TRACE_CAP, `trace[k * TRACE_FIELDS + f]`: BFS levels, active vertices
// found, active vertices with height < n before it, sweeps after it, ns in the BFS, ns in the
// sweeps after it.
#define TRACE_CAP 4096
#define TRACE_FIELDS 6

#define SOLO_CAP 2048   // list entries block 0 keeps in shared memory in its solo loops

// Layout of the int64 output array `out`.
#define OUT_STATUS 0    // 0 = done, 1 = sweep limit reached, 2 = time limit reached
#define OUT_SWEEPS 1
#define OUT_GRS 2
#define OUT_LEVELS 3
#define OUT_PUSHES 4
#define OUT_RELABELS 5
#define OUT_NS_GR 6
#define OUT_NS_PR 7
#define OUT_WORK 8      // sum of worklist sizes over all sweeps
#define OUT_SOLO_SWEEPS 9
#define OUT_SOLO_LEVELS 10
#define OUT_SIZE 16

#define FULL_MASK 0xffffffffu

// Instrumentation (`instr` != nullptr; off by default): written by the leader (thread 0 of block
// 0) alone. instr[(kind * 32 + b) * 2 + {0, 1}] = steps of this kind whose list held
// [2^b, 2^(b+1)) vertices (b = 0 also for 0) and their nanoseconds; kinds: INSTR_GRID = a sweep
// by the whole grid, INSTR_SOLO = a sweep by block 0 alone, INSTR_TAIL_GR = a global relabel by
// block 0 alone (tail mode; the list size is the active vertices it found), INSTR_GRID_LEVEL /
// INSTR_SOLO_LEVEL = a level of the grid's global relabel run by the whole grid / by block 0
// alone (the list: the frontier it expands), INSTR_TAIL_ABORT = a tail relabel given up (list
// size 0). instr[INSTR_LOGN]
// counts the steps; the first `instr_cap` of them are logged at instr[INSTR_LOG + 2 k] =
// list size | kind << 32 and instr[INSTR_LOG + 2 k + 1] = nanoseconds.
#define INSTR_GRID 0
#define INSTR_SOLO 1
#define INSTR_TAIL_GR 2
#define INSTR_GRID_LEVEL 3
#define INSTR_SOLO_LEVEL 4
#define INSTR_TAIL_ABORT 5  // a tail relabel given up (a frontier wider than the tail bound)
#define INSTR_KINDS 6
#define INSTR_LOGN (INSTR_KINDS * 64)
#define INSTR_LOG (INSTR_LOGN + 4)

__device__ __forceinline__ void record(i64* instr, int cap, int kind, int size, u64 ns) {
    const int bucket = size > 1 ? 31 - __clz(size) : 0;
    i64* cell = instr + (kind * 32 + bucket) * 2;
    cell[0] += 1;
    cell[1] += (i64)ns;
    const i64 k = instr[INSTR_LOGN];
    if (k < cap) {
        instr[INSTR_LOG + 2 * k] = (i64)size | ((i64)kind << 32);
        instr[INSTR_LOG + 2 * k + 1] = (i64)ns;
    }
    instr[INSTR_LOGN] = k + 1;
}

struct Ctx {
    int n, s, t;
    const int* __restrict__ off;
    const int* __restrict__ adj;
    const int* __restrict__ twin;
    const u32* __restrict__ capsum;  // rcap[e] + rcap[twin[e]], constant
    u32* rcap;
    i64* excess;
    int* h;
    int* stamp;
    int* ctl;
    int cycles;
    int heavy;
    int* tiles;  // BFS_TILE_SCRATCH shared ints of this block: the BFS expands frontiers by
                 // tiles (expand_tiles); nullptr: one frontier vertex per lane (expand)
    int spread;  // grid-wide steps number their warps across the blocks first (grid_warp)
};

// The number of the calling warp in a grid-wide step. Warps take 32 list entries each, in warp
// order, so a list of k entries is handled by warps 0 .. k/32: numbered block by block (spread
// = 0), a list of 2,000 vertices lands on 4 blocks (4 multiprocessors, each with 16 warps whose
// lanes all load from scattered addresses) while the others wait at the barrier; numbered
// across the blocks first (spread != 0), on 63 blocks of one warp each.
__device__ __forceinline__ int grid_warp(const Ctx& c) {
    return c.spread ? (int)((threadIdx.x >> 5) * gridDim.x + blockIdx.x)
                    : (int)((blockIdx.x * blockDim.x + threadIdx.x) >> 5);
}

__device__ __forceinline__ u64 now_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ i64 min64(i64 a, i64 b) { return a < b ? a : b; }
__device__ __forceinline__ u64 umin64(u64 a, u64 b) { return a < b ? a : b; }

// A list of vertices: entries [0, SOLO_CAP) in shared memory `sm` when it is not null (block 0's
// solo loops), the rest (or all, when `sm` is null) in the global array `g`; `cnt` is its
// counter (shared or global); `tally`, when not null, is raised by every append too.
struct List {
    int* g;
    int* sm;
    int* cnt;
    int* tally;
};

__device__ __forceinline__ int list_get(const List& l, int i) {
    return (l.sm != nullptr && i < SOLO_CAP) ? l.sm[i] : __ldcg(&l.g[i]);
}

// Append v to a list; the lanes of a warp that append together share one atomic.
__device__ __forceinline__ void append(const List& l, int v) {
    const unsigned int mask = __activemask();
    const int lane = threadIdx.x & 31;
    const int first = __ffs(mask) - 1;
    int base = 0;
    if (lane == first) {
        base = atomicAdd(l.cnt, __popc(mask));
        if (l.tally != nullptr) atomicAdd(l.tally, __popc(mask));
    }
    base = __shfl_sync(mask, base, first);
    const int i = base + __popc(mask & ((1u << lane) - 1u));
    if (l.sm != nullptr && i < SOLO_CAP) l.sm[i] = v; else l.g[i] = v;
}

// Put v on the next worklist unless it is already there (stamp = tag of that list). A vertex is
// enqueued when it was not before, so the atomic is issued without a load first (one round trip
// fewer on the usual path).
__device__ __forceinline__ void enqueue(const Ctx& c, const List& next, int v, int tag) {
    if (atomicMax(&c.stamp[v], tag) < tag) append(next, v);
}

// Push d units along slot e (twin slot tw) from v to w. Only v lowers rcap[e] and excess[v];
// others only raise them, so v may keep its own excess in a register (a lower bound). w joins
// the next worklist when it had no excess: a vertex with excess is on the current worklist
// (and re-reads its excess when it finishes) or already on the next one. The atomics whose
// results are unused compile to fire-and-forget reductions.
__device__ __forceinline__ void push(const Ctx& c, int v, int e, int tw, int w, i64 d,
                                     const List& next, int tag) {
    atomicSub(&c.rcap[e], (u32)d);
    atomicAdd(&c.rcap[tw], (u32)d);
    atomicAdd((u64*)&c.excess[v], (u64)(-d));
    if (w != c.t) {
        const u64 old = atomicAdd((u64*)&c.excess[w], (u64)d);
        if (old == 0 && w != c.s) enqueue(c, next, w, tag);
    }
}

// A vertex that ends its turn with excess left (or received some meanwhile) and height < n
// goes on the next worklist.
__device__ __forceinline__ void finish(const Ctx& c, int v, i64 ex, int hv, const List& next,
                                       int tag) {
    if (hv >= c.n) return;
    if (ex <= 0) ex = __ldcg(&c.excess[v]);
    if (ex > 0) enqueue(c, next, v, tag);
}

#define SCAN_GROUP 4  // slots whose loads are issued together (independent round trips)

// One thread discharges a low-degree vertex v for up to c.cycles push/relabel operations.
__device__ __forceinline__ void discharge_thread(const Ctx& c, int v, const List& next, int tag,
                                                 i64& pushes, i64& relabels) {
    const int n = c.n;
    i64 ex = __ldcg(&c.excess[v]);
    int hv = __ldcg(&c.h[v]);
    const int b = __ldg(&c.off[v]), en = __ldg(&c.off[v + 1]);
    if (ex <= 0 || hv >= n) return;
    for (int cyc = 0; cyc < c.cycles; ++cyc) {
        int best_h = 0x7fffffff, best_e = -1, best_tw = 0, best_w = 0;
        u32 best_r = 0;
        for (int e0 = b; e0 < en; e0 += SCAN_GROUP) {
            u32 r[SCAN_GROUP];
            int w[SCAN_GROUP], tw[SCAN_GROUP], hw[SCAN_GROUP];
#pragma unroll
            for (int k = 0; k < SCAN_GROUP; ++k) {
                const bool in = e0 + k < en;
                r[k] = in ? __ldcg(&c.rcap[e0 + k]) : 0u;
                w[k] = in ? __ldg(&c.adj[e0 + k]) : 0;
                tw[k] = in ? __ldg(&c.twin[e0 + k]) : 0;
            }
#pragma unroll
            for (int k = 0; k < SCAN_GROUP; ++k)
                hw[k] = r[k] > 0 ? __ldcg(&c.h[w[k]]) : 0x7fffffff;
#pragma unroll
            for (int k = 0; k < SCAN_GROUP; ++k) {
                if (hw[k] < best_h) {
                    best_h = hw[k]; best_e = e0 + k; best_r = r[k]; best_tw = tw[k];
                    best_w = w[k];
                }
            }
        }
        if (best_e < 0) {  // no residual arc out of v: it cannot reach t
            hv = n;
            c.h[v] = n;
            ++relabels;
            break;
        }
        if (hv > best_h) {
            const i64 d = min64(ex, (i64)best_r);
            push(c, v, best_e, best_tw, best_w, d, next, tag);
            ex -= d;
            ++pushes;
            if (ex <= 0) break;
        } else {
            hv = best_h + 1 < n ? best_h + 1 : n;
            c.h[v] = hv;
            ++relabels;
            if (hv >= n) break;
        }
    }
    finish(c, v, ex, hv, next, tag);
}

// A whole warp discharges a high-degree vertex v (all 32 lanes call this with the same v).
__device__ __forceinline__ void discharge_warp(const Ctx& c, int v, const List& next, int tag,
                                               i64& pushes, i64& relabels) {
    const int n = c.n;
    const int lane = threadIdx.x & 31;
    i64 ex = 0;
    int hv = 0;
    if (lane == 0) {
        ex = __ldcg(&c.excess[v]);
        hv = __ldcg(&c.h[v]);
    }
    ex = __shfl_sync(FULL_MASK, ex, 0);
    hv = __shfl_sync(FULL_MASK, hv, 0);
    if (ex <= 0 || hv >= n) return;
    const int b = __ldg(&c.off[v]), en = __ldg(&c.off[v + 1]);
    for (int cyc = 0; cyc < c.cycles; ++cyc) {
        u64 best = ~0ull;
        for (int e = b + lane; e < en; e += 32) {
            if (__ldcg(&c.rcap[e]) > 0) {
                u64 key = ((u64)(u32)__ldcg(&c.h[__ldg(&c.adj[e])]) << 32) | (u32)e;
                best = umin64(best, key);
            }
        }
        for (int o = 16; o > 0; o >>= 1) best = umin64(best, __shfl_xor_sync(FULL_MASK, best, o));
        if (best == ~0ull) {
            hv = n;
            if (lane == 0) { c.h[v] = n; ++relabels; }
            break;
        }
        const int best_h = (int)(best >> 32);
        const int best_e = (int)(u32)(best & 0xffffffffu);
        if (hv > best_h) {
            if (lane == 0) {
                // Only v lowers this slot's residual, so it is at least what the scan saw (> 0).
                const i64 d = min64(ex, (i64)__ldcg(&c.rcap[best_e]));
                push(c, v, best_e, __ldg(&c.twin[best_e]), __ldg(&c.adj[best_e]), d, next,
                     tag);
                ex -= d;
                ++pushes;
            }
            ex = __shfl_sync(FULL_MASK, ex, 0);
            if (ex <= 0) break;
        } else {
            hv = best_h + 1 < n ? best_h + 1 : n;
            if (lane == 0) { c.h[v] = hv; ++relabels; }
            if (hv >= n) break;
        }
    }
    if (lane == 0) finish(c, v, ex, hv, next, tag);
}

// One sweep over cur[0..count) by the warps first_warp, first_warp + warp_stride, ...
// Each lane takes one vertex; high-degree vertices are then taken by the whole warp in turn.
__device__ __forceinline__ void sweep(const Ctx& c, const List& cur, int count, const List& next,
        int tag, int first_warp, int warp_stride, i64& pushes, i64& relabels) {
    const int lane = threadIdx.x & 31;
    for (int base = first_warp * 32; base < count; base += warp_stride * 32) {
        const int i = base + lane;
        const int v = i < count ? list_get(cur, i) : -1;
        const bool big = v >= 0 && __ldg(&c.off[v + 1]) - __ldg(&c.off[v]) > c.heavy;
        if (v >= 0 && !big) discharge_thread(c, v, next, tag, pushes, relabels);
        u32 mask = __ballot_sync(FULL_MASK, big);
        while (mask) {
            const int src = __ffs(mask) - 1;
            mask &= mask - 1;
            const int u = __shfl_sync(FULL_MASK, v, src);
            discharge_warp(c, u, next, tag, pushes, relabels);
        }
    }
}

// BFS step over slot e of frontier vertex w: its head u joins level `level` when the arc u -> w
// has residual capacity (capsum[e] - rcap[e]: no twin lookup) and u is not yet labelled.
__device__ __forceinline__ void visit(const Ctx& c, int e, int level, const List& next,
                                      const List& act) {
    const int u = __ldg(&c.adj[e]);
    const u32 r = __ldg(&c.capsum[e]) - __ldcg(&c.rcap[e]);
    if (r == 0 || __ldcg(&c.h[u]) != c.n) return;
    if (atomicCAS(&c.h[u], c.n, level) != c.n) return;
    append(next, u);
    if (__ldcg(&c.excess[u]) > 0) append(act, u);
}

__device__ __forceinline__ void expand(const Ctx& c, const List& front, int count, int level,
        const List& next, const List& act, int first_warp, int warp_stride) {
    const int lane = threadIdx.x & 31;
    for (int base = first_warp * 32; base < count; base += warp_stride * 32) {
        const int i = base + lane;
        const int w = i < count ? list_get(front, i) : -1;
        int b = 0, en = 0;
        if (w >= 0) { b = __ldg(&c.off[w]); en = __ldg(&c.off[w + 1]); }
        const bool big = en - b > c.heavy;
        if (!big) {
            for (int e0 = b; e0 < en; e0 += SCAN_GROUP) {
                int u[SCAN_GROUP], hu[SCAN_GROUP];
                u32 r[SCAN_GROUP];
                i64 ex[SCAN_GROUP];
#pragma unroll
                for (int k = 0; k < SCAN_GROUP; ++k) {
                    const bool in = e0 + k < en;
                    u[k] = in ? __ldg(&c.adj[e0 + k]) : 0;
                    r[k] = in ? __ldg(&c.capsum[e0 + k]) - __ldcg(&c.rcap[e0 + k]) : 0u;
                    hu[k] = -1;
                }
#pragma unroll
                for (int k = 0; k < SCAN_GROUP; ++k) {
                    if (r[k] > 0) {
                        hu[k] = __ldcg(&c.h[u[k]]);
                        ex[k] = __ldcg(&c.excess[u[k]]);  // no pushes during a BFS
                    }
                }
#pragma unroll
                for (int k = 0; k < SCAN_GROUP; ++k) {
                    if (hu[k] == c.n && atomicCAS(&c.h[u[k]], c.n, level) == c.n) {
                        append(next, u[k]);
                        if (ex[k] > 0) append(act, u[k]);
                    }
                }
            }
        }
        u32 mask = __ballot_sync(FULL_MASK, big);
        while (mask) {
            const int src = __ffs(mask) - 1;
            mask &= mask - 1;
            const int bb = __shfl_sync(FULL_MASK, b, src);
            const int ee = __shfl_sync(FULL_MASK, en, src);
            for (int e = bb + lane; e < ee; e += 32) visit(c, e, level, next, act);
        }
    }
}

#define TILE_GROUP 4  // slots a thread of expand_tiles takes at once (loads issued together)
#define BFS_TILE_SCRATCH (2 * 512 + 33)  // shared ints expand_tiles needs (512 threads a block)

// Tiled BFS expansion (Schedule.bfs_tiles): a block takes `width` (<= blockDim.x) frontier
// vertices at a time (tiles first_tile, first_tile + tile_stride, ...; every thread of the block
// must call this), lists their slots as one sequence (an exclusive prefix sum of the degrees in
// shared memory) and gives each thread TILE_GROUP slots of it at once, slot k of the tile to
// thread k % blockDim.x. Neighbouring threads read neighbouring slots of the same vertex
// (coalesced), a vertex of any degree is spread over the whole block, and a level costs about four
// dependent memory round trips (offsets, slots, heads' heights, the claim) whatever the
// degrees, where one lane per vertex walks its slots SCAN_GROUP at a time. The same slots are
// visited with the same test as expand, so the BFS labels are the same.
__device__ __forceinline__ void expand_tiles(const Ctx& c, const List& front, int count,
        int level, const List& next, const List& act, int first_tile, int tile_stride,
        int width) {
    int* s_excl = c.tiles;                   // [blockDim.x] slots of the tile before vertex i
    int* s_first = c.tiles + blockDim.x;     // [blockDim.x] first slot of vertex i
    int* s_warp = c.tiles + 2 * blockDim.x;  // [33] warp totals -> warp offsets; [32] the sum
    const int tid = threadIdx.x, lane = tid & 31, wid = tid >> 5;
    const int nw = blockDim.x >> 5;
    const int threads = blockDim.x;
    for (int base = first_tile * width; base < count; base += tile_stride * width) {
        const int i = base + tid;
        int b = 0, deg = 0;
        if (tid < width && i < count) {
            const int w = list_get(front, i);
            b = __ldg(&c.off[w]);
            deg = __ldg(&c.off[w + 1]) - b;
        }
        int incl = deg;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const int y = __shfl_up_sync(FULL_MASK, incl, o);
            if (lane >= o) incl += y;
        }
        if (lane == 31) s_warp[wid] = incl;
        __syncthreads();
        if (wid == 0) {
            const int x = lane < nw ? s_warp[lane] : 0;
            int inc = x;
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) {
                const int y = __shfl_up_sync(FULL_MASK, inc, o);
                if (lane >= o) inc += y;
            }
            if (lane < nw) s_warp[lane] = inc - x;
            if (lane == 31) s_warp[32] = inc;
        }
        __syncthreads();
        s_excl[tid] = s_warp[wid] + incl - deg;
        s_first[tid] = b;
        __syncthreads();
        const u32 total = (u32)s_warp[32];  // < 2**31: the slots fit int32 indices
        const int nv = count - base < width ? count - base : width;
        for (u32 k0 = 0; k0 < total; k0 += (u32)(threads * TILE_GROUP)) {
            int e[TILE_GROUP], u[TILE_GROUP], hu[TILE_GROUP];
            u32 r[TILE_GROUP];
            i64 ex[TILE_GROUP];
#pragma unroll
            for (int k = 0; k < TILE_GROUP; ++k) {
                const u32 idx = k0 + (u32)(k * threads + tid);
                e[k] = -1;
                if (idx < total) {
                    // The last vertex whose slots start at or before idx (it has slots: a
                    // vertex of degree 0 shares its start with the next one).
                    int lo = 0, hi = nv;
                    while (lo < hi) {
                        const int mid = (lo + hi) >> 1;
                        if ((u32)s_excl[mid] <= idx) lo = mid + 1; else hi = mid;
                    }
                    e[k] = s_first[lo - 1] + (int)(idx - (u32)s_excl[lo - 1]);
                }
            }
#pragma unroll
            for (int k = 0; k < TILE_GROUP; ++k) {
                u[k] = e[k] >= 0 ? __ldg(&c.adj[e[k]]) : 0;
                r[k] = e[k] >= 0 ? __ldg(&c.capsum[e[k]]) - __ldcg(&c.rcap[e[k]]) : 0u;
                hu[k] = -1;
            }
#pragma unroll
            for (int k = 0; k < TILE_GROUP; ++k) {
                if (r[k] > 0) {
                    hu[k] = __ldcg(&c.h[u[k]]);
                    ex[k] = __ldcg(&c.excess[u[k]]);  // no pushes during a BFS
                }
            }
#pragma unroll
            for (int k = 0; k < TILE_GROUP; ++k) {
                if (hu[k] == c.n && atomicCAS(&c.h[u[k]], c.n, level) == c.n) {
                    append(next, u[k]);
                    if (ex[k] > 0) append(act, u[k]);
                }
            }
        }
        __syncthreads();  // the next tile rewrites the scratch
    }
}

// Expand one BFS level: by block 0 alone (`block_only`, every thread of block 0 calls this) or
// by the whole grid (every thread of every block calls this).
__device__ __forceinline__ void expand_level(const Ctx& c, const List& front, int count,
        int level, const List& next, const List& act, bool block_only) {
    if (c.tiles != nullptr) {
        // By the grid: tiles narrow enough that every block gets one when the frontier is
        // smaller than the grid's threads (a multiple of 32 vertices, at most blockDim.x).
        int width = blockDim.x;
        if (!block_only) {
            const int per_block = (count + gridDim.x - 1) / gridDim.x;
            const int rounded = (per_block + 31) & ~31;
            width = rounded < width ? rounded : width;
        }
        expand_tiles(c, front, count, level, next, act, block_only ? 0 : blockIdx.x,
                     block_only ? 1 : gridDim.x, width);
    } else if (block_only) {
        expand(c, front, count, level, next, act, threadIdx.x >> 5, blockDim.x >> 5);
    } else {
        expand(c, front, count, level, next, act, grid_warp(c), (gridDim.x * blockDim.x) >> 5);
    }
}

// Block 0's state for its solo loops: two lists of SOLO_CAP entries and a ring of 3 counters in
// shared memory.
struct Solo {
    int* sm;
    int* cnt;
    int* found;  // a ring of 3: active vertices found per solo BFS level (as cnt)
};

// Copy a solo list's shared entries [0, min(count, SOLO_CAP)) to its global array (block 0,
// before it hands the list to the grid).
__device__ __forceinline__ void flush(const int* sm, int* g, int count) {
    const int k = count < SOLO_CAP ? count : SOLO_CAP;
    for (int i = threadIdx.x; i < k; i += blockDim.x) g[i] = sm[i];
}

// Copy the first min(count, SOLO_CAP) entries of a global list into shared memory (block 0, when
// its solo loop starts; the caller synchronises the block).
__device__ __forceinline__ void load_solo(int* sm, const int* g, int count) {
    const int k = count < SOLO_CAP ? count : SOLO_CAP;
    for (int i = threadIdx.x; i < k; i += blockDim.x) sm[i] = __ldcg(&g[i]);
}

#define GRID_SYNC() grid.sync()

// Exact global relabel (early-stopping when `early`, see the top of the file). Returns the
// number of active vertices written to act (the same value in every thread); `levels` gets the
// last BFS level and `alive` the active vertices with height < n before the BFS.
template <class Grid>
__device__ __forceinline__ int global_relabel(const Ctx& c, Grid& grid, int* act, int* front_a,
        int* front_b, int* hold, int small, int early, int round, const Solo& solo,
        int& handoffs, int& levels, int& alive, i64& solo_levels, i64* instr, int instr_cap) {
    const int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    const int nthreads = gridDim.x * blockDim.x;
    const int n = c.n;
    int* ctl = c.ctl;
    int* alive_slot = &ctl[CTL_ALIVE + (round & 1)];
    if (gtid == 0) {
        ctl[CTL_BFS + 0] = 0;
        ctl[CTL_BFS + 1] = 0;
        ctl[CTL_BFS + 2] = 0;
        ctl[CTL_ACT] = 0;
        ctl[CTL_ACTR + 0] = 0;
        ctl[CTL_ACTR + 1] = 0;
        ctl[CTL_ACTR + 2] = 0;
        ctl[CTL_ALIVE + ((round + 1) & 1)] = 0;  // read in the previous round, many barriers ago
    }
    int mine = 0;
    for (int v = gtid; v < n; v += nthreads) {
        const int hv = __ldcg(&c.h[v]);
        if (early) {
            hold[v] = hv;
            if (hv < n && v != c.s && v != c.t && __ldcg(&c.excess[v]) > 0) ++mine;
        }
        c.h[v] = v == c.t ? 0 : (v == c.s ? n + 1 : n);
    }
    if (early) {
        for (int o = 16; o > 0; o >>= 1) mine += __shfl_xor_sync(FULL_MASK, mine, o);
        if ((threadIdx.x & 31) == 0 && mine > 0) atomicAdd(alive_slot, mine);
    }
    GRID_SYNC();
    // Stop once every active vertex of height < n is found (never when there is none: that
    // BFS must run to the end, its heights give the cut).
    const int target = early ? __ldcg(alive_slot) : 0;
    // Level 1 (grid step 0): the slots of t, spread over the whole grid (t may have millions of
    // arcs).
    const int tb = __ldg(&c.off[c.t]), te = __ldg(&c.off[c.t + 1]);
    {
        const List first = {front_a, nullptr, &ctl[CTL_BFS + 0]};
        const List act0 = {act, nullptr, &ctl[CTL_ACT], &ctl[CTL_ACTR + 0]};
        for (int e = tb + gtid; e < te; e += nthreads) visit(c, e, 1, first, act0);
    }
    GRID_SYNC();
    int count = __ldcg(&ctl[CTL_BFS + 0]);
    int level = 1, step = 1;
    int found = __ldcg(&ctl[CTL_ACTR + 0]);  // active vertices found so far (all threads agree)
    bool stopped = target > 0 && found >= target;
    int* fc = front_a;
    int* fn = front_b;
    while (count > 0 && !stopped) {
        if (count <= small) {
            // Block 0 runs levels alone while the frontier stays small.
            if (blockIdx.x == 0) {
                int lv = level, cnt = count, steps = 0, stop = 0, got = found;
                int* a = fc;
                int* b = fn;
                int* sa = solo.sm;
                int* sb = solo.sm + SOLO_CAP;
                load_solo(sa, a, cnt);
                if (threadIdx.x == 0) {
                    solo.cnt[0] = 0; solo.cnt[1] = 0;
                    solo.found[0] = 0; solo.found[1] = 0;
                }
                __syncthreads();
                while (cnt > 0 && cnt <= small) {
                    // Level j appends to ring slot j % 3 and clears slot (j + 1) % 3 (read in
                    // level j + 1): a slot is cleared again only two block barriers after it
                    // was read, so one barrier per level suffices and every thread reads the
                    // same counts (the found tally in shared memory: no global round trip).
                    ++lv;
                    u64 ts = 0;
                    if (threadIdx.x == 0) {
                        solo.cnt[(steps + 1) % 3] = 0;
                        solo.found[(steps + 1) % 3] = 0;
                        if (instr != nullptr) ts = now_ns();
                    }
                    const List in = {a, sa, nullptr};
                    const List out = {b, sb, &solo.cnt[steps % 3]};
                    const List act_solo = {act, nullptr, &ctl[CTL_ACT], &solo.found[steps % 3]};
                    expand_level(c, in, cnt, lv, out, act_solo, true);
                    __syncthreads();
                    if (instr != nullptr && threadIdx.x == 0)
                        record(instr, instr_cap, INSTR_SOLO_LEVEL, cnt, now_ns() - ts);
                    cnt = solo.cnt[steps % 3];
                    got += solo.found[steps % 3];
                    int* tmp = a; a = b; b = tmp;
                    tmp = sa; sa = sb; sb = tmp;
                    ++steps;
                    if (target > 0 && got >= target) { stop = 1; break; }
                }
                if (!stop) flush(sa, a, cnt);
                if (threadIdx.x == 0) {
                    int* hand = &ctl[CTL_SOLO + HAND * (handoffs & 1)];
                    hand[0] = lv;
                    hand[1] = cnt;
                    hand[2] = steps;
                    hand[3] = stop;
                    hand[4] = got;
                }
            }
            GRID_SYNC();
            const int* hand = &ctl[CTL_SOLO + HAND * (handoffs & 1)];
            ++handoffs;
            const int steps = __ldcg(&hand[2]);
            level = __ldcg(&hand[0]);
            count = __ldcg(&hand[1]);
            stopped = __ldcg(&hand[3]) != 0;
            found = __ldcg(&hand[4]);
            solo_levels += steps;
            if (steps & 1) { int* tmp = fc; fc = fn; fn = tmp; }
            continue;
        }
        ++level;
        u64 ts = 0;
        if (gtid == 0) {
            ctl[CTL_BFS + (step + 1) % 3] = 0;
            ctl[CTL_ACTR + (step + 1) % 3] = 0;
            if (instr != nullptr) ts = now_ns();
        }
        const List in = {fc, nullptr, nullptr, nullptr};
        const List out = {fn, nullptr, &ctl[CTL_BFS + step % 3], nullptr};
        const List act_step = {act, nullptr, &ctl[CTL_ACT], &ctl[CTL_ACTR + step % 3]};
        expand_level(c, in, count, level, out, act_step, false);
        GRID_SYNC();
        if (instr != nullptr && gtid == 0)
            record(instr, instr_cap, INSTR_GRID_LEVEL, count, now_ns() - ts);
        count = __ldcg(&ctl[CTL_BFS + step % 3]);
        found += __ldcg(&ctl[CTL_ACTR + step % 3]);
        stopped = target > 0 && found >= target;
        ++step;
        int* tmp = fc; fc = fn; fn = tmp;
    }
    if (stopped) {
        // Vertices not reached are at distance > level: max(old height, level + 1) keeps the
        // labelling valid.
        const int floor_h = level + 1 < n ? level + 1 : n;
        for (int v = gtid; v < n; v += nthreads) {
            if (__ldcg(&c.h[v]) == n && v != c.s) {
                const int old = __ldcg(&hold[v]);
                c.h[v] = old > floor_h ? old : floor_h;
            }
        }
        GRID_SYNC();
    }
    levels = level;
    alive = target;
    return __ldcg(&ctl[CTL_ACT]);
}

// Tail mode: the global relabel of block 0 alone, with block barriers only (the rest of the
// grid waits at its next grid barrier and touches nothing). The same BFS as global_relabel
// (early-stopping when `early`), its frontiers in `fa` / `fb` (shared memory `sm`, 2 x
// SOLO_CAP entries, then global), the active vertices it finds appended to the global list
// `act_g`. `sc` points to 8 shared ints. After every level the block reads the counters and
// passes a second barrier before any thread appends again, so every thread takes the same
// stop decision. Returns the number of active vertices found (the same in every thread);
// `levels` gets the last BFS level and `alive` the active vertices with height < n before it.
// A frontier of more than `bound` vertices that the BFS would still expand is too wide for one
// block: the relabel is given up, every height is put back (from `hold` when early; without
// early stopping the grid's relabel that follows overwrites every height, and no sweep runs in
// between) and -1 is returned.
#define RESET_GROUP 6

__device__ __forceinline__ int block_relabel(const Ctx& c, int* hold, int early, int* fa, int* fb,
        int* act_g, int* sm, int* sc, int bound, int& levels, int& alive, i64& solo_levels) {
    const int n = c.n;
    if (threadIdx.x == 0) {
        for (int k = 0; k < 8; ++k) sc[k] = 0;
    }
    __syncthreads();
    // One block walks all n vertices: RESET_GROUP vertices per thread and round, their loads
    // issued together (independent round trips), or the pass would cost n / blockDim round
    // trips one after another. Heights >= n (s, and vertices that cannot reach t: they never
    // can again) are already what the reset would write; t keeps 0.
    int mine = 0;
    for (int base = threadIdx.x; base < n; base += RESET_GROUP * blockDim.x) {
        int hv[RESET_GROUP];
        i64 ex[RESET_GROUP];
#pragma unroll
        for (int k = 0; k < RESET_GROUP; ++k) {
            const int v = base + k * blockDim.x;
            hv[k] = v < n ? __ldcg(&c.h[v]) : n;
        }
#pragma unroll
        for (int k = 0; k < RESET_GROUP; ++k) {
            const int v = base + k * blockDim.x;
            ex[k] = (early && hv[k] < n && v != c.t) ? __ldcg(&c.excess[v]) : 0;
        }
#pragma unroll
        for (int k = 0; k < RESET_GROUP; ++k) {
            const int v = base + k * blockDim.x;
            if (v >= n) break;
            if (early) hold[v] = hv[k];
            if (hv[k] < n && v != c.t) {
                if (v != c.s && ex[k] > 0) ++mine;
                c.h[v] = n;
            }
        }
    }
    if (early) {
        for (int o = 16; o > 0; o >>= 1) mine += __shfl_xor_sync(FULL_MASK, mine, o);
        if ((threadIdx.x & 31) == 0 && mine > 0) atomicAdd(&sc[3], mine);
    }
    __syncthreads();
    const int target = early ? sc[3] : 0;
    const List act = {act_g, nullptr, &sc[4]};
    int* a = fa;
    int* b = fb;
    int* sa = sm;
    int* sb = sm + SOLO_CAP;
    {
        const List first = {a, sa, &sc[0]};
        const int tb = __ldg(&c.off[c.t]), te = __ldg(&c.off[c.t + 1]);
        for (int e = tb + threadIdx.x; e < te; e += blockDim.x) visit(c, e, 1, first, act);
    }
    __syncthreads();
    int count = sc[0];
    int found = sc[4];
    __syncthreads();
    int level = 1, steps = 1;
    bool stopped = target > 0 && found >= target;
    bool too_wide = !stopped && count > bound;
    while (count > 0 && !stopped && !too_wide) {
        ++level;
        if (threadIdx.x == 0) sc[(steps + 1) % 3] = 0;
        const List in = {a, sa, nullptr};
        const List out = {b, sb, &sc[steps % 3]};
        expand_level(c, in, count, level, out, act, true);
        __syncthreads();
        count = sc[steps % 3];
        found = sc[4];
        __syncthreads();
        stopped = target > 0 && found >= target;
        too_wide = !stopped && count > bound;
        int* tmp = a; a = b; b = tmp;
        tmp = sa; sa = sb; sb = tmp;
        ++steps;
        ++solo_levels;
    }
    if (too_wide) {
        if (early) {
            for (int base = threadIdx.x; base < n; base += RESET_GROUP * blockDim.x) {
                int old[RESET_GROUP];
#pragma unroll
                for (int k = 0; k < RESET_GROUP; ++k) {
                    const int v = base + k * blockDim.x;
                    old[k] = v < n ? __ldcg(&hold[v]) : 0;
                }
#pragma unroll
                for (int k = 0; k < RESET_GROUP; ++k) {
                    const int v = base + k * blockDim.x;
                    if (v < n) c.h[v] = old[k];
                }
            }
        }
        __syncthreads();
        levels = level;
        alive = target;
        return -1;
    }
    if (stopped) {
        const int floor_h = level + 1 < n ? level + 1 : n;
        for (int base = threadIdx.x; base < n; base += RESET_GROUP * blockDim.x) {
            int hv[RESET_GROUP], old[RESET_GROUP];
#pragma unroll
            for (int k = 0; k < RESET_GROUP; ++k) {
                const int v = base + k * blockDim.x;
                hv[k] = v < n ? __ldcg(&c.h[v]) : 0;
                old[k] = v < n ? __ldcg(&hold[v]) : 0;
            }
#pragma unroll
            for (int k = 0; k < RESET_GROUP; ++k) {
                const int v = base + k * blockDim.x;
                if (v < n && hv[k] == n && v != c.s) c.h[v] = old[k] > floor_h ? old[k] : floor_h;
            }
        }
    }
    __syncthreads();
    levels = level;
    alive = target;
    return found;
}

extern "C" __global__ void __launch_bounds__(512) saturate_source(
    const int* __restrict__ off, const int* __restrict__ adj, const int* __restrict__ twin,
    u32* rcap, i64* excess, const int s, const int t) {
    const int b = off[s], en = off[s + 1];
    for (int e = b + blockIdx.x * blockDim.x + threadIdx.x; e < en;
         e += gridDim.x * blockDim.x) {
        const u32 d = rcap[e];
        if (d == 0) continue;
        rcap[e] = 0;
        rcap[twin[e]] += d;  // distinct pairs: no two threads share a twin slot or a head
        const int w = adj[e];
        if (w != t) excess[w] += (i64)d;
    }
}

#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
// `tail` > 0 (tail mode, off by default): block 0's solo sweep loop runs while the worklist has
// at most max(small, tail) vertices, and when a global relabel comes due there it runs it alone
// (block_relabel) and goes on, handing back to the grid only when the active set outgrows that
// bound, when the time or sweep limit is reached, or at the end (a relabel that finds no active
// vertex: its heights give the cut, as with the grid's).
extern "C" __global__ void __launch_bounds__(512, MIN_BLOCKS) phase1(
    const int n, const int s, const int t, const int* __restrict__ off,
    const int* __restrict__ adj, const int* __restrict__ twin, const u32* __restrict__ capsum,
    u32* rcap, i64* excess, int* h, int* stamp, int* hold, int* list_a, int* list_b,
    int* front_a, int* front_b, int* ctl, i64* out, i64* trace,
    const int cycles, const int heavy, const int small, const int gr_min, const int gr_max,
    const float gr_factor, const float gr_work, const int early, const i64 max_sweeps,
    const u64 time_limit_ns, const int tail, i64* instr, const int instr_cap,
    const int bfs_small, const int bfs_tiles, const int spread) {
    cg::grid_group grid = cg::this_grid();
    __shared__ int s_lists[2 * SOLO_CAP];
    __shared__ int s_cnt[3];
    __shared__ int s_found[3];
    __shared__ int s_tiles[BFS_TILE_SCRATCH];
    __shared__ int s_tail[8];
    __shared__ int s_tail_off;  // block 0: 1 once a tail relabel was given up (grid relabels)
    if (threadIdx.x == 0) s_tail_off = 0;  // read after the first grid barrier
    const Solo solo = {s_lists, s_cnt, s_found};
    Ctx c;
    c.n = n; c.s = s; c.t = t;
    c.off = off; c.adj = adj; c.twin = twin; c.capsum = capsum;
    c.rcap = rcap; c.excess = excess; c.h = h; c.stamp = stamp; c.ctl = ctl;
    c.cycles = cycles; c.heavy = heavy;
    c.tiles = bfs_tiles ? s_tiles : nullptr;
    c.spread = spread;

    const int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    const int nwarps = (gridDim.x * blockDim.x) >> 5;
    const bool leader = gtid == 0;
    const int solo_max = tail > small ? tail : small;  // = small unless in tail mode
    i64 pushes = 0, relabels = 0;
    i64 sweeps = 0, grid_sweeps = 0, grs = 0, levels_total = 0, work = 0, solo_sweeps = 0;
    i64 solo_levels = 0;
    u64 ns_gr = 0, ns_pr = 0;
    int status = 0;
    bool finished = false;
    int* cur = list_a;
    int* nxt = list_b;
    int handoffs = 0;  // solo -> grid handoffs so far (the same in every thread)
    int grid_grs = 0;  // global relabels by the whole grid (the parity of CTL_ALIVE's slot)
    const u64 started_ns = leader ? now_ns() : 0;  // only the leader reads the clock

    for (;;) {
        u64 t0 = leader ? now_ns() : 0;
        int levels = 0, alive = 0;
        int count = global_relabel(c, grid, cur, front_a, front_b, hold, bfs_small, early,
                                   grid_grs, solo, handoffs, levels, alive, solo_levels,
                                   instr, instr_cap);
        ++grid_grs;
        i64 round = grs;  // the leader's trace row (tail relabels move it on)
        ++grs;
        levels_total += levels;
        u64 t1 = leader ? now_ns() : 0;
        if (leader) {
            ns_gr += t1 - t0;
            if (round < TRACE_CAP) {
                i64* tr = trace + round * TRACE_FIELDS;
                tr[0] = levels; tr[1] = count; tr[2] = alive; tr[4] = (i64)(t1 - t0);
            }
        }
        if (count == 0) break;

        t0 = t1;
        i64 sweeps_before = sweeps;
        i64 since = 0, work_since = 0;
        bool relabel_due = false;
        while (!relabel_due) {
            if (solo_max > 0 && count <= solo_max) {
                // Block 0 runs sweeps alone while the worklist stays small, its lists and
                // counters in shared memory (and, in tail mode, the global relabels too).
                if (blockIdx.x == 0) {
                    i64 sw = sweeps, sn = since, wk = work_since, added = 0;
                    int cnt = count, steps = 0, due = 0, lv = levels, tail_grs = 0;
                    int* a = cur;
                    int* b = nxt;
                    int* sa = solo.sm;
                    int* sb = solo.sm + SOLO_CAP;
                    load_solo(sa, a, cnt);
                    if (threadIdx.x == 0) { solo.cnt[0] = 0; solo.cnt[1] = 0; }
                    __syncthreads();
                    for (;;) {
                        const int slot = steps % 3;
                        int* stop_flag = &ctl[CTL_GSTOP + (steps & 1)];
                        u64 ts = 0;
                        if (threadIdx.x == 0) {
                            solo.cnt[(steps + 1) % 3] = 0;
                            ts = now_ns();
                            if (ts - started_ns > time_limit_ns) *stop_flag = 1;
                        }
                        const List in = {a, sa, nullptr};
                        const List outl = {b, sb, &solo.cnt[slot]};
                        sweep(c, in, cnt, outl, (int)(sw + 1), threadIdx.x >> 5,
                              blockDim.x >> 5, pushes, relabels);
                        __syncthreads();
                        if (instr != nullptr && threadIdx.x == 0)
                            record(instr, instr_cap, INSTR_SOLO, cnt, now_ns() - ts);
                        cnt = solo.cnt[slot];
                        int* tmp = a; a = b; b = tmp;
                        tmp = sa; sa = sb; sb = tmp;
                        ++sw; ++sn; ++steps; wk += cnt; added += cnt;
                        const bool stop_now = __ldcg(stop_flag) != 0;
                        if (stop_now) due = 2;
                        const bool limit = sw >= max_sweeps || stop_now;
                        const bool policy = cnt == 0 || sn >= gr_max ||
                            (sn >= gr_min && (sn >= (i64)(gr_factor * lv) ||
                                              (gr_work > 0.f && wk >= (i64)(gr_work * n))));
                        if (limit || (policy && (tail <= 0 || s_tail_off))) {
                            if (!due) due = 1;
                            break;
                        }
                        if (policy) {
                            // Tail mode: block 0 relabels alone; the new worklist replaces
                            // the current one in place (a), so the list parity is unchanged.
                            u64 r0 = 0;
                            if (threadIdx.x == 0) {
                                r0 = now_ns();
                                ns_pr += r0 - t0;
                                if (round < TRACE_CAP) {
                                    i64* tr = trace + round * TRACE_FIELDS;
                                    tr[3] = sw - sweeps_before; tr[5] = (i64)(r0 - t0);
                                }
                            }
                            int alv = 0, tlv = 0;
                            cnt = block_relabel(c, hold, early, front_a, front_b, a, solo.sm,
                                                s_tail, solo_max, tlv, alv, solo_levels);
                            if (cnt < 0) {
                                // Too wide for one block: the grid relabels, now and from now
                                // on (the heights are back as they were).
                                cnt = 0;  // the worklist is rebuilt by that relabel
                                due = 1;
                                if (threadIdx.x == 0) {
                                    s_tail_off = 1;  // read after the handoff's barrier
                                    ns_pr -= r0 - t0;  // counted again, whole, at the round's end
                                    if (instr != nullptr)
                                        record(instr, instr_cap, INSTR_TAIL_ABORT, 0,
                                               now_ns() - r0);
                                }
                                break;
                            }
                            lv = tlv;
                            ++tail_grs;
                            sn = 0; wk = 0;
                            if (threadIdx.x == 0) {
                                const u64 r1 = now_ns();
                                ns_gr += r1 - r0;
                                ++round;
                                levels_total += lv;
                                if (round < TRACE_CAP) {
                                    i64* tr = trace + round * TRACE_FIELDS;
                                    tr[0] = lv; tr[1] = cnt; tr[2] = alv; tr[4] = (i64)(r1 - r0);
                                }
                                if (instr != nullptr)
                                    record(instr, instr_cap, INSTR_TAIL_GR, cnt, r1 - r0);
                                t0 = r1;
                                sweeps_before = sw;
                            }
                            if (cnt == 0) { due = 3; break; }
                            load_solo(sa, a, cnt);
                            __syncthreads();
                        }
                        if (cnt > solo_max) break;
                    }
                    flush(sa, a, cnt);
                    if (threadIdx.x == 0) {
                        int* hand = &ctl[CTL_SOLO + HAND * (handoffs & 1)];
                        hand[3] = steps;
                        hand[4] = cnt;
                        hand[5] = due;
                        hand[6] = (int)(added & 0x7fffffff);  // 64-bit values split in two ints
                        hand[7] = (int)(added >> 31);
                        hand[8] = (int)(sn & 0x7fffffff);
                        hand[9] = (int)(sn >> 31);
                        hand[10] = (int)(wk & 0x7fffffff);
                        hand[11] = (int)(wk >> 31);
                        hand[12] = lv;
                        hand[13] = tail_grs;
                    }
                }
                GRID_SYNC();
                const int* hand = &ctl[CTL_SOLO + HAND * (handoffs & 1)];
                ++handoffs;
                const int steps = __ldcg(&hand[3]);
                count = __ldcg(&hand[4]);
                const int due = __ldcg(&hand[5]);
                relabel_due = due != 0;
                const i64 added = (i64)__ldcg(&hand[6]) + ((i64)__ldcg(&hand[7]) << 31);
                since = (i64)__ldcg(&hand[8]) + ((i64)__ldcg(&hand[9]) << 31);
                work_since = (i64)__ldcg(&hand[10]) + ((i64)__ldcg(&hand[11]) << 31);
                levels = __ldcg(&hand[12]);
                grs += __ldcg(&hand[13]);
                sweeps += steps; solo_sweeps += steps; work += added;
                if (steps & 1) { int* tmp = cur; cur = nxt; nxt = tmp; }
                if (due == 3) { finished = true; break; }
                if (sweeps >= max_sweeps && count > 0) { status = 1; break; }
                if (due == 2 && count > 0) { status = 2; break; }
                continue;
            }
            const int slot = (int)(grid_sweeps % 3);
            int* stop_flag = &ctl[CTL_STOP + (int)(grid_sweeps & 1)];
            u64 ts = 0;
            if (leader) {
                ctl[CTL_PR + (int)((grid_sweeps + 1) % 3)] = 0;
                ts = now_ns();
                if (ts - started_ns > time_limit_ns) *stop_flag = 1;
            }
            const List in = {cur, nullptr, nullptr};
            const List outl = {nxt, nullptr, &ctl[CTL_PR + slot]};
            sweep(c, in, count, outl, (int)(sweeps + 1), grid_warp(c), nwarps, pushes,
                  relabels);
            GRID_SYNC();
            if (instr != nullptr && leader)
                record(instr, instr_cap, INSTR_GRID, count, now_ns() - ts);
            count = __ldcg(&ctl[CTL_PR + slot]);
            int* tmp = cur; cur = nxt; nxt = tmp;
            ++sweeps; ++since; ++grid_sweeps;
            work += count; work_since += count;
            if (count == 0) break;
            if (sweeps >= max_sweeps) { status = 1; break; }
            if (__ldcg(stop_flag) != 0) { status = 2; break; }  // written before the barrier
            relabel_due =
                since >= gr_max ||
                (since >= gr_min && (since >= (i64)(gr_factor * levels) ||
                                     (gr_work > 0.f && work_since >= (i64)(gr_work * n))));
        }
        if (leader) {
            const u64 t2 = now_ns();
            ns_pr += t2 - t0;
            if (round < TRACE_CAP) {
                i64* tr = trace + round * TRACE_FIELDS;
                tr[3] = sweeps - sweeps_before; tr[5] = (i64)(t2 - t0);
            }
        }
        if (status != 0 || finished) break;
    }
    atomicAdd((u64*)&out[OUT_PUSHES], (u64)pushes);
    atomicAdd((u64*)&out[OUT_RELABELS], (u64)relabels);
    if (leader) {
        out[OUT_STATUS] = status;
        out[OUT_SWEEPS] = sweeps;
        out[OUT_GRS] = grs;
        out[OUT_LEVELS] = levels_total;
        out[OUT_NS_GR] = (i64)ns_gr;
        out[OUT_NS_PR] = (i64)ns_pr;
        out[OUT_WORK] = work;
        out[OUT_SOLO_SWEEPS] = solo_sweeps;
        out[OUT_SOLO_LEVELS] = solo_levels;
    }
}
