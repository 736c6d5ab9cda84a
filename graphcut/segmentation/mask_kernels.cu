// The app's mask updates on the GPU (gui/sharing.py, MaskUpdate.between): the bounding
// rectangle of the pixels that changed between two masks, and one rectangle of a mask as packed
// bits (NumPy's packbits of the rectangle: row-major, 8 pixels per byte, first pixel in the
// high bit, the last byte padded with zeros). And the grid-stride parts of the clean-up's flood
// fills (flood.py beside this file): the region's 4-neighbour arcs and start pixels for
// grid_kernels.cu's tile BFS, the pixels it reached, and the part labels and sizes that
// flood_kernels.cu's tile passes settle. Shipped precompiled (solver/cuda/_variants.py).
//
// Grid-stride loops with GRAPHCUT_THREADS threads per block.

#include "graphcut_cuda.cuh"


// bounds = {first row, last row, first column, last column} of the pixels where old != new
// (atomicMin / atomicMax; start at {~0, 0, ~0, 0}); bounds[4] += the changed pixels.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) mask_changes(
    const long long h, const long long w, const bool* __restrict__ old_mask,
    const bool* __restrict__ new_mask, unsigned long long* __restrict__ bounds)
{
    unsigned long long top = ~0ull, bottom = 0, left = ~0ull, right = 0, changed = 0;
    GRID_STRIDE_LOOP(p, h * w) {
        if (old_mask[p] != new_mask[p]) {
            const unsigned long long y = (unsigned long long)(p / w);
            const unsigned long long x = (unsigned long long)(p % w);
            top = y < top ? y : top;
            bottom = y > bottom ? y : bottom;
            left = x < left ? x : left;
            right = x > right ? x : right;
            ++changed;
        }
    }
    if (changed) {  // rare: only the threads that saw a change
        atomicMin(&bounds[0], top);
        atomicMax(&bounds[1], bottom);
        atomicMin(&bounds[2], left);
        atomicMax(&bounds[3], right);
        atomicAdd(&bounds[4], changed);
    }
}

// bits = packbits(mask[row0:row0 + rows, col0:col0 + cols]) of a row-major mask `width`
// pixels wide: ceil(rows * cols / 8) bytes.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) pack_bits(
    const long long rows, const long long cols, const long long row0, const long long col0,
    const long long width, const bool* __restrict__ mask, unsigned char* __restrict__ bits)
{
    const long long count = rows * cols;
    GRID_STRIDE_LOOP(b, (count + 7) / 8) {
        unsigned int byte = 0;
        for (int k = 0; k < 8; ++k) {
            const long long i = b * 8 + k;
            bool value = false;
            if (i < count) {
                value = mask[(row0 + i / cols) * width + col0 + i % cols];
            }
            byte |= (value ? 1u : 0u) << (7 - k);
        }
        bits[b] = (unsigned char)byte;
    }
}

// *count += the true pixels of the n-pixel mask.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) count_true(
    const long long n, const bool* __restrict__ mask, unsigned long long* __restrict__ count)
{
    unsigned long long found = 0;
    GRID_STRIDE_LOOP(p, n) {
        found += mask[p] ? 1 : 0;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        found += __shfl_down_sync(0xffffffffu, found, offset);
    }
    if ((threadIdx.x & 31) == 0 && found) {
        atomicAdd(count, found);
    }
}

// Flood fill, step 1: the region is the pixels where mask[p] != invert. arcs[p] gets bit k when
// p and its neighbour in direction k (0 right, 1 left, 2 down, 3 up: grid_kernels.cu's BFS
// order) are both in the region; height[p] = 1 for the region's start pixels (seeds[p] ==
// start_label, or any pixel on the image border when border_starts), inf for every other pixel.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) flood_init(
    const int h, const int w, const int inf, const bool* __restrict__ mask, const int invert,
    const unsigned char* __restrict__ seeds, const int start_label, const int border_starts,
    unsigned char* __restrict__ arcs, int* __restrict__ height)
{
    const bool outside_value = invert != 0;  // mask value of the pixels outside the region
    GRID_STRIDE_LOOP(p, (long long)h * w) {
        const int y = (int)(p / w), x = (int)(p % w);
        const bool in = mask[p] != outside_value;
        unsigned bits = 0;
        if (in) {
            if (x + 1 < w && mask[p + 1] != outside_value) bits |= 1u;
            if (x > 0 && mask[p - 1] != outside_value) bits |= 2u;
            if (y + 1 < h && mask[p + w] != outside_value) bits |= 4u;
            if (y > 0 && mask[p - w] != outside_value) bits |= 8u;
        }
        arcs[p] = (unsigned char)bits;
        const bool border = x == 0 || y == 0 || x == w - 1 || y == h - 1;
        const bool start = in && ((int)seeds[p] == start_label || (border_starts && border));
        height[p] = start ? 1 : inf;
    }
}

// Flood fill, step 2: out[p] = p is in the region (mask[p] != invert) and the flood reached it
// (height < inf), or, with unreached, did not reach it; *count += the true pixels of out.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) flood_result(
    const long long n, const int inf, const int* __restrict__ height,
    const bool* __restrict__ mask, const int invert, const int unreached,
    bool* __restrict__ out, unsigned long long* __restrict__ count)
{
    unsigned long long found = 0;
    GRID_STRIDE_LOOP(p, n) {
        const bool in = mask[p] != (invert != 0);
        const bool reached = height[p] < inf;
        const bool value = in && (reached != (unreached != 0));
        out[p] = value;
        found += value ? 1 : 0;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        found += __shfl_down_sync(0xffffffffu, found, offset);
    }
    if ((threadIdx.x & 31) == 0 && found) {
        atomicAdd(count, found);
    }
}

// Parts (4-connected) of a bool mask, for the sizes of the clean-up's holes: every pixel of the
// mask is labelled with the smallest flat index of its part (LABEL_NONE outside the mask): these
// kernels start and use the labels, flood_kernels.cu's label_tile spreads them.

// label[p] = p inside the mask, LABEL_NONE outside.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) label_init(
    const long long n, const bool* __restrict__ mask, int* __restrict__ label)
{
    GRID_STRIDE_LOOP(p, n) {
        label[p] = mask[p] ? (int)p : LABEL_NONE;
    }
}

// sizes[label[p]] += 1 for every labelled pixel (sizes zeroed, n entries).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) label_sizes(
    const long long n, const int* __restrict__ label, unsigned int* __restrict__ sizes)
{
    GRID_STRIDE_LOOP(p, n) {
        const int l = label[p];
        if (l != LABEL_NONE) atomicAdd(&sizes[l], 1u);
    }
}

// mask[p] = true where p's part has fewer than max_area pixels.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) set_small_parts(
    const long long n, const int* __restrict__ label, const unsigned int* __restrict__ sizes,
    const unsigned int max_area, bool* __restrict__ mask)
{
    GRID_STRIDE_LOOP(p, n) {
        const int l = label[p];
        if (l != LABEL_NONE && sizes[l] < max_area) mask[p] = true;
    }
}
