// The segmentation energy on the GPU (graphcut/energy.py's CuPy path, host code in
// energy_kernels.py beside this file): the image as float64 values, the neighbour colour differences and
// their sum (sigma), the n-link weights and their integer capacities, the seed checks, the
// histogram cell of every pixel, the seed histograms, the hard-constraint capacities and the
// terminal capacities by table lookup. Shipped precompiled (solver/cuda/_variants.py), so a
// machine's first segmentation does not wait for NVRTC to compile CuPy's element-wise kernels.
//
// Every formula is the float64 one of the NumPy path, in the same order of operations, so the
// values are identical except where CUDA's exp differs from the host's in the last bit (as
// CuPy's did). Reductions over pixels are integer atomics (exact), ordered-key atomics for
// min / max (exact), or per-block float64 partial sums that the host adds (deterministic).
//
// Every kernel is a grid-stride loop launched with GRAPHCUT_THREADS threads per block; images are
// flat over their pixels (row-major), with C interleaved channels where they have channels.

#include "graphcut_cuda.cuh"

#define INT32_LIMIT 2147483647.0

// A key whose unsigned order is the order of the doubles (for atomicMin / atomicMax).
__device__ __forceinline__ unsigned long long ordered_key(double value)
{
    const unsigned long long bits = (unsigned long long)__double_as_longlong(value);
    return (bits >> 63) ? ~bits : (bits | 0x8000000000000000ull);
}

__device__ __forceinline__ bool is_finite(double value)
{
    return ((unsigned long long)__double_as_longlong(value) & 0x7ff0000000000000ull)
        != 0x7ff0000000000000ull;
}

// Warp-level reductions; lane 0 ends with the warp's result. (The blockDim test is uniform on
// the GPU, where blocks have GRAPHCUT_THREADS threads; it lets the kernels run as host C++ with
// one thread per block in the tests, tests/fake_cupy.py.)
__device__ __forceinline__ unsigned long long warp_max(unsigned long long value)
{
    for (int offset = blockDim.x > 1 ? 16 : 0; offset > 0; offset /= 2) {
        const unsigned long long other = __shfl_down_sync(0xffffffffu, value, offset);
        value = other > value ? other : value;
    }
    return value;
}

__device__ __forceinline__ unsigned long long warp_min(unsigned long long value)
{
    for (int offset = blockDim.x > 1 ? 16 : 0; offset > 0; offset /= 2) {
        const unsigned long long other = __shfl_down_sync(0xffffffffu, value, offset);
        value = other < value ? other : value;
    }
    return value;
}

__device__ __forceinline__ unsigned long long warp_sum(unsigned long long value)
{
    for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    return value;
}

// The block's sum of `value` (one per thread), valid in thread 0; a fixed order of additions.
__device__ __forceinline__ double block_sum(double value)
{
    __shared__ double partial[GRAPHCUT_THREADS / 32];
    for (int offset = 16; offset > 0; offset /= 2) {
        value += __shfl_down_sync(0xffffffffu, value, offset);
    }
    if ((threadIdx.x & 31) == 0) {
        partial[threadIdx.x / 32] = value;
    }
    __syncthreads();
    value = 0.0;
    if (threadIdx.x == 0) {
        for (int warp = 0; warp < GRAPHCUT_THREADS / 32; ++warp) {
            value += partial[warp];
        }
    }
    return value;
}

// ---- the image as float64 ------------------------------------------------------------------

__device__ __forceinline__ double half_bits_to_double(unsigned short bits)
{
    const int sign = bits >> 15;
    const int exponent = (bits >> 10) & 0x1f;
    const int mantissa = bits & 0x3ff;
    double value;
    if (exponent == 0) {
        value = ldexp((double)mantissa, -24);                  // zero or subnormal
    } else if (exponent == 31) {
        value = __longlong_as_double(mantissa ? 0x7ff8000000000000LL     // NaN
                                              : 0x7ff0000000000000LL);   // infinity
    } else {
        value = ldexp((double)(mantissa | 0x400), exponent - 25);
    }
    return sign ? -value : value;
}

