// Push-relabel (phase I) on a 4-connected H x W pixel grid.
//
// State, one entry per pixel u = y * W + x (row-major):
//   excess[u]  int64, flow into u not yet pushed on;
//   height[u]  int32, distance label; INF (= H*W + 2) marks "cannot reach the sink";
//   to_sink[u] int32, residual capacity of u -> t;
//   res[k][u]  uint32, residual capacity of u -> neighbour k, k = RIGHT, LEFT, DOWN, UP;
//              zero where the neighbour lies outside the grid, so no bounds checks are needed
//              before a residual test. Unsigned because the two residuals of a neighbour pair
//              sum to the pair's two capacities, up to 2 * (2**31 - 1).
// Arcs from the source are saturated at the start and never used again (phase I never returns
// flow to s); terminal arcs are folded into excess and to_sink by the host.
//
// Pushes and relabels follow Hong's lock-free asynchronous algorithm (seed 003, Algorithm 2):
// an active pixel pushes to its lowest residual neighbour when it is higher, otherwise it
// relabels to one above that neighbour. Each pixel is owned by one thread; residuals and
// excesses are changed with atomics; heights are written only by their owner.
// The global relabel is an exact BFS from the sink (Bellman-Ford relaxation iterated inside
// shared-memory tiles), run between push-relabel launches, never concurrently with them.

#define RIGHT 0
#define LEFT 1
#define DOWN 2
#define UP 3

