"""The solver's public CUDA toolkit for the library's own kernels (energy, masks, flood, stereo
costs, expansion moves), which live beside the Python that launches them.

- :func:`kernel` / :func:`load_module`: the package's one loader: the fatbin the wheel shipped
  for that build when it was built from the sources as they are now, else NVRTC. A library
  source is named by its folder in the ``graphcut`` package (``"segmentation/mask_kernels.cu"``)
  and is in the wheel's table of builds when its folder is in ``KERNEL_FOLDERS`` of
  ``solver/cuda/_variants.py``. Every build may ``#include "graphcut_cuda.cuh"`` (the shared
  grid-stride loop and helpers).
- :func:`launch_grid`: the one launch-configuration helper of grid-stride kernels.
- :func:`fill_int32`: the solver's fill kernel (no CuPy kernel to compile), and
  :data:`GRID_BFS_TILE`, the tile of its global relabel's BFS kernel (``grid_kernels.cu``'s
  ``bfs_tile``), which the library's flood fill reuses.

Importing this module imports neither CuPy nor the loader: they load on the first call.
"""

from __future__ import annotations

from .cuda.launch import CONSTANTS, MAX_BLOCKS, THREADS, constant, launch_grid

GRID_BFS_TILE = constant("BFS_TILE_2D_X")   # x and y pixels of grid_kernels.cu's 2-D BFS tile

__all__ = ["CONSTANTS", "GRID_BFS_TILE", "MAX_BLOCKS", "THREADS", "constant", "fill_int32",
           "kernel", "launch_grid", "load_module"]


def kernel(source: str, name: str, defines=None, *, cooperative: bool = False):
    """The ``cupy.RawKernel`` ``name`` of a CUDA source, loaded once per process.

    Parameters
    ----------
    source : str
        ``"folder/file.cu"`` in the ``graphcut`` package (e.g. ``"stereo/stereo_kernels.cu"``),
        or a bare file name for the solver's own kernels (``"grid_kernels.cu"``).
    name : str
        The ``extern "C" __global__`` function.
    defines : dict, optional
        ``{"NAME": value}`` compiled in as ``-DNAME=value`` (None: ``-DNAME``); a shipped
        fatbin is used only for a build of the table with exactly these.
    cooperative : bool
        Its kernels are launched cooperatively (``grid.sync()``).

    Returns
    -------
    cupy.RawKernel

    Examples
    --------
    >>> count = kernel("segmentation/mask_kernels.cu", "count_true")  # doctest: +SKIP
    """
    from .cuda.module import kernel as load
    return load(source, name, defines, cooperative=cooperative)


def load_module(source: str, defines=None, *, cooperative: bool = False):
    """The ``cupy.RawModule`` of a CUDA source (see :func:`kernel`), loaded once per process."""
    from .cuda.module import load_module as load
    return load(source, defines, cooperative=cooperative)


def fill_int32(array, value: int) -> None:
    """``array[...] = value`` for a C-contiguous int32 CuPy array, by a shipped kernel (CuPy's
    ``fill`` compiles one with NVRTC on a machine's first run)."""
    from .cuda.transfer import fill_int32 as fill
    fill(array, value)
