// Push-relabel (phase I) on a 4-connected H x W pixel grid and a 6-connected D x H x W voxel
// grid. One templated implementation serves both; the extern "C" kernels at the end are its
// 2-D instances (push_relabel, bfs_init, bfs_tile, count_active) and 3-D instances (the same
// names with the suffix _3d).
//
// Axes are counted from the fastest-varying one: axis 0 = x (stride 1), axis 1 = y (stride W),
// axis 2 = z (stride W * H); a pixel or voxel is u = x + y * W (+ z * W * H). Its neighbour in
// direction k = 2 * axis + (0 forward, 1 backward) is u + stride[axis] or u - stride[axis]:
// k = RIGHT, LEFT, DOWN, UP (2-D) and also NEXT_SLICE (z + 1), PREV_SLICE (z - 1) in 3-D.
//
// State, one entry per pixel u:
//   excess[u]  int64, flow into u not yet pushed on;
//   height[u]  int32, distance label; INF (= number of pixels + 2) marks "cannot reach the sink";
//   to_sink[u] int32, residual capacity of u -> t;
//   res[k][u]  uint32, residual capacity of u -> its neighbour in direction k; zero where the
//              neighbour lies outside the grid, so no bounds checks are needed before a
//              residual test. Unsigned because the two residuals of a neighbour pair sum to the
//              pair's two capacities, up to 2 * (2**31 - 1).
// Arcs from the source are saturated at the start and never used again (phase I never returns
// flow to s); terminal arcs are folded into excess and to_sink by the host.
//
// Pushes and relabels follow Hong's lock-free asynchronous algorithm (seed 003, Algorithm 2):
// an active pixel pushes to its lowest residual neighbour when it is higher, otherwise it
// relabels to one above that neighbour. Each pixel is owned by one thread; residuals and
// excesses are changed with atomics; heights are written only by their owner.
// The global relabel is an exact BFS from the sink (Bellman-Ford relaxation iterated inside
// shared-memory tiles), run between push-relabel launches, never concurrently with them.

// Tile extents (x, y, z) of the blocks: push-relabel tiles (PR) and BFS tiles, passed with -D
// from CONSTANTS in solver/cuda/_variants.py; the host side (solver/cuda/grid.py, grid3d.py)
// launches blocks of exactly these shapes, read from the same place.
#include "graphcut_cuda.cuh"
#if !defined(PR_TILE_2D_X) || !defined(PR_TILE_2D_Y) || !defined(BFS_TILE_2D_X) ||           \
    !defined(BFS_TILE_2D_Y) || !defined(PR_TILE_3D_X) || !defined(PR_TILE_3D_Y) ||           \
    !defined(PR_TILE_3D_Z) || !defined(BFS_TILE_3D_X) || !defined(BFS_TILE_3D_Y) ||          \
    !defined(BFS_TILE_3D_Z)
#error "the tile extents are passed with -D by graphcut's kernel loader"
#endif

template <int D> struct Tiles;
template <> struct Tiles<2> {
    __host__ __device__ static constexpr int pr(int a) {
        return a == 0 ? PR_TILE_2D_X : a == 1 ? PR_TILE_2D_Y : 1; }
    __host__ __device__ static constexpr int bfs(int a) {
        return a == 0 ? BFS_TILE_2D_X : a == 1 ? BFS_TILE_2D_Y : 1; }
};
template <> struct Tiles<3> {
    __host__ __device__ static constexpr int pr(int a) {
        return a == 0 ? PR_TILE_3D_X : a == 1 ? PR_TILE_3D_Y : PR_TILE_3D_Z; }
    __host__ __device__ static constexpr int bfs(int a) {
        return a == 0 ? BFS_TILE_3D_X : a == 1 ? BFS_TILE_3D_Y : BFS_TILE_3D_Z; }
};
#define PR_THREADS_2D (PR_TILE_2D_X * PR_TILE_2D_Y)
#define BFS_THREADS_2D (BFS_TILE_2D_X * BFS_TILE_2D_Y)
#define PR_THREADS_3D (PR_TILE_3D_X * PR_TILE_3D_Y * PR_TILE_3D_Z)
#define BFS_THREADS_3D (BFS_TILE_3D_X * BFS_TILE_3D_Y * BFS_TILE_3D_Z)

// Extents and strides of a D-dimensional grid, x first.
template <int D>
struct Grid {
    int size[D];
    int stride[D];
    int inf;

