"""graphcut: image segmentation and max-flow/min-cut with a GPU push-relabel core.

The public names of the subpackages most programs need are importable from here: segmentation
(:func:`segment`, :class:`Segmenter`, the model objects :class:`Histogram` and :class:`GMM`),
image, seed and volume files, the energy's parts, and the solver's networks and
:func:`min_cut`. They load lazily (PEP 562 module ``__getattr__``): ``import graphcut``
imports no PyMaxflow, Pillow, SciPy, scikit-image, CuPy, Dask or Qt; each name imports its
package the first time it is used. It sets one environment default for CuPy
(``CUPY_NVRTC_USE_PCH=1`` unless already set: CuPy's first-run kernel compiles about 40 %
faster; see ``docs/getting-started.md``). The library's layout is described in
``docs/architecture.md``.

Examples
--------
>>> import numpy as np
>>> import graphcut
>>> image = np.zeros((5, 6), np.uint8)
>>> image[1:4, 1:4] = 200                  # a bright square on a dark ground
>>> seeds = np.zeros((5, 6), np.uint8)
>>> seeds[2, 2] = graphcut.FOREGROUND      # 1: object
>>> seeds[0, 5] = graphcut.BACKGROUND      # 2: background
>>> graphcut.segment(image, seeds, device="cpu").astype(int)
array([[0, 0, 0, 0, 0, 0],
       [0, 1, 1, 1, 0, 0],
       [0, 1, 1, 1, 0, 0],
       [0, 1, 1, 1, 0, 0],
       [0, 0, 0, 0, 0, 0]])
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING

#: CuPy compiles its own kernels (reductions, ``cupyx.scipy.ndimage`` filters, elementwise
#: operations) the first time each is used on a machine, then keeps them in its kernel cache.
#: NVRTC's precompiled headers (CuPy's ``CUPY_NVRTC_USE_PCH``; CUDA 12.8 or later, ignored
#: before) cut that first run's compiling by about 40 % (the first learned-model session on a
#: micrograph 61 -> 37 s, a colour photograph's 21.6 -> 11.4 s; bench/RESULTS.md, twenty-first
#: session). The results are the same; a value the user set wins. It must be set before CuPy
#: is imported: CuPy reads it once.
os.environ.setdefault("CUPY_NVRTC_USE_PCH", "1")

# public name -> the package that defines it
_HOMES = {
    "graphcut.io": (
        "BACKGROUND", "FOREGROUND", "NONE", "ImageReadError", "ImageTooLargeError",
        "VolumeReadError", "check_seeds", "read_image", "read_seeds", "read_volume",
        "read_volume_seeds", "write_mask", "write_overlay", "write_seeds", "write_volume_mask",
        "write_volume_seeds",
    ),
    "graphcut.segmentation": (
        "DEFAULT_LAM", "DEFAULT_SCALE", "Segmenter", "build_network", "estimate_sigma",
        "nlink_weights", "regional_costs", "segment", "terminal_capacities",
    ),
    "graphcut.models": ("GMM", "Histogram"),
    "graphcut.solver": ("CSRNetwork", "CutResult", "GridNetwork", "min_cut"),
}
_SUBPACKAGES = ("batch", "commands", "io", "labeling", "models", "segmentation", "solver",
                "stereo")
_HOME_OF = {name: home for home, names in _HOMES.items() for name in names}

__all__ = sorted(_HOME_OF)

if TYPE_CHECKING:  # the static view (type checkers, the API reference); no run-time import
    from .io import (BACKGROUND, FOREGROUND, NONE, ImageReadError,  # noqa: F401
                     ImageTooLargeError, VolumeReadError, check_seeds, read_image,
                     read_seeds, read_volume, read_volume_seeds, write_mask, write_overlay,
                     write_seeds, write_volume_mask, write_volume_seeds)
    from .models import GMM, Histogram  # noqa: F401
    from .segmentation import (DEFAULT_LAM, DEFAULT_SCALE, Segmenter,  # noqa: F401
                               build_network, estimate_sigma, nlink_weights, regional_costs,
                               segment, terminal_capacities)
    from .solver import CSRNetwork, CutResult, GridNetwork, min_cut  # noqa: F401


def __getattr__(name: str):
    """A public name (or subpackage) of graphcut, imported on first use."""
    if name in _SUBPACKAGES:
        return importlib.import_module(f"graphcut.{name}")
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module 'graphcut' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    """The module's names, the lazy ones included."""
    return sorted(set(globals()) | set(__all__))
