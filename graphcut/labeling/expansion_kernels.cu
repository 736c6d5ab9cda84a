// Expansion moves of a labelling on a 4-connected H x W grid, on the GPU.
//
// One thread per pixel u = y * W + x (row-major). Labels, data costs and smoothness weights
// are int32. The pairwise cost of neighbours p, q is  V = w_pq * min(|f_p - f_q|, cap)
// (cap = 1: Potts). The formulas match graphcut/labeling/_expansion.py's NumPy code term by
// term, so both produce the same integers; see that module's docstring for the construction.
//
// Edge weights: horizontal[y * (W - 1) + x] joins (y, x) and (y, x + 1);
//               vertical[y * W + x] joins (y, x) and (y + 1, x).

#include "graphcut_cuda.cuh"

__device__ __forceinline__ long long pair_cost(int w, int a, int b, int cap) {
    int d = a > b ? a - b : b - a;
    return (long long)w * (long long)(d < cap ? d : cap);
}

// The min-cut network of the expansion move for `alpha` (source side = keep, sink side =
// switch to alpha), and each pixel's share of the move's constant:
//   source[u], sink[u]   terminal capacities, at most one of them non-zero;
//   right[y * (W-1) + x] capacity of (y, x) -> (y, x + 1);  down[y * W + x] of (y, x) -> (y+1, x);
//   offset[u]            A of the edges leaving u to the right and down, plus min(keep, switch).
extern "C" __global__ void expansion_network(
    const int* __restrict__ cost_alpha, const int* __restrict__ current,
    const int* __restrict__ labels, const int* __restrict__ horizontal,
    const int* __restrict__ vertical, const int alpha, const int cap, const int height,
    const int width, int* __restrict__ source, int* __restrict__ sink, int* __restrict__ right,
    int* __restrict__ down, long long* __restrict__ offset) {
    const long long n = (long long)height * width;
    GRID_STRIDE_LOOP(u, n) {
        const int y = (int)(u / width), x = (int)(u % width);
        const int lp = labels[u];
        long long keep = current[u];
        long long change = cost_alpha[u];
        long long constant = 0;
        if (x + 1 < width) {  // edge p = u, q = right neighbour
            const int w = horizontal[(long long)y * (width - 1) + x];
            const int lq = labels[u + 1];
            const long long a = pair_cost(w, lp, lq, cap), b = pair_cost(w, lp, alpha, cap),
                            c = pair_cost(w, alpha, lq, cap);
            change += c - a;
            constant += a;
            right[(long long)y * (width - 1) + x] = (int)(b + c - a);
        }
        if (x > 0) {  // edge p = left neighbour, q = u
            const int w = horizontal[(long long)y * (width - 1) + x - 1];
            change -= pair_cost(w, alpha, lp, cap);
        }
        if (y + 1 < height) {
            const int w = vertical[u];
            const int lq = labels[u + width];
            const long long a = pair_cost(w, lp, lq, cap), b = pair_cost(w, lp, alpha, cap),
                            c = pair_cost(w, alpha, lq, cap);
            change += c - a;
            constant += a;
            down[u] = (int)(b + c - a);
        }
        if (y > 0) {
            const int w = vertical[u - width];
            change -= pair_cost(w, alpha, lp, cap);
        }
        const long long shared = keep < change ? keep : change;
        source[u] = (int)(change - shared);
        sink[u] = (int)(keep - shared);
        offset[u] = constant + shared;
    }
}

// Applies a cut: pixels off the source side switch to `alpha`. Writes the proposed labels and
// their data costs, and per pixel its energy share (data cost plus the pairwise costs of the
// edges to its right and lower neighbours under the proposal) and whether it changed label.
extern "C" __global__ void apply_cut(
    const bool* __restrict__ source_side, const int* __restrict__ labels,
    const int* __restrict__ current, const int* __restrict__ cost_alpha,
    const int* __restrict__ horizontal, const int* __restrict__ vertical, const int alpha,
    const int cap, const int height, const int width, int* __restrict__ proposal,
    int* __restrict__ proposal_cost, long long* __restrict__ energy,
    long long* __restrict__ changed) {
    const long long n = (long long)height * width;
    GRID_STRIDE_LOOP(u, n) {
        const int y = (int)(u / width), x = (int)(u % width);
        const bool keep = source_side[u];
        const int lp = keep ? labels[u] : alpha;
        const int cost = keep ? current[u] : cost_alpha[u];
        long long total = cost;
        if (x + 1 < width) {
            const int lq = source_side[u + 1] ? labels[u + 1] : alpha;
            total += pair_cost(horizontal[(long long)y * (width - 1) + x], lp, lq, cap);
        }
        if (y + 1 < height) {
            const int lq = source_side[u + width] ? labels[u + width] : alpha;
            total += pair_cost(vertical[u], lp, lq, cap);
        }
        proposal[u] = lp;
        proposal_cost[u] = cost;
        energy[u] = total;
        changed[u] = lp != labels[u];
    }
}

