// The learned model's scoring on the GPU (models/_learned_kernels.py beside this file): the
// two-label quadratic logistic regression's costs of every pixel in one pass over the float32
// feature rows, z = b0 + sum_j (b1_j x_j + b2_j x_j^2) clipped to [-30, 30], then
// cost_first = log(1 + exp(-z)) = -log sigmoid(z) and cost_second = cost_first + z =
// -log sigmoid(-z), each capped at max_cost; written as doubles into the (2, n) costs. The
// NumPy path (_learned.py's _Shared._chunk_costs) computes the same formula in float32.
// Shipped precompiled (solver/cuda/_variants.py).
//
// Grid-stride loop with GRAPHCUT_THREADS threads per block.

#include "graphcut_cuda.cuh"

// MAX_FEATURES bounds the weights kept in registers / shared memory (F <= 27 today).
#define LEARNED_MAX_FEATURES 64

// x: (n, features) float32 row-major; weights: 2 features + 1 doubles, [b0, b1..., b2...];
// costs: (2, n) doubles, label 0's row first.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) learned_binary_costs(
    const long long n, const int features, const float* __restrict__ x,
    const double* __restrict__ weights, const double max_cost, double* __restrict__ costs)
{
    __shared__ float linear[LEARNED_MAX_FEATURES];
    __shared__ float quadratic[LEARNED_MAX_FEATURES];
    for (int j = threadIdx.x; j < features; j += blockDim.x) {
        linear[j] = (float)weights[1 + j];
        quadratic[j] = (float)weights[1 + features + j];
    }
    __syncthreads();
    const float bias = (float)weights[0];
    const float cap = (float)max_cost;
    GRID_STRIDE_LOOP(p, n) {
        const float* row = x + p * (long long)features;
        float z = 0.0f;
        for (int j = 0; j < features; ++j) {
            const float v = row[j];
            z += linear[j] * v + quadratic[j] * (v * v);
        }
        z += bias;
        z = fminf(fmaxf(z, -30.0f), 30.0f);
        const float first = log1pf(expf(-z));
        costs[p] = (double)fminf(first, cap);
        costs[n + p] = (double)fminf(first + z, cap);
    }
}
