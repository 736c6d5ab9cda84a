"""The geometry of the GPU grid solver on volumes (6-connected D x H x W voxel grids).

The algorithm, the host orchestration and the kernels are the 2-D solver's: the kernels are one
template instantiated for 2 and 3 dimensions (the ``*_3d`` entry points of ``grid_kernels.cu``)
and :class:`~graphcut.solver.cuda.grid.VolumeState` is :class:`~.grid.GridState` with the 3-D
geometry given here: six residual arrays (directions RIGHT, LEFT, DOWN, UP, NEXT_SLICE = z+1,
PREV_SLICE = z-1), push-relabel tiles of 32x4x2 voxels and BFS tiles of 32x8x4 voxels (x, y,
z). Neighbours are implicit, each tile has an active flag, the global relabel is the exact tiled
BFS, and the state is kept between solves for dynamic re-solves, as in 2-D.

Memory: 57 bytes per voxel of solver state (excess 8, height 4, sink residual 4, six direction
residuals 24, one byte of residual-arc bits for the BFS, and the two terminal capacities in
force, 16), plus the network's own eight int32 arrays while a host network is uploaded (32
bytes per voxel). A 512^3 volume (134 M voxels) needs about 7.7 GB (+4.3 GB while uploading).
"""

from __future__ import annotations

import cupy
import numpy as np

from .launch import constant
from ..networks import axis_slice
from . import GPUMemoryError, require_free_memory

STATE_BYTES_PER_VOXEL = 57
NETWORK_BYTES_PER_VOXEL = 32
# (x, y, z) voxels of a push-relabel block and of a BFS block, compiled into the kernels
PR_TILE_3D = tuple(constant(f"PR_TILE_3D_{a}") for a in "XYZ")
BFS_TILE_3D = tuple(constant(f"BFS_TILE_3D_{a}") for a in "XYZ")
NEXT_SLICE, PREV_SLICE = 4, 5
# Voxel indices and heights are int32 in the kernels; INF = voxels + 2 must fit.
MAX_VOXELS = int(np.iinfo(np.int32).max) - 2


def direction(axis: int, forward: bool, ndim: int = 3) -> int:
    """Index of the residual array of steps along NumPy ``axis`` (0 = z for a volume):
    directions are numbered from the fastest axis, 2 * (ndim - 1 - axis) forward, + 1 back."""
    return 2 * (ndim - 1 - axis) + (0 if forward else 1)


def allocate_volume(shape, *, network_on_host: bool = False) -> tuple:
    """The zeroed state arrays of a D x H x W volume: (excess int64, height int32, to_sink
    int32, residual (6, D, H, W) uint32). Raises GPUMemoryError when they do not fit (or the
    volume has more voxels than the kernels' 32-bit indices allow)."""
    d, h, w = (int(n) for n in shape)
    voxels = d * h * w
    if voxels > MAX_VOXELS:
        raise GPUMemoryError(f"a {d}x{h}x{w} volume has {voxels:,} voxels, more than the "
                             f"GPU solver's 32-bit indices allow ({MAX_VOXELS:,})")
    per_voxel = STATE_BYTES_PER_VOXEL + (NETWORK_BYTES_PER_VOXEL if network_on_host else 0)
    require_free_memory(voxels * per_voxel, f"a {d}x{h}x{w} volume ({voxels:,} voxels)",
                        headroom=0.95)
    return (cupy.zeros((d, h, w), dtype=cupy.int64), cupy.zeros((d, h, w), dtype=cupy.int32),
            cupy.zeros((d, h, w), dtype=cupy.int32), cupy.zeros((6, d, h, w), dtype=cupy.uint32))


def load_volume_residuals(residual, forward, backward) -> None:
    """``residual`` (6, D, H, W) = the n-link capacities (one array per axis each way). Only
    arcs inside the volume are written; those that would leave it stay as they are (zero)."""
    for axis in range(3):
        lower, upper = axis_slice(3, axis, 0, -1), axis_slice(3, axis, 1, None)
        residual[direction(axis, True)][lower] = cupy.asarray(forward[axis])
        residual[direction(axis, False)][upper] = cupy.asarray(backward[axis])


__all__ = ["BFS_TILE_3D", "MAX_VOXELS", "NETWORK_BYTES_PER_VOXEL", "PR_TILE_3D",
           "STATE_BYTES_PER_VOXEL", "allocate_volume", "direction", "load_volume_residuals"]