template <typename T> __device__ __forceinline__ double as_double(T value) { return (double)value; }
template <> __device__ __forceinline__ double as_double<bool>(bool value) { return value ? 1.0 : 0.0; }

// values[p * channels + c] = image[p, c] as float64, divided by `divisor` when it is not 0 (the
// dtype's maximum for integers). The image is read through element strides: pixel p is
// (i0, i1, i2) over the spatial extents (n0, n1, n2) = (n / (n1 * n2), n1, n2), at element
// offset i0 * s0 + i1 * s1 + i2 * s2, its channel c another c * sc on. Float images: every
// non-finite value adds 1 to *nonfinite. `half`: the elements are IEEE half-precision bits.
template <typename T>
__device__ __forceinline__ void image_to_float(
    long long n, int channels, long long n1, long long n2, long long s0, long long s1,
    long long s2, long long sc, double divisor, bool check_finite, bool half,
    const T* image, double* values, unsigned long long* nonfinite)
{
    unsigned long long bad = 0;
    GRID_STRIDE_LOOP(p, n) {
        const long long i2 = p % n2;
        const long long i1 = (p / n2) % n1;
        const long long i0 = p / (n2 * n1);
        const long long offset = i0 * s0 + i1 * s1 + i2 * s2;
        for (int c = 0; c < channels; ++c) {
            const T raw = image[offset + c * sc];
            double value = half ? half_bits_to_double((unsigned short)raw) : as_double<T>(raw);
            if (check_finite && !is_finite(value)) {
                ++bad;
            }
            if (divisor != 0.0) {
                value = value / divisor;
            }
            values[p * channels + c] = value;
        }
    }
    if (bad) {
        atomicAdd(nonfinite, bad);
    }
}

#define IMAGE_TO_FLOAT(suffix, T, check, half)                                              \
    extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) image_to_float_##suffix(   \
        const long long n, const int channels, const long long n1, const long long n2,      \
        const long long s0, const long long s1, const long long s2, const long long sc,     \
        const double divisor, const T* __restrict__ strided_image,                          \
        double* __restrict__ values, unsigned long long* __restrict__ nonfinite)            \
    {                                                                                       \
        image_to_float<T>(n, channels, n1, n2, s0, s1, s2, sc, divisor, check, half,        \
                          strided_image, values, nonfinite);                                \
    }

IMAGE_TO_FLOAT(b1, bool, false, false)
IMAGE_TO_FLOAT(u1, unsigned char, false, false)
IMAGE_TO_FLOAT(u2, unsigned short, false, false)
IMAGE_TO_FLOAT(u4, unsigned int, false, false)
IMAGE_TO_FLOAT(u8, unsigned long long, false, false)
IMAGE_TO_FLOAT(i1, signed char, false, false)
IMAGE_TO_FLOAT(i2, short, false, false)
IMAGE_TO_FLOAT(i4, int, false, false)
IMAGE_TO_FLOAT(i8, long long, false, false)
IMAGE_TO_FLOAT(f2, unsigned short, true, true)
IMAGE_TO_FLOAT(f4, float, true, false)
IMAGE_TO_FLOAT(f8, double, true, false)

// ---- neighbour differences, weights, capacities ---------------------------------------------