    // offset of the neighbour in direction k
    __device__ __forceinline__ int offset(int k) const {
        const int step = (k >> 1) == 0 ? 1 : stride[k >> 1];
        return (k & 1) ? -step : step;
    }
};

__device__ __forceinline__ Grid<2> grid_2d(int width, int height_px, int inf) {
    Grid<2> g;
    g.size[0] = width; g.size[1] = height_px;
    g.stride[0] = 1; g.stride[1] = width;
    g.inf = inf;
    return g;
}

__device__ __forceinline__ Grid<3> grid_3d(int width, int height_px, int depth, int inf) {
    Grid<3> g;
    g.size[0] = width; g.size[1] = height_px; g.size[2] = depth;
    g.stride[0] = 1; g.stride[1] = width; g.stride[2] = width * height_px;
    g.inf = inf;
    return g;
}

__device__ __forceinline__ int thread_coord(int a) {
    return a == 0 ? (int)threadIdx.x : a == 1 ? (int)threadIdx.y : (int)threadIdx.z; }
__device__ __forceinline__ int block_coord(int a) {
    return a == 0 ? (int)blockIdx.x : a == 1 ? (int)blockIdx.y : (int)blockIdx.z; }
__device__ __forceinline__ int blocks_along(int a) {
    return a == 0 ? (int)gridDim.x : a == 1 ? (int)gridDim.y : (int)gridDim.z; }
__device__ __forceinline__ bool first_thread() {
    return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0; }

// This thread's cell in a block of tiles of extent tile(a): its coordinates, its coordinates
// inside the tile, whether it lies in the grid, its index u, and the block's tile index with
// the tile-index strides.
template <int D>
struct Cell {
    int coord[D];
    int local[D];
    int tile_stride[D];
    int tile;
    int u;
    bool inside;

    template <typename TileExtent>
    __device__ __forceinline__ Cell(const Grid<D>& g, TileExtent tile_extent) {
        inside = true;
        u = 0;
        tile = 0;
        int tiles = 1;
#pragma unroll
        for (int a = 0; a < D; ++a) {
            local[a] = thread_coord(a);
            coord[a] = block_coord(a) * tile_extent(a) + local[a];
            inside = inside && coord[a] < g.size[a];
            u += coord[a] * (a == 0 ? 1 : g.stride[a]);
            tile_stride[a] = tiles;
            tile += block_coord(a) * tiles;
            tiles *= blocks_along(a);
        }
    }
};

template <typename T>
__device__ __forceinline__ T load_volatile(const T* p) {
    return *reinterpret_cast<const volatile T*>(p);
}

__device__ __forceinline__ void add_excess(long long* excess, int u, long long delta) {
    atomicAdd(reinterpret_cast<unsigned long long*>(excess + u),
              static_cast<unsigned long long>(delta));
}

__device__ __forceinline__ void push_along(unsigned* from_res, unsigned* back_res, long long* excess,
                                           int v, unsigned d, int* tile_flag, int v_tile, int u_tile)
{
    atomicSub(from_res, d);
    atomicAdd(back_res, d);
    add_excess(excess, v, (long long)d);
    if (v_tile != u_tile) tile_flag[v_tile] = 1;
}

