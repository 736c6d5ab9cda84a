"""Flood fills of bool masks on the GPU, for the clean-up of a segmentation
(:func:`graphcut.segmentation.clean_mask`): the object parts connected to a seed, and the
holes that are neither open to the image border nor hold a background seed.

A flood is an exact breadth-first search over the 4-connected pixels of a region: one launch
of ``mask_kernels.cu``'s ``flood_init`` gives the region's arcs and start pixels, then the
solver's tile BFS (``grid_kernels.cu``'s ``bfs_tile``, the same passes as a global relabel) runs
until no tile changes, and ``flood_result`` keeps the pixels reached (or those left). Every
kernel is shipped precompiled; nothing is compiled at run time. The sizes of the holes come
from ``label_tile`` passes of the same kind (``flood_kernels.cu``; each part labelled with its
smallest flat index) and one atomic count per pixel.

Masks are C-contiguous (H, W) bool CuPy arrays, seeds (H, W) uint8 CuPy arrays (0 none,
1 object, 2 background).
"""

from __future__ import annotations

import cupy
import numpy as np

from graphcut.solver.kernels import GRID_BFS_TILE, constant, fill_int32, kernel, launch_grid

MASK_SOURCE = "segmentation/mask_kernels.cu"
LABEL_SOURCE = "segmentation/flood_kernels.cu"
GRID_SOURCE = "grid_kernels.cu"   # the solver's global-relabel BFS
BFS_TILE = GRID_BFS_TILE
LABEL_TILE = constant("LABEL_TILE")  # compiled into flood_kernels.cu
PASSES_PER_CHECK = 8   # BFS tile passes between two reads of the change flag (4: 0.7-1 ms slower
# clean-up at 4 MP on an H100, bench/RESULTS.md, fourteenth session)



def _checked(mask, seeds) -> tuple[cupy.ndarray, cupy.ndarray]:
    if mask.dtype != cupy.bool_ or mask.ndim != 2 or not mask.flags.c_contiguous:
        raise TypeError(f"expected a C-contiguous 2-D bool mask, got {mask.dtype} "
                        f"{tuple(mask.shape)}")
    if seeds.dtype != cupy.uint8 or seeds.shape != mask.shape or not seeds.flags.c_contiguous:
        raise TypeError(f"expected C-contiguous uint8 seeds of shape {tuple(mask.shape)}, got "
                        f"{seeds.dtype} {tuple(seeds.shape)}")
    return mask, seeds


def _until_stable(tiles: tuple[int, int], one_pass) -> None:
    """Tile passes until no tile changes: ``one_pass(dirty, next_dirty, changed)`` launches
    one pass over the tiles flagged in ``dirty`` (x-major grid ``tiles``), which flags the
    tiles of the next pass in ``next_dirty`` and sets ``changed``; the two flag arrays
    alternate. Every tile is flagged for the first pass."""
    dirty = cupy.empty(tiles[::-1], dtype=cupy.int32)
    fill_int32(dirty, 1)
    spare = cupy.zeros(tiles[::-1], dtype=cupy.int32)
    changed = cupy.zeros(1, dtype=cupy.int32)
    while True:
        changed.fill(0)
        for _ in range(PASSES_PER_CHECK):
            one_pass(dirty, spare, changed)
            dirty, spare = spare, dirty
        if int(changed.get()[0]) == 0:
            return


def _tiles(shape) -> tuple[int, int]:
    h, w = shape
    return (-(-w // BFS_TILE), -(-h // BFS_TILE))


def _tile_bfs(arcs: cupy.ndarray, height: cupy.ndarray, inf: int) -> None:
    """Exact BFS distances from the pixels of height 1 along ``arcs`` (in place)."""
    h, w = height.shape
    tiles = _tiles(height.shape)
    bfs = kernel(GRID_SOURCE, "bfs_tile")
    args = (np.int32(w), np.int32(h), np.int32(inf), arcs, height)
    _until_stable(tiles, lambda dirty, spare, changed:
                  bfs(tiles, (BFS_TILE, BFS_TILE), (*args, dirty, spare, changed)))


def _flood(mask, seeds, start_label: int, *, invert: bool, border_starts: bool,
           unreached: bool) -> tuple[cupy.ndarray, int]:
    """(pixels of the region ``mask != invert`` reached by a flood from its start pixels, or
    with ``unreached`` those it did not reach; their number)."""
    mask, seeds = _checked(mask, seeds)
    h, w = mask.shape
    n = h * w
    out = cupy.empty((h, w), dtype=cupy.bool_)
    count = cupy.zeros(1, dtype=cupy.uint64)
    if n == 0:
        return out, 0
    inf = n + 2
    arcs = cupy.empty((h, w), dtype=cupy.uint8)
    height = cupy.empty((h, w), dtype=cupy.int32)
    kernel(MASK_SOURCE, "flood_init")(
        *launch_grid(n),
        (np.int32(h), np.int32(w), np.int32(inf), mask, np.int32(invert), seeds,
         np.int32(start_label), np.int32(border_starts), arcs, height))
    _tile_bfs(arcs, height, inf)
    kernel(MASK_SOURCE, "flood_result")(
        *launch_grid(n),
        (np.int64(n), np.int32(inf), height, mask, np.int32(invert), np.int32(unreached), out,
         count))
    return out, int(count.get()[0])


def parts_touching_seeds(mask, seeds, label: int) -> tuple[cupy.ndarray, int]:
    """(the pixels of ``mask`` 4-connected within it to a seed of ``label``; how many)."""
    return _flood(mask, seeds, label, invert=False, border_starts=False, unreached=False)


def enclosed_holes(mask, seeds, label: int) -> tuple[cupy.ndarray, int]:
    """(the pixels outside ``mask`` whose 4-connected part of ``~mask`` neither touches the
    image border nor holds a seed of ``label``; how many)."""
    return _flood(mask, seeds, label, invert=True, border_starts=True, unreached=True)


def fill_small_parts(mask, parts, max_area: int) -> None:
    """``mask |= `` the pixels of bool ``parts`` whose 4-connected part of ``parts`` has fewer
    than ``max_area`` pixels (in place; both (H, W) bool CuPy arrays)."""
    if parts.dtype != cupy.bool_ or parts.shape != mask.shape or not parts.flags.c_contiguous:
        raise TypeError(f"expected C-contiguous bool parts of shape {tuple(mask.shape)}")
    h, w = mask.shape
    n = h * w
    if n == 0 or max_area <= 1:
        return
    label = cupy.empty((h, w), dtype=cupy.int32)
    kernel(MASK_SOURCE, "label_init")(*launch_grid(n), (np.int64(n), parts, label))
    tiles = _tiles(mask.shape)
    label_tile = kernel(LABEL_SOURCE, "label_tile")
    _until_stable(tiles, lambda dirty, spare, changed: label_tile(
        tiles, (LABEL_TILE, LABEL_TILE), (np.int32(h), np.int32(w), label, dirty, spare, changed)))
    sizes = cupy.zeros(n, dtype=cupy.uint32)
    kernel(MASK_SOURCE, "label_sizes")(*launch_grid(n), (np.int64(n), label, sizes))
    kernel(MASK_SOURCE, "set_small_parts")(
        *launch_grid(n),
        (np.int64(n), label, sizes, np.uint32(min(int(max_area), 2**32 - 1)), mask))


__all__ = ["enclosed_holes", "fill_small_parts", "parts_touching_seeds"]