// For the neighbour pairs along `axis` (0, 1, 2 of the spatial extents (n0, n1, n2); a 2-D
// image has n0 = 1): out[q] = sum over the channels of (values[q + step] - values[q])**2, added
// in channel order from 0.0 (NumPy's order), with q over the extents less one along `axis`.
// partials[blockIdx.x] = the block's sum of its out values.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) neighbour_differences(
    const long long n0, const long long n1, const long long n2, const int axis,
    const int channels, const double* __restrict__ values, double* __restrict__ out,
    double* __restrict__ partials)
{
    const long long m1 = axis == 1 ? n1 - 1 : n1;
    const long long m2 = axis == 2 ? n2 - 1 : n2;
    const long long m0 = axis == 0 ? n0 - 1 : n0;
    const long long count = m0 * m1 * m2;
    const long long step = axis == 2 ? 1 : (axis == 1 ? n2 : n1 * n2);
    double sum = 0.0;
    GRID_STRIDE_LOOP(q, count) {
        const long long i2 = q % m2;
        const long long i1 = (q / m2) % m1;
        const long long i0 = q / (m2 * m1);
        const long long p = (i0 * n1 + i1) * n2 + i2;
        double d = 0.0;
        for (int c = 0; c < channels; ++c) {
            const double difference = values[(p + step) * channels + c] - values[p * channels + c];
            // explicit rounding: no fused multiply-add, so the sum equals NumPy's bit for bit
            d = __dadd_rn(d, __dmul_rn(difference, difference));
        }
        out[q] = d;
        sum += d;
    }
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = sum;
    }
}

// In place: d -> exp(d * exponent), times `factor` unless it is 1 (NumPy's formula).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) nlink_weights(
    const long long n, const double exponent, const double factor, double* __restrict__ values)
{
    GRID_STRIDE_LOOP(i, n) {
        double weight = exp(values[i] * exponent);
        if (factor != 1.0) {
            weight = weight * factor;
        }
        values[i] = weight;
    }
}

// out[i] = rint((lam * values[i]) * scale) as int32 where that is finite and in range;
// stats[0] = the ordered key of the largest rounded value (atomicMax; start at 0),
// stats[1] += the values that are negative or not finite.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) quantize(
    const long long n, const double lam, const double scale, const double* __restrict__ values,
    int* __restrict__ out, unsigned long long* __restrict__ stats)
{
    unsigned long long largest = 0, bad = 0;
    GRID_STRIDE_LOOP(i, n) {
        const double scaled = rint((lam * values[i]) * scale);
        if (!is_finite(scaled) || scaled < 0.0) {
            ++bad;
            out[i] = 0;
            continue;
        }
        const unsigned long long key = ordered_key(scaled);
        largest = key > largest ? key : largest;
        out[i] = scaled <= INT32_LIMIT ? (int)scaled : 0;
    }
    largest = warp_max(largest);
    bad = warp_sum(bad);
    if ((threadIdx.x & 31) == 0) {
        if (largest) atomicMax(&stats[0], largest);
        if (bad) atomicAdd(&stats[1], bad);
    }
}

// pins[p] = 1 + the sum of the capacities of p's n-links (int64 sum), as int32 where it fits;
// stats[0] = the largest such sum + 1 (atomicMax; start at 0). The links are, last axis
// first: along x (n0, n1, n2 - 1), along y (n0, n1 - 1, n2) and, for a volume (ndim 3), along
// z (n0 - 1, n1, n2); a 2-D image passes n0 = 1 and any array as along_z.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) seed_pins(
    const long long n0, const long long n1, const long long n2, const int ndim,
    const int* __restrict__ along_x, const int* __restrict__ along_y,
    const int* __restrict__ along_z, int* __restrict__ pins,
    unsigned long long* __restrict__ stats)
{
    unsigned long long largest = 0;
    GRID_STRIDE_LOOP(p, n0 * n1 * n2) {
        const long long x = p % n2;
        const long long y = (p / n2) % n1;
        const long long z = p / (n2 * n1);
        long long pin = 1;
        if (x + 1 < n2) pin += along_x[(z * n1 + y) * (n2 - 1) + x];
        if (x > 0) pin += along_x[(z * n1 + y) * (n2 - 1) + x - 1];
        if (y + 1 < n1) pin += along_y[(z * (n1 - 1) + y) * n2 + x];
        if (y > 0) pin += along_y[(z * (n1 - 1) + y - 1) * n2 + x];
        if (ndim == 3) {
            if (z + 1 < n0) pin += along_z[p];
            if (z > 0) pin += along_z[p - n1 * n2];
        }
        largest = (unsigned long long)pin > largest ? (unsigned long long)pin : largest;
        pins[p] = pin <= 2147483647LL ? (int)pin : 0;
    }
    largest = warp_max(largest);
    if ((threadIdx.x & 31) == 0 && largest) {
        atomicMax(&stats[0], largest);
    }
}