// One lock-free push or relabel of pixel u (Hong's Algorithm 2). Returns whether u is still
// active afterwards as far as this thread knows (flow may arrive from neighbours at any time).
template <int D>
__device__ __forceinline__ bool push_or_relabel(
    const Grid<D>& g, const Cell<D>& cell, int& h, long long* __restrict__ excess,
    int* __restrict__ height, int* __restrict__ to_sink, unsigned* const (&res)[2 * D],
    int* __restrict__ tile_flag)
{
    const int u = cell.u;
    const long long e = load_volatile(excess + u);
    if (e <= 0 || h >= g.inf) return false;
    // lowest residual neighbour; the sink has height 0
    int best_h = g.inf, best_dir = -1;
    unsigned best_res = 0;
    const int r_sink = to_sink[u];  // only this thread changes to_sink[u]
    if (r_sink > 0) {
        best_h = 0; best_dir = 2 * D; best_res = (unsigned)r_sink;
    } else {
#pragma unroll
        for (int k = 0; k < 2 * D; ++k) {
            const unsigned r = load_volatile(res[k] + u);
            if (r > 0) {
                const int hv = load_volatile(height + u + g.offset(k));
                if (hv < best_h) { best_h = hv; best_dir = k; best_res = r; }
            }
        }
    }
    if (best_dir < 0 || best_h >= g.inf - 1) {  // no way towards the sink
        h = g.inf;
        height[u] = h;
        return false;
    }
    if (h <= best_h) {
        h = best_h + 1;
        height[u] = h;
        return true;
    }
    const unsigned d = (unsigned)(e < (long long)best_res ? e : (long long)best_res);
    if (best_dir == 2 * D) {
        to_sink[u] = r_sink - (int)d;
    } else {
#pragma unroll
        for (int k = 0; k < 2 * D; ++k) {
            if (k != best_dir) continue;
            const int a = k >> 1;
            const bool forward = (k & 1) == 0;
            const int v = u + g.offset(k);
            // the neighbour's tile differs when u lies on this side of its tile's border
            const bool crosses = forward ? cell.local[a] == Tiles<D>::pr(a) - 1
                                         : cell.local[a] == 0;
            const int v_tile = !crosses ? cell.tile
                : forward ? cell.tile + cell.tile_stride[a] : cell.tile - cell.tile_stride[a];
            push_along(res[k] + u, res[k ^ 1] + v, excess, v, d, tile_flag, v_tile, cell.tile);
        }
    }
    add_excess(excess, u, -(long long)d);
    return e > (long long)d;
}

// Up to `cycles` lock-free push/relabel steps for every pixel of every flagged tile. A tile's
// flag is cleared when its block starts and set again when the block ends with an active pixel
// or when a neighbouring block pushes flow into it, so unflagged tiles hold no active pixel.
// With block_sync = 0 each thread stops at its pixel's first inactive moment; with
// block_sync = 1 the block's threads step together and stop only when the whole tile is idle,
// so flow keeps moving inside the tile for the whole launch.
template <int D>
__device__ __forceinline__ void push_relabel_tiles(
    const Grid<D>& g, const int cycles, const int block_sync, long long* __restrict__ excess,
    int* __restrict__ height, int* __restrict__ to_sink, unsigned* const (&res)[2 * D],
    int* __restrict__ tile_flag)
{
    const Cell<D> cell(g, Tiles<D>::pr);
    const int flagged = load_volatile(tile_flag + cell.tile);
    __syncthreads();
    if (!flagged) return;
    if (first_thread()) tile_flag[cell.tile] = 0;

    const bool inside = cell.inside;
    const int u = cell.u;
    int h = inside ? height[u] : g.inf;
    if (block_sync) {
        for (int c = 0; c < cycles; ++c) {
            const bool active = inside && push_or_relabel<D>(
                g, cell, h, excess, height, to_sink, res, tile_flag);
            if (!__syncthreads_or(active)) break;
        }
    } else {
        for (int c = 0; inside && c < cycles; ++c) {
            if (!push_or_relabel<D>(g, cell, h, excess, height, to_sink, res, tile_flag)) break;
        }
    }
    // Re-read after the block's barrier: a pixel of this tile whose thread stopped early may have
    // received flow from a neighbour in the same tile since.
    __syncthreads();
    const bool active = inside && h < g.inf && load_volatile(excess + u) > 0;
    if (__syncthreads_or(active) && first_thread()) tile_flag[cell.tile] = 1;
}

// Starts a global relabel: height 1 where the sink arc has residual capacity, INF elsewhere;
// records which neighbour arcs have residual capacity as bits 1 << k of arcs[u].
template <int D>
__device__ __forceinline__ void bfs_init_cells(
    const int n, const int inf, const int* __restrict__ to_sink,
    const unsigned* const (&res)[2 * D], int* __restrict__ height,
    unsigned char* __restrict__ arcs)
{
    const int u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= n) return;
    height[u] = to_sink[u] > 0 ? 1 : inf;
    unsigned bits = 0;
#pragma unroll
    for (int k = 0; k < 2 * D; ++k) bits |= res[k][u] > 0 ? (1u << k) : 0u;
    arcs[u] = (unsigned char)bits;
}

