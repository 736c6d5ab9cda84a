// Shared by graphcut's CUDA sources (the max-flow kernels here and the library's kernels beside
// their launchers), included as "graphcut_cuda.cuh": every build gets -I to this folder.
//
// The kernels' compile-time constants (threads per block, tile extents) are not written in any
// .cu file: every build gets them as -DNAME=VALUE from one Python place, CONSTANTS in
// solver/cuda/_variants.py, which the launchers read too (graphcut.solver.kernels.constant).
#pragma once

#ifndef GRAPHCUT_THREADS
#error "GRAPHCUT_THREADS is passed with -D by graphcut's kernel loader (solver/cuda/_variants.py CONSTANTS)"
#endif

// A grid-stride loop over `count` items: launched with any number of blocks of any size.
#define GRID_STRIDE_LOOP(index, count)                                                      \
    for (long long index = (long long)blockIdx.x * blockDim.x + threadIdx.x;              \
         index < (count); index += (long long)gridDim.x * blockDim.x)

// The label of a pixel outside the mask in the part labelling of the clean-up
// (mask_kernels.cu's label_init, flood_kernels.cu's label_tile).
#define LABEL_NONE 0x7fffffff
