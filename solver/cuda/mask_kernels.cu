// The app's mask updates on the GPU (gui/sharing.py, MaskUpdate.between): the bounding
// rectangle of the pixels that changed between two masks, and one rectangle of a mask as packed
// bits (NumPy's packbits of the rectangle: row-major, 8 pixels per byte, first pixel in the
// high bit, the last byte padded with zeros). Shipped precompiled (solver/cuda/_variants.py).
//
// Grid-stride loops with MASK_THREADS threads per block.

#define MASK_THREADS 256

#define GRID_STRIDE_LOOP(index, count)                                                      \
    for (long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;              \
         index < (count); index += (long long)gridDim.x * blockDim.x)

// bounds = {first row, last row, first column, last column} of the pixels where old != new
// (atomicMin / atomicMax; start at {~0, 0, ~0, 0}); bounds[4] += the changed pixels.
extern "C" __global__ void __launch_bounds__(MASK_THREADS) mask_changes(
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
extern "C" __global__ void __launch_bounds__(MASK_THREADS) pack_bits(
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
extern "C" __global__ void __launch_bounds__(MASK_THREADS) count_true(
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
