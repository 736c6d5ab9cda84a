// Setting up and reading out the push-relabel state of a grid (solver/cuda/transfer.py), so that
// no CuPy element-wise or reduction kernel (compiled by NVRTC on a machine's first run) is
// needed around the solver's own kernels.
//
// fold_terminals: the terminal arcs folded into the state. Per pixel u (row-major):
// min(source[u], sink[u]) goes straight from s to t, the rest of the source capacity becomes u's
// initial excess and the rest of the sink capacity its residual to t. The capacities in force
// are kept as int64 (dynamic re-solves start from them) and the sink capacities are summed into
// *sink_total (the flow is that sum minus the residuals left to t). Capacities are int32 >= 0
// (checked by GridNetwork), so no sum can overflow 64 bits.
//
// Every kernel here is launched with GRAPHCUT_THREADS threads per block (a grid-stride loop).

#include "graphcut_cuda.cuh"

// Adds the block's sum of `value` (one per thread) to *total with one atomic.
__device__ __forceinline__ void block_sum_into(unsigned long long value,
                                               unsigned long long* total)
{
    __shared__ unsigned long long partial[GRAPHCUT_THREADS / 32];
    for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        partial[threadIdx.x / 32] = value;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        value = threadIdx.x < GRAPHCUT_THREADS / 32 ? partial[threadIdx.x] : 0ull;
        for (int offset = 16; offset > 0; offset /= 2) {
            value += __shfl_down_sync(0xffffffffu, value, offset);
        }
        if (threadIdx.x == 0 && value != 0) {
            atomicAdd(total, value);
        }
    }
}

extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) fold_terminals(
    const long long n, const int* __restrict__ source, const int* __restrict__ sink,
    long long* __restrict__ excess, int* __restrict__ to_sink,
    long long* __restrict__ source_capacity, long long* __restrict__ sink_capacity,
    unsigned long long* __restrict__ sink_total)
{
    unsigned long long sum = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        const int s = source[u];
        const int t = sink[u];
        const int through = min(s, t);
        excess[u] = (long long)(s - through);
        to_sink[u] = t - through;
        source_capacity[u] = s;
        sink_capacity[u] = t;
        sum += (unsigned long long)t;
    }
    block_sum_into(sum, sink_total);
}

// *total += the sum of the n values (each >= 0), e.g. the residuals left to the sink.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) sum_nonnegative(
    const long long n, const int* __restrict__ values, unsigned long long* __restrict__ total)
{
    unsigned long long sum = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        sum += (unsigned long long)(unsigned int)values[u];
    }
    block_sum_into(sum, total);
}

// side[u] = height[u] >= inf: the pixels that cannot reach the sink (after an exact BFS).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) cut_side(
    const long long n, const int* __restrict__ height, const int inf, bool* __restrict__ side)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        side[u] = height[u] >= inf;
    }
}

// Kohli-Torr new terminal capacities for a kept preflow (graphcut.solver.dynamic's
// reparameterize_terminals, per pixel, in place): with the flow to t f = sink_capacity - to_sink
// and the net n-link inflow i = excess - source_capacity + f, both new capacities are raised by
// delta = max(0, f - i - new_source); the sink arc keeps min(f, new sink) of its flow. totals[0]
// += the deltas, totals[1] += the new sink capacities, totals[2] += the pixels whose residual
// to t would leave int32 (then the caller restarts from zero n-link flow).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) reparameterize_terminals(
    const long long n, const int* __restrict__ new_source, const int* __restrict__ new_sink,
    long long* __restrict__ excess, int* __restrict__ to_sink,
    long long* __restrict__ source_capacity, long long* __restrict__ sink_capacity,
    unsigned long long* __restrict__ totals)
{
    unsigned long long deltas = 0, sinks = 0, overflows = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        long long source = new_source[u];
        long long sink = new_sink[u];
        const long long to_sink_flow = sink_capacity[u] - (long long)to_sink[u];
        const long long inflow = excess[u] - source_capacity[u] + to_sink_flow;
        long long delta = to_sink_flow - inflow - source;
        delta = delta > 0 ? delta : 0;
        source += delta;
        sink += delta;
        const long long kept = to_sink_flow < sink ? to_sink_flow : sink;
        const long long residual = sink - kept;
        if (residual > 2147483647LL) {
            ++overflows;
        }
        excess[u] = source - kept + inflow;
        to_sink[u] = (int)residual;
        source_capacity[u] = source;
        sink_capacity[u] = sink;
        deltas += (unsigned long long)delta;
        sinks += (unsigned long long)sink;
    }
    block_sum_into(deltas, &totals[0]);
    __syncthreads();  // block_sum_into's shared partials are reused
    block_sum_into(sinks, &totals[1]);
    __syncthreads();
    block_sum_into(overflows, &totals[2]);
}