// Per pixel energy share of a labelling (data cost of its label given in `cost`, plus the
// pairwise costs of the edges to its right and lower neighbours).
extern "C" __global__ void energy_terms(
    const int* __restrict__ labels, const int* __restrict__ cost,
    const int* __restrict__ horizontal, const int* __restrict__ vertical, const int cap,
    const int height, const int width, long long* __restrict__ energy) {
    const long long n = (long long)height * width;
    GRID_STRIDE_LOOP(u, n) {
        const int y = (int)(u / width), x = (int)(u % width);
        const int lp = labels[u];
        long long total = cost[u];
        if (x + 1 < width) {
            total += pair_cost(horizontal[(long long)y * (width - 1) + x], lp, labels[u + 1], cap);
        }
        if (y + 1 < height) total += pair_cost(vertical[u], lp, labels[u + width], cap);
        energy[u] = total;
    }
}

// The cheapest label of every pixel (the first one on ties, as numpy.argmin) and its cost.
// costs is (L, H, W).
extern "C" __global__ void cheapest_label(const int* __restrict__ costs, const int num_labels,
                                          const long long num_pixels, int* __restrict__ labels,
                                          int* __restrict__ cost) {
    GRID_STRIDE_LOOP(u, num_pixels) {
        int best = 0;
        int best_cost = costs[u];
        for (int label = 1; label < num_labels; ++label) {
            const int c = costs[(long long)label * num_pixels + u];
            if (c < best_cost) {
                best_cost = c;
                best = label;
            }
        }
        labels[u] = best;
        cost[u] = best_cost;
    }
}

// floor(d / 2) for any int d (C's division truncates towards zero), as NumPy's `d >> 1`.
__device__ __forceinline__ long long half_floor(long long d) { return (d - (d < 0)) / 2; }

// graphcut/labeling/_balance.py's `balanced` in one pass: every pair of opposite arcs shares
// its capacity (a flow of floor((forward - backward) / 2) pushed along the forward arc), then
// each pixel's terminals net. Pixel u gathers the shifts of its four edges (no atomics but the
// flag). Writes the new network, per pixel what its sink capacity lost (`removed`: the offset
// is their sum), and sets *overflow to 1 when a netted terminal leaves int32 (the caller then
// solves the network as given). Arc arrays as in GridNetwork: down/up (H-1, W),
// right/left (H, W-1).
extern "C" __global__ void balance_network(
    const int* __restrict__ source, const int* __restrict__ sink, const int* __restrict__ down,
    const int* __restrict__ up, const int* __restrict__ right, const int* __restrict__ left,
    const int height, const int width, int* __restrict__ new_source,
    int* __restrict__ new_sink, int* __restrict__ new_down, int* __restrict__ new_up,
    int* __restrict__ new_right, int* __restrict__ new_left, long long* __restrict__ removed,
    int* __restrict__ overflow) {
    const long long n = (long long)height * width;
    const long long int32_max = 2147483647LL;
    GRID_STRIDE_LOOP(u, n) {
        const int y = (int)(u / width), x = (int)(u % width);
        long long net = (long long)source[u] - (long long)sink[u];
        if (y + 1 < height) {  // u is the tail of the arc down
            const long long shift = half_floor((long long)down[u] - up[u]);
            new_down[u] = (int)(down[u] - shift);
            new_up[u] = (int)(up[u] + shift);
            net -= shift;
        }
        if (y > 0) net += half_floor((long long)down[u - width] - up[u - width]);
        const long long row = (long long)y * (width - 1);
        if (x + 1 < width) {  // u is the tail of the arc right
            const long long shift = half_floor((long long)right[row + x] - left[row + x]);
            new_right[row + x] = (int)(right[row + x] - shift);
            new_left[row + x] = (int)(left[row + x] + shift);
            net -= shift;
        }
        if (x > 0) net += half_floor((long long)right[row + x - 1] - left[row + x - 1]);
        const long long out = net > 0 ? net : 0, in = net < 0 ? -net : 0;
        if (out > int32_max || in > int32_max) atomicMax(overflow, 1);
        new_source[u] = (int)(out > int32_max ? int32_max : out);
        new_sink[u] = (int)(in > int32_max ? int32_max : in);
        removed[u] = (long long)sink[u] - in;
    }
}
