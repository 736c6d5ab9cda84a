"""The app's mask updates on the GPU, as launches of ``mask_kernels.cu`` (shipped precompiled):
the rectangle of the pixels that changed between two masks, a rectangle as packed bits, and
the number of object pixels.

gui/sharing.py's ``MaskUpdate.between`` calls these for CuPy masks, so that the first stroke on
a new machine does not wait for NVRTC to compile CuPy's comparison, ``any`` and ``packbits``
kernels (about 1.75 s measured at 4 MP).
"""

from __future__ import annotations

import cupy
import numpy as np

from graphcut.solver.kernels import kernel, launch_grid

SOURCE = "segmentation/mask_kernels.cu"
ALL_ONES = 2**64 - 1



def _bool_mask(mask) -> cupy.ndarray:
    if mask.dtype != cupy.bool_ or mask.ndim != 2 or not mask.flags.c_contiguous:
        raise TypeError(f"expected a C-contiguous 2-D bool mask, got {mask.dtype} "
                        f"{tuple(mask.shape)}")
    return mask


def changed_region(old, new) -> tuple[int, int, int, int] | None:
    """``(r0, r1, c0, c1)``: the smallest rectangle ``[r0:r1, c0:c1]`` holding every pixel
    where the bool (H, W) masks differ; None when they are equal."""
    old, new = _bool_mask(old), _bool_mask(new)
    if old.shape != new.shape:
        raise ValueError(f"masks of different shapes {old.shape} and {new.shape}")
    h, w = new.shape
    bounds = cupy.asarray(np.array([ALL_ONES, 0, ALL_ONES, 0, 0], dtype=np.uint64))
    if h * w:
        kernel(SOURCE, "mask_changes")(*launch_grid(h * w),
                                       (np.int64(h), np.int64(w), old, new, bounds))
    top, bottom, left, right, changed = (int(v) for v in bounds.get())
    if not changed:
        return None
    return top, bottom + 1, left, right + 1


def packed_bits(mask, region) -> bytes:
    """``numpy.packbits(mask[r0:r1, c0:c1]).tobytes()`` for a bool (H, W) CuPy mask."""
    mask = _bool_mask(mask)
    r0, r1, c0, c1 = region
    rows, cols = r1 - r0, c1 - c0
    count = (rows * cols + 7) // 8
    if count == 0:
        return b""
    bits = cupy.empty(count, dtype=cupy.uint8)
    kernel(SOURCE, "pack_bits")(*launch_grid(count),
                                (np.int64(rows), np.int64(cols), np.int64(r0), np.int64(c0),
                                 np.int64(mask.shape[1]), mask, bits))
    return bits.get().tobytes()


def count_true(mask) -> int:
    """The number of True pixels of a bool CuPy mask (C-contiguous)."""
    if mask.dtype != cupy.bool_ or not mask.flags.c_contiguous:
        raise TypeError(f"expected a C-contiguous bool mask, got {mask.dtype}")
    count = cupy.zeros(1, dtype=cupy.uint64)
    if mask.size:
        kernel(SOURCE, "count_true")(*launch_grid(mask.size),
                                     (np.int64(mask.size), mask, count))
    return int(count.get()[0])


__all__ = ["changed_region", "count_true", "packed_bits"]