// One pass of the sink BFS over the dirty tiles: a tile relaxes
// height[u] = min(height[u], 1 + height[v]) over residual arcs u -> v in shared memory until it
// is stable, reading its halo from global memory, then marks dirty (in next_dirty) each
// neighbouring tile whose halo it changed. The host repeats passes until no tile is dirty; the
// heights are then exact residual distances to the sink (INF where it is unreachable).
template <int D>
__device__ __forceinline__ void bfs_tile_pass(
    const Grid<D>& g, const unsigned char* __restrict__ arcs, int* __restrict__ height,
    int* __restrict__ dirty, int* __restrict__ next_dirty, int* __restrict__ any_dirty)
{
    // the tile with a one-cell halo on every face, x fastest
    constexpr int HX = Tiles<D>::bfs(0) + 2;
    constexpr int HY = Tiles<D>::bfs(1) + 2;
    constexpr int HZ = D == 3 ? Tiles<D>::bfs(2) + 2 : 1;
    __shared__ int tile[HZ * HY * HX];
    const Cell<D> cell(g, Tiles<D>::bfs);
    if (!dirty[cell.tile]) return;  // uniform across the block
    const bool inside = cell.inside;
    const int u = cell.u;
    int shared_stride[D];
    int s = 0;
#pragma unroll
    for (int a = 0; a < D; ++a) {
        shared_stride[a] = a == 0 ? 1 : a == 1 ? HX : HX * HY;
        s += (cell.local[a] + 1) * shared_stride[a];
    }

    int h = inside ? height[u] : g.inf;
    const unsigned mask = inside ? arcs[u] : 0u;
    tile[s] = h;
#pragma unroll
    for (int a = 0; a < D; ++a) {
        const int step = a == 0 ? 1 : g.stride[a];
        if (cell.local[a] == 0)
            tile[s - shared_stride[a]] = (inside && cell.coord[a] > 0) ? height[u - step] : g.inf;
        if (cell.local[a] == Tiles<D>::bfs(a) - 1)
            tile[s + shared_stride[a]] =
                (inside && cell.coord[a] + 1 < g.size[a]) ? height[u + step] : g.inf;
    }
    __syncthreads();
    if (first_thread()) dirty[cell.tile] = 0;  // this pass consumes the flag

    const int h_start = h;
    bool again = true;
    while (again) {
        int best = h;
#pragma unroll
        for (int k = 0; k < 2 * D; ++k) {
            const int neighbour = (k & 1) ? s - shared_stride[k >> 1] : s + shared_stride[k >> 1];
            if (mask & (1u << k)) best = min(best, tile[neighbour] + 1);
        }
        const bool improved = best < h;
        if (improved) { h = best; tile[s] = h; }
        again = __syncthreads_or(improved);
    }
    const bool changed = inside && h != h_start;
    if (changed) height[u] = h;
    // a changed border pixel may shorten paths in the neighbouring tile
#pragma unroll
    for (int a = 0; a < D; ++a) {
        if (__syncthreads_or(changed && cell.local[a] == 0) && first_thread()
            && block_coord(a) > 0) {
            next_dirty[cell.tile - cell.tile_stride[a]] = 1; *any_dirty = 1; }
        if (__syncthreads_or(changed && cell.local[a] == Tiles<D>::bfs(a) - 1) && first_thread()
            && block_coord(a) + 1 < blocks_along(a)) {
            next_dirty[cell.tile + cell.tile_stride[a]] = 1; *any_dirty = 1; }
    }
}

// Counts active pixels (excess > 0, height < INF) and flags the push-relabel tiles holding one.
// Launched with push-relabel tiles as blocks.
template <int D>
__device__ __forceinline__ void count_active_tiles(
    const Grid<D>& g, const long long* __restrict__ excess, const int* __restrict__ height,
    int* __restrict__ tile_flag, unsigned int* __restrict__ count)
{
    const Cell<D> cell(g, Tiles<D>::pr);
    const int u = cell.u;
    const bool active = cell.inside && excess[u] > 0 && height[u] < g.inf;
    const int in_tile = __syncthreads_count(active);
    if (first_thread()) {
        tile_flag[cell.tile] = in_tile > 0;
        if (in_tile) atomicAdd(count, (unsigned)in_tile);
    }
}

// ---- 2-D kernels: pixel grid of width x height_px -------------------------------------------

