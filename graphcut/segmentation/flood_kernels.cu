// Part labels of a bool mask for the clean-up (flood.py beside this file): tile passes that settle
// every pixel of the mask on the smallest label of its 4-connected part, as grid_kernels.cu's
// BFS tiles settle distances. The labels start as the pixels' flat indices (mask_kernels.cu's
// label_init; LABEL_NONE outside the mask). Unlike the grid-stride kernels of mask_kernels.cu
// this one needs a block of LABEL_TILE x LABEL_TILE threads, one a pixel, synchronised: the
// tests model it in NumPy (tests/gpu_model.py) and run it on the GPU. Shipped precompiled
// (solver/cuda/_variants.py).

#include "graphcut_cuda.cuh"

#ifndef LABEL_TILE
#error "LABEL_TILE is passed with -D by graphcut's kernel loader"
#endif

// One pass over the dirty LABEL_TILE x LABEL_TILE tiles (one block each, a thread a pixel): the
// tile takes the minimum label over 4-neighbours of the mask in shared memory until it is
// stable, reading its one-pixel halo from global memory, then flags (in next_dirty and
// *any_dirty) each neighbouring tile across a side where a border pixel's label changed. The
// host repeats passes, alternating the two flag arrays, until no tile is flagged; pixels outside
// the mask hold LABEL_NONE and never lower a neighbour's label.
extern "C" __global__ void __launch_bounds__(LABEL_TILE * LABEL_TILE) label_tile(
    const int h, const int w, int* __restrict__ label, int* __restrict__ dirty,
    int* __restrict__ next_dirty, int* __restrict__ any_dirty)
{
    constexpr int HALO = LABEL_TILE + 2;
    __shared__ int tile[HALO * HALO];
    const int tiles_x = gridDim.x, tiles_y = gridDim.y;
    const int tile_index = blockIdx.y * tiles_x + blockIdx.x;
    if (!dirty[tile_index]) return;  // uniform across the block
    const int lx = threadIdx.x, ly = threadIdx.y;
    const int x = blockIdx.x * LABEL_TILE + lx, y = blockIdx.y * LABEL_TILE + ly;
    const bool inside = x < w && y < h;
    const long long p = (long long)y * w + x;
    const int s = (ly + 1) * HALO + (lx + 1);
    int mine = inside ? label[p] : LABEL_NONE;
    tile[s] = mine;
    if (lx == 0) tile[s - 1] = (inside && x > 0) ? label[p - 1] : LABEL_NONE;
    if (lx == LABEL_TILE - 1) tile[s + 1] = (inside && x + 1 < w) ? label[p + 1] : LABEL_NONE;
    if (ly == 0) tile[s - HALO] = (inside && y > 0) ? label[p - w] : LABEL_NONE;
    if (ly == LABEL_TILE - 1) tile[s + HALO] = (inside && y + 1 < h) ? label[p + w] : LABEL_NONE;
    __syncthreads();
    if (lx == 0 && ly == 0) dirty[tile_index] = 0;  // this pass consumes the flag
    const int start = mine;
    const bool member = mine != LABEL_NONE;
    bool again = true;
    while (again) {
        int best = mine;
        if (member) {
            best = min(best, min(min(tile[s - 1], tile[s + 1]), min(tile[s - HALO], tile[s + HALO])));
        }
        const bool improved = best < mine;
        __syncthreads();  // everyone has read before anyone writes
        if (improved) { mine = best; tile[s] = mine; }
        again = __syncthreads_or(improved);
    }
    const bool changed = inside && mine != start;
    if (changed) label[p] = mine;
    if (__syncthreads_or(changed && lx == 0) && lx == 0 && ly == 0 && blockIdx.x > 0) {
        next_dirty[tile_index - 1] = 1; *any_dirty = 1; }
    if (__syncthreads_or(changed && lx == LABEL_TILE - 1) && lx == 0 && ly == 0
        && blockIdx.x + 1 < tiles_x) {
        next_dirty[tile_index + 1] = 1; *any_dirty = 1; }
    if (__syncthreads_or(changed && ly == 0) && lx == 0 && ly == 0 && blockIdx.y > 0) {
        next_dirty[tile_index - tiles_x] = 1; *any_dirty = 1; }
    if (__syncthreads_or(changed && ly == LABEL_TILE - 1) && lx == 0 && ly == 0
        && blockIdx.y + 1 < tiles_y) {
        next_dirty[tile_index + tiles_x] = 1; *any_dirty = 1; }
}

