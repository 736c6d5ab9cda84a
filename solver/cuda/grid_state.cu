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
// Every kernel here is launched with FOLD_THREADS threads per block (a grid-stride loop).

#define FOLD_THREADS 256

// Adds the block's sum of `value` (one per thread) to *total with one atomic.
__device__ __forceinline__ void block_sum_into(unsigned long long value,
                                               unsigned long long* total)
{
    __shared__ unsigned long long partial[FOLD_THREADS / 32];
    for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        partial[threadIdx.x / 32] = value;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        value = threadIdx.x < FOLD_THREADS / 32 ? partial[threadIdx.x] : 0ull;
        for (int offset = 16; offset > 0; offset /= 2) {
            value += __shfl_down_sync(0xffffffffu, value, offset);
        }
        if (threadIdx.x == 0 && value != 0) {
            atomicAdd(total, value);
        }
    }
}

extern "C" __global__ void __launch_bounds__(FOLD_THREADS) fold_terminals(
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
extern "C" __global__ void __launch_bounds__(FOLD_THREADS) sum_nonnegative(
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
extern "C" __global__ void __launch_bounds__(FOLD_THREADS) cut_side(
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
extern "C" __global__ void __launch_bounds__(FOLD_THREADS) reparameterize_terminals(
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

// out[0 .. n) = value (a non-zero fill, which CuPy would do with a kernel compiled at run time).
extern "C" __global__ void __launch_bounds__(FOLD_THREADS) fill_int32(
    const long long n, const int value, int* __restrict__ out)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long u = (long long)blockIdx.x * blockDim.x + threadIdx.x; u < n; u += stride) {
        out[u] = value;
    }
}
