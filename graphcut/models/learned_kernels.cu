// The learned model's scoring on the GPU (models/_learned_kernels.py beside this file): the
// two-label quadratic logistic regression's costs of every pixel in one pass over the float32
// feature rows, z = b0 + sum_j (b1_j x_j + b2_j x_j^2) clipped to [-30, 30], then
// cost_first = log(1 + exp(-z)) = -log sigmoid(z) and cost_second = cost_first + z =
// -log sigmoid(-z), each capped at max_cost; written as doubles into the (2, n) costs. The
// NumPy path (_learned.py's _Shared._chunk_costs) computes the same formula in float32.
// Shipped precompiled (solver/cuda/_variants.py).
//
// Block-stride loop over tiles of GRAPHCUT_THREADS rows: the block first copies its tile's
// rows (contiguous floats) into shared memory with coalesced reads, then each thread scores
// one row from there (a thread reading its own row from global memory would touch a
// different cache line per lane at every feature). More than LEARNED_TILE_FEATURES features:
// each thread reads its row directly. Either way every pixel's arithmetic is the same.

#include "graphcut_cuda.cuh"

// MAX_FEATURES bounds the weights kept in registers / shared memory (F <= 27 today).
#define LEARNED_MAX_FEATURES 64
// the shared tile holds GRAPHCUT_THREADS rows of at most this many features (32 kB)
#define LEARNED_TILE_FEATURES 32

__device__ __forceinline__ void learned_score(
    const float* row, const int features, const float* linear, const float* quadratic,
    const float bias, const float cap, const long long n, const long long p,
    double* __restrict__ costs)
{
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

// x: (n, features) float32 row-major; weights: 2 features + 1 doubles, [b0, b1..., b2...];
// costs: (2, n) doubles, label 0's row first.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) learned_binary_costs(
    const long long n, const int features, const float* __restrict__ x,
    const double* __restrict__ weights, const double max_cost, double* __restrict__ costs)
{
    __shared__ float linear[LEARNED_MAX_FEATURES];
    __shared__ float quadratic[LEARNED_MAX_FEATURES];
    __shared__ float tile[GRAPHCUT_THREADS * LEARNED_TILE_FEATURES];
    for (int j = threadIdx.x; j < features; j += blockDim.x) {
        linear[j] = (float)weights[1 + j];
        quadratic[j] = (float)weights[1 + features + j];
    }
    __syncthreads();
    const float bias = (float)weights[0];
    const float cap = (float)max_cost;
    if (features > LEARNED_TILE_FEATURES || blockDim.x > GRAPHCUT_THREADS) {
        GRID_STRIDE_LOOP(p, n) {
            learned_score(x + p * (long long)features, features, linear, quadratic, bias, cap,
                          n, p, costs);
        }
        return;
    }
    const long long rows = blockDim.x;
    for (long long first = (long long)blockIdx.x * rows; first < n;
         first += (long long)gridDim.x * rows) {
        const long long count = (n - first < rows) ? n - first : rows;
        const long long values = count * features;
        const float* source = x + first * (long long)features;
        for (long long k = threadIdx.x; k < values; k += blockDim.x) {
            tile[k] = source[k];
        }
        __syncthreads();
        if (threadIdx.x < count) {
            learned_score(tile + threadIdx.x * features, features, linear, quadratic, bias, cap,
                          n, first + threadIdx.x, costs);
        }
        __syncthreads();  // the tile is read before the next one is written
    }
}

// One Newton step's per-row terms of the logistic regression's fit (_logistic.py's
// fit_logistic on the GPU): for row i of the float64 design x (n, d) with weights beta (d),
// z = clip(x_i . beta, -30, 30), p = 1 / (1 + exp(-z)); out[i, j] = x_ij * w_i *
// max(p (1 - p), 1e-6) for j < d (the Hessian's rows) and out[i, d] = w_i (p - y_i) (the
// gradient's), so that the one product out^T x holds the data term's Hessian (rows 0 .. d - 1)
// and gradient (row d). The NumPy path's float64 formulas; only the dot product's order of
// additions may differ from cuBLAS's.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) logistic_step_terms(
    const long long n, const int d, const double* __restrict__ x,
    const double* __restrict__ beta, const double* __restrict__ y,
    const double* __restrict__ w, double* __restrict__ out)
{
    GRID_STRIDE_LOOP(i, n) {
        const double* row = x + i * d;
        double z = 0.0;
        for (int j = 0; j < d; ++j) {
            z += row[j] * beta[j];
        }
        z = fmin(fmax(z, -30.0), 30.0);
        const double p = 1.0 / (1.0 + exp(-z));
        const double curvature = w[i] * fmax(p * (1.0 - p), 1e-6);
        double* terms = out + i * (d + 1);
        for (int j = 0; j < d; ++j) {
            terms[j] = row[j] * curvature;
        }
        terms[d] = w[i] * (p - y[i]);
    }
}