// ---- seeds ------------------------------------------------------------------------------

// labels[p] = seeds[p] as uint8 (read through element strides, as image_to_float), and
// counts[0] += object seeds (1), counts[1] += background seeds (2), counts[2] += values other
// than 0, 1, 2 (their labels are left 0).
template <typename T>
__device__ __forceinline__ void seed_labels(
    long long n, long long n1, long long n2, long long s0, long long s1, long long s2,
    const T* seeds, unsigned char* labels, unsigned long long* counts)
{
    unsigned long long object = 0, background = 0, bad = 0;
    GRID_STRIDE_LOOP(p, n) {
        const long long i2 = p % n2;
        const long long i1 = (p / n2) % n1;
        const long long i0 = p / (n2 * n1);
        const T value = seeds[i0 * s0 + i1 * s1 + i2 * s2];
        unsigned char label = 0;
        if (value == (T)1) {
            label = 1;
            ++object;
        } else if (value == (T)2) {
            label = 2;
            ++background;
        } else if (value != (T)0) {
            ++bad;
        }
        labels[p] = label;
    }
    object = warp_sum(object);
    background = warp_sum(background);
    bad = warp_sum(bad);
    if ((threadIdx.x & 31) == 0) {
        if (object) atomicAdd(&counts[0], object);
        if (background) atomicAdd(&counts[1], background);
        if (bad) atomicAdd(&counts[2], bad);
    }
}

#define SEED_LABELS(suffix, T)                                                              \
    extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) seed_labels_##suffix(      \
        const long long n, const long long n1, const long long n2, const long long s0,      \
        const long long s1, const long long s2, const T* __restrict__ strided_seeds,        \
        unsigned char* __restrict__ labels, unsigned long long* __restrict__ counts)        \
    {                                                                                       \
        seed_labels<T>(n, n1, n2, s0, s1, s2, strided_seeds, labels, counts);               \
    }

SEED_LABELS(u1, unsigned char)
SEED_LABELS(u2, unsigned short)
SEED_LABELS(u4, unsigned int)
SEED_LABELS(u8, unsigned long long)
SEED_LABELS(i1, signed char)
SEED_LABELS(i2, short)
SEED_LABELS(i4, int)
SEED_LABELS(i8, long long)

// counts[v] += the pixels of value v > 0 of C-contiguous uint8 labels (counts[0] is left as
// it is): several objects' seeds listed and checked in one pass (graphcut/io/_seeds.py). Each
// block counts in shared memory, then adds its non-empty bins; the unlabelled pixels (most of
// them) are skipped, so the shared atomics meet only on the few seeded pixels.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) label_histogram_u1(
    const long long n, const unsigned char* __restrict__ labels,
    unsigned long long* __restrict__ counts)
{
    __shared__ unsigned int local[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) local[i] = 0;
    __syncthreads();
    GRID_STRIDE_LOOP(p, n) {
        const unsigned char value = labels[p];
        if (value) atomicAdd(&local[value], 1u);
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x) {
        if (local[i]) atomicAdd(&counts[i], (unsigned long long)local[i]);
    }
}