// Kohli-Torr new n-link capacities for a kept preflow (graphcut.solver.dynamic's
// reparameterize_nlinks, per pixel, in place): for each arc u -> v of pixel u (direction k,
// k = 2 * axis + backward, axis 0 = x; the pair's capacities are stored at its lower pixel, in
// arrays one shorter along the axis) the net flow f = old capacity - residual is cut to
// [-new reverse capacity, new capacity] and the residual becomes new capacity - kept flow. Each
// pixel reads and writes only its own residuals: the other pixel of a pair finds -f from its
// own side (the two residuals of a pair always sum to the two capacities). The flow cut off
// u's arcs returns to u's excess (negative: u's inflow was cut); where the excess would go
// below zero both terminal capacities in force rise by the deficit delta (the source arc brings
// it in, the sink arc keeps its flow, so the residual to t grows by delta). totals[0] += the
// deltas, totals[1] += the pixels whose residual to t would leave int32 (the state is then
// inconsistent, and the caller restarts).
//
// restart != 0: zero n-link flow instead (residuals = new capacities) and the terminal
// capacities in force folded in afresh (restart_nlinks; old_caps are not read). Both carry the
// same added delta, so the residual to t fits in int32.
template <int AXES>
__device__ __forceinline__ void change_nlinks_of(
    const int nx, const int ny, const int nz, const int restart,
    const int* const* old_caps, const int* const* new_caps, unsigned int* const* residual,
    long long* __restrict__ excess, int* __restrict__ to_sink,
    long long* __restrict__ source_capacity, long long* __restrict__ sink_capacity,
    unsigned long long* __restrict__ totals)
{
    unsigned long long deltas = 0, overflows = 0;
    const int size[3] = {nx, ny, nz};
    const long long n = (long long)nx * ny * nz;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        const unsigned int v = (unsigned int)u;  // grids have fewer than 2**31 pixels
        const int at[3] = {(int)(v % nx), (int)(v / nx % ny), (int)(v / nx / ny)};
        long long returned = 0;  // net flow cut off u's arcs (taken from its outflow)
#pragma unroll
        for (int k = 0; k < 2 * AXES; ++k) {
            const int axis = k / 2;
            const bool backward = k & 1;
            if (backward ? at[axis] == 0 : at[axis] == size[axis] - 1) {
                continue;  // the arc would leave the grid (its residual stays 0)
            }
            long long link = 0;  // the pair's lower pixel in the axis' link arrays
#pragma unroll
            for (int b = AXES - 1; b >= 0; --b) {
                link = link * (size[b] - (b == axis)) + at[b] - (b == axis && backward);
            }
            const long long capacity = new_caps[k][link];
            const long long reverse = new_caps[k ^ 1][link];
            const long long flow = restart ? 0 : (long long)old_caps[k][link] - residual[k][u];
            const long long kept = flow < -reverse ? -reverse : (flow > capacity ? capacity : flow);
            residual[k][u] = (unsigned int)(capacity - kept);
            returned += flow - kept;
        }
        if (restart) {
            const long long source = source_capacity[u];
            const long long sink = sink_capacity[u];
            const long long through = source < sink ? source : sink;
            excess[u] = source - through;
            to_sink[u] = (int)(sink - through);
            continue;
        }
        const long long left = excess[u] + returned;
        if (left < 0) {
            const long long delta = -left;
            source_capacity[u] += delta;
            sink_capacity[u] += delta;
            const long long residual_to_sink = (long long)to_sink[u] + delta;
            if (residual_to_sink > 2147483647LL) {
                ++overflows;
            }
            to_sink[u] = (int)residual_to_sink;
            deltas += (unsigned long long)delta;
        }
        excess[u] = left < 0 ? 0 : left;
    }
    block_sum_into(deltas, &totals[0]);
    __syncthreads();  // block_sum_into's shared partials are reused
    block_sum_into(overflows, &totals[1]);
}

