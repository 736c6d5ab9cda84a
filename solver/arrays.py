"""Which array module an array belongs to: the one ``array_module`` helper of graphcut (the
library's and the app's NumPy-or-CuPy code import it from :mod:`graphcut.solver`)."""

from __future__ import annotations

__all__ = ["array_module", "is_cupy"]


def is_cupy(array) -> bool:
    """Whether ``array`` is a CuPy array (CuPy is not imported to find out).

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.solver.arrays import is_cupy
    >>> is_cupy(np.zeros(3))
    False
    """
    return type(array).__module__.startswith("cupy")


def array_module(*arrays):
    """``cupy`` when any of ``arrays`` is a CuPy array, else ``numpy`` (CuPy is imported only
    in the first case).

    Parameters
    ----------
    *arrays : array-like
        NumPy arrays, CuPy arrays, or anything else (which counts as host data).

    Returns
    -------
    module
        ``cupy`` or ``numpy``.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.solver import array_module
    >>> array_module(np.zeros(2), [1, 2]).__name__
    'numpy'
    """
    if any(is_cupy(array) for array in arrays):
        import cupy
        return cupy
    import numpy
    return numpy