// cost[p] = table[the squared distance from cell p of a grid with `cols` columns to the
// nearest of the `count` >= 1 seeded cells (seed_rows[k], seed_cols[k])]: a label's locality
// cost per block (graphcut/segmentation/_locality.py) from exact integer distances, by brute
// force over the seeded cells (the caller bounds cells x count). The table holds the host's
// cost of every squared distance, so the values are the host path's.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) nearest_seed_cost(
    const long long cells, const int cols, const int count, const int* __restrict__ seed_rows,
    const int* __restrict__ seed_cols, const double* __restrict__ table,
    double* __restrict__ cost)
{
    GRID_STRIDE_LOOP(p, cells) {
        const long long row = p / cols, col = p % cols;
        long long best = 0x7fffffffffffffffLL;
        for (int k = 0; k < count; ++k) {
            const long long dr = row - seed_rows[k], dc = col - seed_cols[k];
            const long long d = dr * dr + dc * dc;
            best = d < best ? d : best;
        }
        cost[p] = table[best];
    }
}

// ---- colour histograms and terminal capacities -------------------------------------------

// Per channel c of values (n, channels): keys[2c] = the ordered key of its minimum (atomicMin;
// start at ~0), keys[2c + 1] of its maximum (atomicMax; start at 0). At most 3 channels.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) channel_range(
    const long long n, const int channels, const double* __restrict__ values,
    unsigned long long* __restrict__ keys)
{
    unsigned long long low[3] = {~0ull, ~0ull, ~0ull}, high[3] = {0ull, 0ull, 0ull};
    GRID_STRIDE_LOOP(p, n) {
        for (int c = 0; c < channels; ++c) {
            const unsigned long long key = ordered_key(values[p * channels + c]);
            low[c] = key < low[c] ? key : low[c];
            high[c] = key > high[c] ? key : high[c];
        }
    }
    for (int c = 0; c < channels; ++c) {
        const unsigned long long least = warp_min(low[c]);
        const unsigned long long most = warp_max(high[c]);
        if ((threadIdx.x & 31) == 0) {
            atomicMin(&keys[2 * c], least);
            atomicMax(&keys[2 * c + 1], most);
        }
    }
}

// index[p] = the joint histogram cell of pixel p: per channel
// q = clip(floor((v - low) / span * bins), 0, bins - 1), combined as ((q0 * bins) + q1) * bins
// + q2 (NumPy's formula, in float64).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) bin_cells(
    const long long n, const int channels, const int bins, const double low0,
    const double low1, const double low2, const double span0, const double span1,
    const double span2, const double* __restrict__ values, int* __restrict__ index)
{
    const double low[3] = {low0, low1, low2};
    const double span[3] = {span0, span1, span2};
    const double top = (double)(bins - 1);
    GRID_STRIDE_LOOP(p, n) {
        long long cell = 0;
        for (int c = 0; c < channels; ++c) {
            double q = floor((values[p * channels + c] - low[c]) / span[c] * (double)bins);
            q = q < 0.0 ? 0.0 : (q > top ? top : q);
            cell = cell * bins + (long long)q;
        }
        index[p] = (int)cell;
    }
}

// counts[cell] += object seeds in that cell, counts[cells + cell] += background seeds.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) seed_histograms(
    const long long n, const int cells, const int* __restrict__ index,
    const unsigned char* __restrict__ labels, unsigned long long* __restrict__ counts)
{
    GRID_STRIDE_LOOP(p, n) {
        const unsigned char label = labels[p];
        if (label == 1 || label == 2) {
            atomicAdd(&counts[(label - 1) * (long long)cells + index[p]], 1ull);
        }
    }
}

// Terminal capacities by one table lookup per pixel: source = source_table[index],
// sink = sink_table[index], except object seeds (source = pin, sink = 0) and background seeds
// (source = 0, sink = pin).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) capacities_from_tables(
    const long long n, const int* __restrict__ source_table, const int* __restrict__ sink_table,
    const int* __restrict__ index, const unsigned char* __restrict__ seeds,
    const int* __restrict__ pins, int* __restrict__ source, int* __restrict__ sink)
{
    GRID_STRIDE_LOOP(p, n) {
        const unsigned char seed = seeds[p];
        if (seed == 1) {
            source[p] = pins[p];
            sink[p] = 0;
        } else if (seed == 2) {
            source[p] = 0;
            sink[p] = pins[p];
        } else {
            const int cell = index[p];
            source[p] = source_table[cell];
            sink[p] = sink_table[cell];
        }
    }
}