// An image: directions RIGHT, LEFT, DOWN, UP; link arrays (H, W-1) for RIGHT/LEFT, (H-1, W) for
// DOWN/UP (GridNetwork's right, left, down, up); residual planes (H, W).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) change_nlinks(
    const int width, const int height, const int restart,
    const int* old_right, const int* old_left, const int* old_down, const int* old_up,
    const int* new_right, const int* new_left, const int* new_down, const int* new_up,
    unsigned int* __restrict__ residual_right, unsigned int* __restrict__ residual_left,
    unsigned int* __restrict__ residual_down, unsigned int* __restrict__ residual_up,
    long long* __restrict__ excess, int* __restrict__ to_sink,
    long long* __restrict__ source_capacity, long long* __restrict__ sink_capacity,
    unsigned long long* __restrict__ totals)
{
    const int* const old_caps[4] = {old_right, old_left, old_down, old_up};
    const int* const new_caps[4] = {new_right, new_left, new_down, new_up};
    unsigned int* const residual[4] = {residual_right, residual_left, residual_down, residual_up};
    change_nlinks_of<2>(width, height, 1, restart, old_caps, new_caps, residual, excess,
                        to_sink, source_capacity, sink_capacity, totals);
}

// A volume: the image's four directions, then z+1 (NEXT_SLICE) and z-1 (PREV_SLICE); the link
// arrays of direction k are GridNetwork's forward / backward[2 - k / 2].
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) change_nlinks_3d(
    const int width, const int height, const int depth, const int restart,
    const int* old_right, const int* old_left, const int* old_down, const int* old_up,
    const int* old_next, const int* old_prev,
    const int* new_right, const int* new_left, const int* new_down, const int* new_up,
    const int* new_next, const int* new_prev,
    unsigned int* __restrict__ residual_right, unsigned int* __restrict__ residual_left,
    unsigned int* __restrict__ residual_down, unsigned int* __restrict__ residual_up,
    unsigned int* __restrict__ residual_next, unsigned int* __restrict__ residual_prev,
    long long* __restrict__ excess, int* __restrict__ to_sink,
    long long* __restrict__ source_capacity, long long* __restrict__ sink_capacity,
    unsigned long long* __restrict__ totals)
{
    const int* const old_caps[6] = {old_right, old_left, old_down, old_up, old_next, old_prev};
    const int* const new_caps[6] = {new_right, new_left, new_down, new_up, new_next, new_prev};
    unsigned int* const residual[6] = {residual_right, residual_left, residual_down,
                                       residual_up, residual_next, residual_prev};
    change_nlinks_of<3>(width, height, depth, restart, old_caps, new_caps, residual, excess,
                        to_sink, source_capacity, sink_capacity, totals);
}

// out[0 .. n) = value (a non-zero fill, which CuPy would do with a kernel compiled at run time).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) fill_int32(
    const long long n, const int value, int* __restrict__ out)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        out[u] = value;
    }
}
