"""Small helpers for code that takes NumPy or CuPy arrays alike. Imports nothing of graphcut."""

from __future__ import annotations

import numpy as np


def to_host(array) -> np.ndarray:
    """``array`` as a NumPy array: a CuPy array is copied from the GPU (``.get()``), anything
    else goes through ``numpy.asarray`` (no copy for a NumPy array)."""
    return array.get() if hasattr(array, "get") else np.asarray(array)