extern "C" __global__ void __launch_bounds__(PR_THREADS_2D) push_relabel(
    const int width, const int height_px, const int inf, const int cycles, const int block_sync,
    long long* __restrict__ excess, int* __restrict__ height, int* __restrict__ to_sink,
    unsigned* __restrict__ res_right, unsigned* __restrict__ res_left,
    unsigned* __restrict__ res_down, unsigned* __restrict__ res_up,
    int* __restrict__ tile_flag)
{
    unsigned* const res[4] = {res_right, res_left, res_down, res_up};
    push_relabel_tiles<2>(grid_2d(width, height_px, inf), cycles, block_sync, excess, height,
                          to_sink, res, tile_flag);
}

extern "C" __global__ void bfs_init(
    const int n, const int inf, const int* __restrict__ to_sink,
    const unsigned* __restrict__ res_right, const unsigned* __restrict__ res_left,
    const unsigned* __restrict__ res_down, const unsigned* __restrict__ res_up,
    int* __restrict__ height, unsigned char* __restrict__ arcs)
{
    const unsigned* const res[4] = {res_right, res_left, res_down, res_up};
    bfs_init_cells<2>(n, inf, to_sink, res, height, arcs);
}

extern "C" __global__ void __launch_bounds__(BFS_THREADS_2D) bfs_tile(
    const int width, const int height_px, const int inf,
    const unsigned char* __restrict__ arcs, int* __restrict__ height,
    int* __restrict__ dirty, int* __restrict__ next_dirty, int* __restrict__ any_dirty)
{
    bfs_tile_pass<2>(grid_2d(width, height_px, inf), arcs, height, dirty, next_dirty, any_dirty);
}

extern "C" __global__ void __launch_bounds__(PR_THREADS_2D) count_active(
    const int width, const int height_px, const int inf,
    const long long* __restrict__ excess, const int* __restrict__ height,
    int* __restrict__ tile_flag, unsigned int* __restrict__ count)
{
    count_active_tiles<2>(grid_2d(width, height_px, inf), excess, height, tile_flag, count);
}

// ---- 3-D kernels: voxel grid of width x height_px x depth -----------------------------------

// at most 64 registers, so that 4 blocks (1,024 threads) fit on an SM: the steps are latency-bound
extern "C" __global__ void __launch_bounds__(PR_THREADS_3D, 4) push_relabel_3d(
    const int width, const int height_px, const int depth, const int inf, const int cycles,
    const int block_sync, long long* __restrict__ excess, int* __restrict__ height,
    int* __restrict__ to_sink,
    unsigned* __restrict__ res_right, unsigned* __restrict__ res_left,
    unsigned* __restrict__ res_down, unsigned* __restrict__ res_up,
    unsigned* __restrict__ res_next, unsigned* __restrict__ res_prev,
    int* __restrict__ tile_flag)
{
    unsigned* const res[6] = {res_right, res_left, res_down, res_up, res_next, res_prev};
    push_relabel_tiles<3>(grid_3d(width, height_px, depth, inf), cycles, block_sync, excess,
                          height, to_sink, res, tile_flag);
}

extern "C" __global__ void bfs_init_3d(
    const int n, const int inf, const int* __restrict__ to_sink,
    const unsigned* __restrict__ res_right, const unsigned* __restrict__ res_left,
    const unsigned* __restrict__ res_down, const unsigned* __restrict__ res_up,
    const unsigned* __restrict__ res_next, const unsigned* __restrict__ res_prev,
    int* __restrict__ height, unsigned char* __restrict__ arcs)
{
    const unsigned* const res[6] = {res_right, res_left, res_down, res_up, res_next, res_prev};
    bfs_init_cells<3>(n, inf, to_sink, res, height, arcs);
}

extern "C" __global__ void __launch_bounds__(BFS_THREADS_3D) bfs_tile_3d(
    const int width, const int height_px, const int depth, const int inf,
    const unsigned char* __restrict__ arcs, int* __restrict__ height,
    int* __restrict__ dirty, int* __restrict__ next_dirty, int* __restrict__ any_dirty)
{
    bfs_tile_pass<3>(grid_3d(width, height_px, depth, inf), arcs, height, dirty, next_dirty,
                     any_dirty);
}

extern "C" __global__ void __launch_bounds__(PR_THREADS_3D) count_active_3d(
    const int width, const int height_px, const int depth, const int inf,
    const long long* __restrict__ excess, const int* __restrict__ height,
    int* __restrict__ tile_flag, unsigned int* __restrict__ count)
{
    count_active_tiles<3>(grid_3d(width, height_px, depth, inf), excess, height, tile_flag,
                          count);
}