// In place: object seeds (1) get source = pin, sink = 0; background seeds (2) the reverse.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) apply_seed_pins(
    const long long n, const unsigned char* __restrict__ seeds, const int* __restrict__ pins,
    int* __restrict__ source, int* __restrict__ sink)
{
    GRID_STRIDE_LOOP(p, n) {
        const unsigned char seed = seeds[p];
        if (seed == 1) {
            source[p] = pins[p];
            sink[p] = 0;
        } else if (seed == 2) {
            source[p] = 0;
            sink[p] = pins[p];
        }
    }
}

// costs[p] = table[index[p]] (float64 per-pixel costs of a per-cell table).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) lookup_costs(
    const long long n, const double* __restrict__ table, const int* __restrict__ index,
    double* __restrict__ costs)
{
    GRID_STRIDE_LOOP(p, n) {
        costs[p] = table[index[p]];
    }
}

// ---- one object's network and the capacity of a cut (graphcut/segmentation/_problems.py) ----

// The binary problem's terminal capacities and the parts of its energy offset, in one pass over
// an h x w grid (the generic path's dozen element-wise kernels and reductions): per pixel p,
// shift = min(min(cost_object, cost_background), 0), source = rint((cost_background - shift) *
// scale) and sink = rint((cost_object - shift) * scale) as int32 (range statistics as
// quantize's: stats[0] / stats[1] the source's largest ordered key / count of negative or
// non-finite values, stats[2] / stats[3] the sink's); then the constraint's pin: 1 (object)
// source = K_p, sink = 0; 2 (background) the reverse; K_p = 1 + the capacities of p's n-links
// (right (h, w - 1), down (h - 1, w)), int64, stats[4] = the largest K_p over every pixel
// (atomicMax, as seed_pins); stats[5] += constraint values other than 0, 1, 2.
// stats[6 + 2 * block] / stats[7 + 2 * block]: the block's float64 sums (their bits) of the
// free pixels' shifts and of the pinned pixels' costs of their label (times weights[p] when
// `weighted`): the host adds the blocks' sums in order (deterministic).
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) binary_capacities(
    const long long h, const long long w, const double scale,
    const double* __restrict__ cost_object, const double* __restrict__ cost_background,
    const unsigned char* __restrict__ constraints, const int weighted,
    const double* __restrict__ weights, const int* __restrict__ right,
    const int* __restrict__ down, int* __restrict__ source, int* __restrict__ sink,
    unsigned long long* __restrict__ stats)
{
    unsigned long long source_largest = 0, source_bad = 0, sink_largest = 0, sink_bad = 0;
    unsigned long long pin_largest = 0, bad_constraints = 0;
    double free_sum = 0.0, pinned_sum = 0.0;
    GRID_STRIDE_LOOP(p, h * w) {
        const double object = cost_object[p], background = cost_background[p];
        const double lower = object < background ? object : background;
        const double shift = lower < 0.0 ? lower : 0.0;
        const double to_source = rint((background - shift) * scale);
        const double to_sink = rint((object - shift) * scale);
        int source_value = 0, sink_value = 0;
        if (!is_finite(to_source) || to_source < 0.0) {
            ++source_bad;
        } else {
            const unsigned long long key = ordered_key(to_source);
            source_largest = key > source_largest ? key : source_largest;
            source_value = to_source <= INT32_LIMIT ? (int)to_source : 0;
        }
        if (!is_finite(to_sink) || to_sink < 0.0) {
            ++sink_bad;
        } else {
            const unsigned long long key = ordered_key(to_sink);
            sink_largest = key > sink_largest ? key : sink_largest;
            sink_value = to_sink <= INT32_LIMIT ? (int)to_sink : 0;
        }
        const long long x = p % w, y = p / w;
        long long pin = 1;
        if (x + 1 < w) pin += right[y * (w - 1) + x];
        if (x > 0) pin += right[y * (w - 1) + x - 1];
        if (y + 1 < h) pin += down[p];
        if (y > 0) pin += down[p - w];
        pin_largest = (unsigned long long)pin > pin_largest ? (unsigned long long)pin : pin_largest;
        const int pin_value = pin <= 2147483647LL ? (int)pin : 0;
        const unsigned char constraint = constraints[p];
        if (constraint == 1) {
            source_value = pin_value;
            sink_value = 0;
            pinned_sum += weighted ? object * weights[p] : object;
        } else if (constraint == 2) {
            source_value = 0;
            sink_value = pin_value;
            pinned_sum += weighted ? background * weights[p] : background;
        } else {
            if (constraint != 0) ++bad_constraints;
            free_sum += shift;
        }
        source[p] = source_value;
        sink[p] = sink_value;
    }
    source_largest = warp_max(source_largest);
    sink_largest = warp_max(sink_largest);
    pin_largest = warp_max(pin_largest);
    source_bad = warp_sum(source_bad);
    sink_bad = warp_sum(sink_bad);
    bad_constraints = warp_sum(bad_constraints);
    if ((threadIdx.x & 31) == 0) {
        if (source_largest) atomicMax(&stats[0], source_largest);
        if (source_bad) atomicAdd(&stats[1], source_bad);
        if (sink_largest) atomicMax(&stats[2], sink_largest);
        if (sink_bad) atomicAdd(&stats[3], sink_bad);
        if (pin_largest) atomicMax(&stats[4], pin_largest);
        if (bad_constraints) atomicAdd(&stats[5], bad_constraints);
    }
    free_sum = block_sum(free_sum);
    __syncthreads();  // block_sum's shared partials are reused
    pinned_sum = block_sum(pinned_sum);
    if (threadIdx.x == 0) {
        stats[6 + 2 * blockIdx.x] = (unsigned long long)__double_as_longlong(free_sum);
        stats[7 + 2 * blockIdx.x] = (unsigned long long)__double_as_longlong(pinned_sum);
    }
}

