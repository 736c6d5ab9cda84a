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

// Arm lengths (left, right, up, down; 4 planes of H x W) of the cross-based support region of
// every pixel of the (H, W, C) left image: an arm grows while the next pixel is inside the
// image, differs from the anchor by at most `threshold` in every channel (not tested for the
// first `minimum` steps), and is at most `length` long.
extern "C" __global__ void cross_arms(const int* __restrict__ levels, const int channels,
                                      const int height, const int width, const int threshold,
                                      const int length, const int minimum,
                                      int* __restrict__ arms) {
    const long long pixels = (long long)height * width;
    GRID_STRIDE_LOOP(u, pixels) {
        const int y = (int)(u / width), x = (int)(u % width);
        const int steps[4][2] = {{0, -1}, {0, 1}, {-1, 0}, {1, 0}};
        for (int a = 0; a < 4; ++a) {
            int arm = 0;
            for (int k = 1; k <= length; ++k) {
                const int yy = y + k * steps[a][0], xx = x + k * steps[a][1];
                if (yy < 0 || yy >= height || xx < 0 || xx >= width) break;
                const long long v = (long long)yy * width + xx;
                bool close = true;
                for (int c = 0; c < channels; ++c) {
                    const int delta = levels[v * channels + c] - levels[u * channels + c];
                    if (delta > threshold || -delta > threshold) close = false;
                }
                if (!close && k > minimum) break;
                arm = k;
            }
            arms[a * pixels + u] = arm;
        }
    }
}

// Sums along rows over each pixel's horizontal arms, for `planes` (H, W) planes.
extern "C" __global__ void cross_rows(const int* __restrict__ in, const int planes,
                                      const int height, const int width,
                                      const int* __restrict__ arms, int* __restrict__ out) {
    const long long pixels = (long long)height * width;
    GRID_STRIDE_LOOP(i, pixels * planes) {
        const long long u = i % pixels;
        const int left = arms[u], right = arms[pixels + u];
        int total = 0;
        for (int k = -left; k <= right; ++k) total += in[i + k];
        out[i] = total;
    }
}

// Sums of the row sums over each pixel's vertical arms, then the rounded mean over the
// region's pixels: the count is the sum of the horizontal segments' lengths.
extern "C" __global__ void cross_columns_mean(const int* __restrict__ in, const int planes,
                                              const int height, const int width,
                                              const int* __restrict__ arms,
                                              int* __restrict__ out) {
    const long long pixels = (long long)height * width;
    GRID_STRIDE_LOOP(i, pixels * planes) {
        const long long u = i % pixels;
        const int up = arms[2 * pixels + u], down = arms[3 * pixels + u];
        long long total = 0, count = 0;
        for (int k = -up; k <= down; ++k) {
            const long long v = u + (long long)k * width;
            total += in[i + (long long)k * width];
            count += arms[v] + arms[pixels + v] + 1;
        }
        out[i] = (int)((total + count / 2) / count);
    }
}
