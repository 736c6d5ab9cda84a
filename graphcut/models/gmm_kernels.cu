// The Gaussian mixture's costs on the GPU (models/_gmm_kernels.py beside this file): every
// pixel's -log p(x) under a mixture of K Gaussians given in its linear form (_gmm.py's
// GMMModel._linear_form): the features f(x) = [x_0 .. x_{C-1}, x_i x_j for i <= j (the upper
// triangle row by row, NumPy's triu_indices order)] are built from the pixel's C channels in
// registers, log_part_k = sum_f f_f linear[f K + k] + constant[k], and
// cost = -(top + log(sum_k exp(log_part_k - top))) with top the largest log_part: one pass
// over the C float64 channels instead of the (N, C + C(C+1)/2) feature matrix, its matrix
// product and five element-wise passes over (N, K) arrays. float64 throughout; only the order
// of the dot product's additions may differ from cuBLAS's.
// Shipped precompiled (solver/cuda/_variants.py).

#include "graphcut_cuda.cuh"

// at most this many channels (features C + C(C+1)/2 <= 14) and components
#define GMM_MAX_CHANNELS 4
#define GMM_MAX_FEATURES 14
#define GMM_MAX_COMPONENTS 16

// values: (n, channels) float64 row-major; linear: (features, count) row-major; constant:
// (count,); costs: (n,) float64.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) gmm_costs(
    const long long n, const int channels, const int count,
    const double* __restrict__ values, const double* __restrict__ linear,
    const double* __restrict__ constant, double* __restrict__ costs)
{
    const int features = channels + channels * (channels + 1) / 2;
    GRID_STRIDE_LOOP(p, n) {
        double f[GMM_MAX_FEATURES];
        const double* x = values + p * channels;
        for (int c = 0; c < channels; ++c) {
            f[c] = x[c];
        }
        int k = channels;
        for (int i = 0; i < channels; ++i) {
            for (int j = i; j < channels; ++j) {
                f[k++] = x[i] * x[j];
            }
        }
        double parts[GMM_MAX_COMPONENTS];
        double top = 0.0;
        for (int m = 0; m < count; ++m) {
            double s = 0.0;
            for (int q = 0; q < features; ++q) {
                s += f[q] * linear[q * count + m];
            }
            s += constant[m];
            parts[m] = s;
            top = (m == 0 || s > top) ? s : top;
        }
        double total = 0.0;
        for (int m = 0; m < count; ++m) {
            total += exp(parts[m] - top);
        }
        costs[p] = -(top + log(total));
    }
}