// total[0] += the capacity of the cut of an h x w grid network whose source side is `side`
// (bool): the source capacities of the sink side's pixels, the sink capacities of the source
// side's, and every n-link arc from the source side to the sink side (forward p -> p + e:
// right[p] / down[p] where p is on the source side and p + e is not; backward p + e -> p:
// right_back[p] / down_back[p] in the reverse case). Integer atomics: exact.
extern "C" __global__ void __launch_bounds__(GRAPHCUT_THREADS) cut_capacity_2d(
    const long long h, const long long w, const bool* __restrict__ side,
    const int* __restrict__ source, const int* __restrict__ sink,
    const int* __restrict__ right, const int* __restrict__ right_back,
    const int* __restrict__ down, const int* __restrict__ down_back,
    unsigned long long* __restrict__ total)
{
    unsigned long long sum = 0;
    GRID_STRIDE_LOOP(p, h * w) {
        const long long x = p % w, y = p / w;
        const bool here = side[p];
        sum += here ? (unsigned long long)sink[p] : (unsigned long long)source[p];
        if (x + 1 < w && here != side[p + 1]) {
            const long long link = y * (w - 1) + x;
            sum += here ? (unsigned long long)right[link] : (unsigned long long)right_back[link];
        }
        if (y + 1 < h && here != side[p + w]) {
            sum += here ? (unsigned long long)down[p] : (unsigned long long)down_back[p];
        }
    }
    sum = warp_sum(sum);
    if ((threadIdx.x & 31) == 0 && sum) {
        atomicAdd(total, sum);
    }
}
