"""Launch geometry shared by every kernel launcher: the kernels' compile-time constants (read
from the build table, where they are written once) and the one grid-stride launch helper.

Standard library only (no CuPy): the public face is :mod:`graphcut.solver.kernels`.
"""

from __future__ import annotations

from ._variants import CONSTANTS

__all__ = ["CONSTANTS", "MAX_BLOCKS", "THREADS", "constant", "launch_grid"]


def constant(name: str) -> int:
    """A compile-time constant of the kernels, as every build gets it (``-DNAME=VALUE``; the
    one place they are written is ``CONSTANTS`` in ``solver/cuda/_variants.py``).

    Parameters
    ----------
    name : str
        The macro's name, e.g. ``"GRAPHCUT_THREADS"`` or ``"PR_TILE_2D_X"``.

    Returns
    -------
    int

    Raises
    ------
    KeyError
        No such constant (the message lists the known ones).

    Examples
    --------
    >>> from graphcut.solver.kernels import constant
    >>> constant("GRAPHCUT_THREADS")
    256
    """
    try:
        return CONSTANTS[name]
    except KeyError:
        raise KeyError(f"no kernel constant {name!r}; known: {', '.join(sorted(CONSTANTS))}") \
            from None


THREADS = constant("GRAPHCUT_THREADS")  # threads per block of every grid-stride kernel
MAX_BLOCKS = 8192                       # at most this many blocks per grid-stride launch


def launch_grid(n: int, threads: int = THREADS, max_blocks: int = MAX_BLOCKS
                ) -> tuple[tuple[int], tuple[int]]:
    """``(grid, block)`` of a grid-stride launch over ``n`` items.

    Parameters
    ----------
    n : int
        Items (pixels, values) the kernel loops over.
    threads : int
        Threads per block; must be the block size the kernel was compiled for
        (``GRAPHCUT_THREADS`` for the grid-stride kernels).
    max_blocks : int
        At most this many blocks (each thread then strides over several items).

    Returns
    -------
    tuple
        ``((blocks,), (threads,))`` with ``1 <= blocks <= max_blocks``.

    Examples
    --------
    >>> from graphcut.solver.kernels import launch_grid
    >>> launch_grid(1000)
    ((4,), (256,))
    >>> launch_grid(0)
    ((1,), (256,))
    >>> launch_grid(10**9, max_blocks=65535)
    ((65535,), (256,))
    """
    return (max(1, min(-(-int(n) // threads), max_blocks)),), (threads,)
