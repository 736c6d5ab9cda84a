// The AD-census cost volume of a rectified pair and the right view's cheapest disparities,
// on the GPU. Each kernel is, term by term, the NumPy code of graphcut/stereo/_costs.py, so
// both produce the same integers. Images are int32 grey levels, (H, W, C) row-major; volumes
// are (D + 1, H, W) int32. Disparity d matches left (y, x) with right (y, x - d).
// Kernels are grid-stride loops over their items.

#include "graphcut_cuda.cuh"

__device__ __forceinline__ int clamp_index(int i, int n) {
    return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

// Census code of every pixel of an (H, W) grey image: one bit per window neighbour, in
// row-major window order (dy = -ry..ry, dx = -rx..rx, the centre skipped), the first one the
// most significant; a bit is 1 when the neighbour is darker than the centre. The image is
// extended by repeating its border pixels.
extern "C" __global__ void census_codes(const int* __restrict__ grey, const int height,
                                        const int width, const int rx, const int ry,
                                        unsigned long long* __restrict__ code) {
    GRID_STRIDE_LOOP(u, (long long)height * width) {
        const int y = (int)(u / width), x = (int)(u % width);
        const int centre = grey[u];
        unsigned long long bits = 0;
        for (int dy = -ry; dy <= ry; ++dy) {
            const int yy = clamp_index(y + dy, height);
            for (int dx = -rx; dx <= rx; ++dx) {
                if (dx == 0 && dy == 0) continue;
                const int xx = clamp_index(x + dx, width);
                const int neighbour = grey[(long long)yy * width + xx];
                bits = (bits << 1) | (unsigned long long)(neighbour < centre);
            }
        }
        code[u] = bits;
    }
}

// Raw matching cost of disparities first .. first + planes - 1 (one plane each):
// census_table[Hamming distance of the census codes] + colour_table[sum over channels of
// |left - right|], or border_cost where x - d < 0.
extern "C" __global__ void matching_costs(
    const unsigned long long* __restrict__ left_code,
    const unsigned long long* __restrict__ right_code, const int* __restrict__ left,
    const int* __restrict__ right, const int channels, const int height, const int width,
    const int first, const int planes, const int* __restrict__ census_table,
    const int* __restrict__ colour_table, const int border_cost, int* __restrict__ out) {
    const long long pixels = (long long)height * width;
    GRID_STRIDE_LOOP(i, pixels * planes) {
        const int d = first + (int)(i / pixels);
        const long long u = i % pixels;
        const int x = (int)(u % width);
        if (x < d) {
            out[i] = border_cost;
            continue;
        }
        const long long v = u - d;
        const int hamming = __popcll(left_code[u] ^ right_code[v]);
        int difference = 0;
        for (int c = 0; c < channels; ++c) {
            const int delta = left[u * channels + c] - right[v * channels + c];
            difference += delta < 0 ? -delta : delta;
        }
        out[i] = census_table[hamming] + colour_table[difference];
    }
}

// Sums along rows over x - r .. x + r (border pixels repeated), for `planes` (H, W) planes.
extern "C" __global__ void box_rows(const int* __restrict__ in, const int planes,
                                    const int height, const int width, const int r,
                                    int* __restrict__ out) {
    const long long pixels = (long long)height * width;
    GRID_STRIDE_LOOP(i, pixels * planes) {
        const long long row = i - (i % width);
        const int x = (int)(i % width);
        int total = 0;
        for (int k = -r; k <= r; ++k) total += in[row + clamp_index(x + k, width)];
        out[i] = total;
    }
}

// Sums along columns over y - r .. y + r (border pixels repeated), then the rounded mean over
// the `count` = (2r + 1)^2 window pixels: (sum + count / 2) / count.
extern "C" __global__ void box_columns_mean(const int* __restrict__ in, const int planes,
                                            const int height, const int width, const int r,
                                            const int count, int* __restrict__ out) {
    const long long pixels = (long long)height * width;
    GRID_STRIDE_LOOP(i, pixels * planes) {
        const long long plane = i - (i % pixels);
        const long long u = i % pixels;
        const int y = (int)(u / width), x = (int)(u % width);
        int total = 0;
        for (int k = -r; k <= r; ++k) {
            total += in[plane + (long long)clamp_index(y + k, height) * width + x];
        }
        out[i] = (total + count / 2) / count;
    }
}

// The right view's cheapest disparity: right pixel (y, x) matches left (y, x + d), so its cost
// at d is costs[d, y, x + d], for the d with x + d < W; the smallest d on ties.
extern "C" __global__ void right_view_labels(const int* __restrict__ costs,
                                             const int num_labels, const int height,
                                             const int width, int* __restrict__ labels) {
    const long long pixels = (long long)height * width;
    GRID_STRIDE_LOOP(u, pixels) {
        const int x = (int)(u % width);
        int best = 0;
        int best_cost = costs[u];
        for (int d = 1; d < num_labels && x + d < width; ++d) {
            const int c = costs[d * pixels + u + d];
            if (c < best_cost) {
                best_cost = c;
                best = d;
            }
        }
        labels[u] = best;
    }
}
