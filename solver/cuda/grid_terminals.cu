// Terminal arcs of a grid network folded into the push-relabel state (solver/cuda/transfer.py).
//
// Per pixel u (row-major): min(source[u], sink[u]) goes straight from s to t, the rest of the
// source capacity becomes u's initial excess and the rest of the sink capacity its residual to
// t. The capacities in force are kept as int64 (dynamic re-solves start from them) and the sink
// capacities are summed into *sink_total (the flow is that sum minus the residuals left to t).
// Capacities are int32 >= 0 (checked by GridNetwork), so no sum can overflow 64 bits.

#define FOLD_THREADS 256

extern "C" __global__ void __launch_bounds__(FOLD_THREADS) fold_terminals(
    const long long n, const int* __restrict__ source, const int* __restrict__ sink,
    long long* __restrict__ excess, int* __restrict__ to_sink,
    long long* __restrict__ source_capacity, long long* __restrict__ sink_capacity,
    unsigned long long* __restrict__ sink_total)
{
    __shared__ unsigned long long partial[FOLD_THREADS / 32];
    unsigned long long sum = 0;
    const long long stride = (long long)gridDim.x * FOLD_THREADS;
    for (long long u = (long long)blockIdx.x * FOLD_THREADS + threadIdx.x; u < n; u += stride) {
        const int s = source[u];
        const int t = sink[u];
        const int through = min(s, t);
        excess[u] = (long long)(s - through);
        to_sink[u] = t - through;
        source_capacity[u] = s;
        sink_capacity[u] = t;
        sum += (unsigned long long)t;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        sum += __shfl_down_sync(0xffffffffu, sum, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        partial[threadIdx.x / 32] = sum;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        sum = threadIdx.x < FOLD_THREADS / 32 ? partial[threadIdx.x] : 0ull;
        for (int offset = 16; offset > 0; offset /= 2) {
            sum += __shfl_down_sync(0xffffffffu, sum, offset);
        }
        if (threadIdx.x == 0 && sum != 0) {
            atomicAdd(sink_total, sum);
        }
    }
}