// Push-relabel blocks cover PR_TILE_W x PR_TILE_H pixels; the BFS blocks BFS_TILE x BFS_TILE.
#define PR_TILE_W 32
#define PR_TILE_H 8
#define BFS_TILE 32
#define ARC_RIGHT 1u
#define ARC_LEFT 2u
#define ARC_DOWN 4u
#define ARC_UP 8u

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
__device__ __forceinline__ bool push_or_relabel(
    const int u, int& h, const int width, const int inf, const int tile, const int tiles_x,
    long long* __restrict__ excess, int* __restrict__ height, int* __restrict__ to_sink,
    unsigned* __restrict__ res_right, unsigned* __restrict__ res_left,
    unsigned* __restrict__ res_down, unsigned* __restrict__ res_up, int* __restrict__ tile_flag)
{
    const long long e = load_volatile(excess + u);
    if (e <= 0 || h >= inf) return false;
    // lowest residual neighbour; the sink has height 0
    int best_h = inf, best_dir = -1;
    unsigned best_res = 0;
    const int r_sink = to_sink[u];  // only this thread changes to_sink[u]
    if (r_sink > 0) {
        best_h = 0; best_dir = 4; best_res = (unsigned)r_sink;
    } else {
        unsigned r;
        r = load_volatile(res_right + u);
        if (r > 0) { int hv = load_volatile(height + u + 1);
            if (hv < best_h) { best_h = hv; best_dir = RIGHT; best_res = r; } }
        r = load_volatile(res_left + u);
        if (r > 0) { int hv = load_volatile(height + u - 1);
            if (hv < best_h) { best_h = hv; best_dir = LEFT; best_res = r; } }
        r = load_volatile(res_down + u);
        if (r > 0) { int hv = load_volatile(height + u + width);
            if (hv < best_h) { best_h = hv; best_dir = DOWN; best_res = r; } }
        r = load_volatile(res_up + u);
        if (r > 0) { int hv = load_volatile(height + u - width);
            if (hv < best_h) { best_h = hv; best_dir = UP; best_res = r; } }
    }
    if (best_dir < 0 || best_h >= inf - 1) {  // no way towards the sink
        h = inf;
        height[u] = h;
        return false;
    }
    if (h <= best_h) {
        h = best_h + 1;
        height[u] = h;
        return true;
    }
    const unsigned d = (unsigned)(e < (long long)best_res ? e : (long long)best_res);
    const int tx = threadIdx.x, ty = threadIdx.y;
    switch (best_dir) {
    case 4: to_sink[u] = r_sink - (int)d; break;
    case RIGHT: push_along(res_right + u, res_left + u + 1, excess, u + 1, d, tile_flag,
                           tx == PR_TILE_W - 1 ? tile + 1 : tile, tile); break;
    case LEFT: push_along(res_left + u, res_right + u - 1, excess, u - 1, d, tile_flag,
                          tx == 0 ? tile - 1 : tile, tile); break;
    case DOWN: push_along(res_down + u, res_up + u + width, excess, u + width, d, tile_flag,
                          ty == PR_TILE_H - 1 ? tile + tiles_x : tile, tile); break;
    case UP: push_along(res_up + u, res_down + u - width, excess, u - width, d, tile_flag,
                        ty == 0 ? tile - tiles_x : tile, tile); break;
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
extern "C" __global__ void __launch_bounds__(PR_TILE_W * PR_TILE_H) push_relabel(
    const int width, const int height_px, const int inf, const int cycles, const int block_sync,
    long long* __restrict__ excess, int* __restrict__ height, int* __restrict__ to_sink,
    unsigned* __restrict__ res_right, unsigned* __restrict__ res_left,
    unsigned* __restrict__ res_down, unsigned* __restrict__ res_up,
    int* __restrict__ tile_flag)
{
    const int tiles_x = gridDim.x;
    const int tile = blockIdx.y * tiles_x + blockIdx.x;
    const int flagged = load_volatile(tile_flag + tile);
    __syncthreads();
    if (!flagged) return;
    if (threadIdx.x == 0 && threadIdx.y == 0) tile_flag[tile] = 0;

    const int x = blockIdx.x * PR_TILE_W + threadIdx.x;
    const int y = blockIdx.y * PR_TILE_H + threadIdx.y;
    const bool inside = x < width && y < height_px;
    const int u = y * width + x;
    int h = inside ? height[u] : inf;
    if (block_sync) {
        for (int c = 0; c < cycles; ++c) {
            const bool active = inside && push_or_relabel(
                u, h, width, inf, tile, tiles_x, excess, height, to_sink,
                res_right, res_left, res_down, res_up, tile_flag);
            if (!__syncthreads_or(active)) break;
        }
    } else {
        for (int c = 0; inside && c < cycles; ++c) {
            if (!push_or_relabel(u, h, width, inf, tile, tiles_x, excess, height, to_sink,
                                 res_right, res_left, res_down, res_up, tile_flag)) break;
        }
    }
    // Re-read after the block's barrier: a pixel of this tile whose thread stopped early may have
    // received flow from a neighbour in the same tile since.
    __syncthreads();
    const bool active = inside && h < inf && load_volatile(excess + u) > 0;
    if (__syncthreads_or(active) && threadIdx.x == 0 && threadIdx.y == 0) tile_flag[tile] = 1;
}

// Starts a global relabel: height 1 where the sink arc has residual capacity, INF elsewhere;
// records which neighbour arcs have residual capacity as bits of arcs[u].
extern "C" __global__ void bfs_init(
    const int n, const int inf, const int* __restrict__ to_sink,
    const unsigned* __restrict__ res_right, const unsigned* __restrict__ res_left,
    const unsigned* __restrict__ res_down, const unsigned* __restrict__ res_up,
    int* __restrict__ height, unsigned char* __restrict__ arcs)
{
    const int u = blockIdx.x * blockDim.x + threadIdx.x;
    if (u >= n) return;
    height[u] = to_sink[u] > 0 ? 1 : inf;
    arcs[u] = (res_right[u] > 0 ? ARC_RIGHT : 0u) | (res_left[u] > 0 ? ARC_LEFT : 0u)
            | (res_down[u] > 0 ? ARC_DOWN : 0u) | (res_up[u] > 0 ? ARC_UP : 0u);
}

// One pass of the sink BFS over the dirty tiles: a tile relaxes
// height[u] = min(height[u], 1 + height[v]) over residual arcs u -> v in shared memory until it
// is stable, reading its halo from global memory, then marks dirty (in next_dirty) each
// neighbouring tile whose halo it changed. The host repeats passes until no tile is dirty; the
// heights are then exact residual distances to the sink (INF where it is unreachable).
extern "C" __global__ void __launch_bounds__(BFS_TILE * BFS_TILE) bfs_tile(
    const int width, const int height_px, const int inf,
    const unsigned char* __restrict__ arcs, int* __restrict__ height,
    int* __restrict__ dirty, int* __restrict__ next_dirty, int* __restrict__ any_dirty)
{
    __shared__ int tile[BFS_TILE + 2][BFS_TILE + 2];
    const int tiles_x = gridDim.x, tiles_y = gridDim.y;
    const int tile_id = blockIdx.y * tiles_x + blockIdx.x;
    if (!dirty[tile_id]) return;  // uniform across the block
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int x = blockIdx.x * BFS_TILE + tx;
    const int y = blockIdx.y * BFS_TILE + ty;
    const bool inside = x < width && y < height_px;
    const int u = y * width + x;

    int h = inside ? height[u] : inf;
    const unsigned mask = inside ? arcs[u] : 0u;
    tile[ty + 1][tx + 1] = h;
    if (tx == 0) tile[ty + 1][0] = (inside && x > 0) ? height[u - 1] : inf;
    if (tx == BFS_TILE - 1)
        tile[ty + 1][BFS_TILE + 1] = (y < height_px && x + 1 < width) ? height[u + 1] : inf;
    if (ty == 0) tile[0][tx + 1] = (inside && y > 0) ? height[u - width] : inf;
    if (ty == BFS_TILE - 1)
        tile[BFS_TILE + 1][tx + 1] = (x < width && y + 1 < height_px) ? height[u + width] : inf;
    __syncthreads();
    if (tx == 0 && ty == 0) dirty[tile_id] = 0;  // this pass consumes the flag

    const int h_start = h;
    bool again = true;
    while (again) {
        int best = h;
        if (mask & ARC_RIGHT) best = min(best, tile[ty + 1][tx + 2] + 1);
        if (mask & ARC_LEFT) best = min(best, tile[ty + 1][tx] + 1);
        if (mask & ARC_DOWN) best = min(best, tile[ty + 2][tx + 1] + 1);
        if (mask & ARC_UP) best = min(best, tile[ty][tx + 1] + 1);
        const bool improved = best < h;
        if (improved) { h = best; tile[ty + 1][tx + 1] = h; }
        again = __syncthreads_or(improved);
    }
    const bool changed = inside && h != h_start;
    if (changed) height[u] = h;
    // a changed border pixel may shorten paths in the neighbouring tile
    if (__syncthreads_or(changed && tx == 0) && tx == 0 && ty == 0 && blockIdx.x > 0) {
        next_dirty[tile_id - 1] = 1; *any_dirty = 1; }
    if (__syncthreads_or(changed && tx == BFS_TILE - 1) && tx == 0 && ty == 0 && blockIdx.x + 1 < tiles_x) {
        next_dirty[tile_id + 1] = 1; *any_dirty = 1; }
    if (__syncthreads_or(changed && ty == 0) && tx == 0 && ty == 0 && blockIdx.y > 0) {
        next_dirty[tile_id - tiles_x] = 1; *any_dirty = 1; }
    if (__syncthreads_or(changed && ty == BFS_TILE - 1) && tx == 0 && ty == 0 && blockIdx.y + 1 < tiles_y) {
        next_dirty[tile_id + tiles_x] = 1; *any_dirty = 1; }
}

// Counts active pixels (excess > 0, height < INF) and flags the push-relabel tiles holding one.
// Launched with push-relabel tiles as blocks.
extern "C" __global__ void __launch_bounds__(PR_TILE_W * PR_TILE_H) count_active(
    const int width, const int height_px, const int inf,
    const long long* __restrict__ excess, const int* __restrict__ height,
    int* __restrict__ tile_flag, unsigned int* __restrict__ count)
{
    const int x = blockIdx.x * PR_TILE_W + threadIdx.x;
    const int y = blockIdx.y * PR_TILE_H + threadIdx.y;
    const int u = y * width + x;
    const bool active = x < width && y < height_px && excess[u] > 0 && height[u] < inf;
    const int in_tile = __syncthreads_count(active);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        tile_flag[blockIdx.y * gridDim.x + blockIdx.x] = in_tile > 0;
        if (in_tile) atomicAdd(count, (unsigned)in_tile);
    }
}
