"""The one loader of this package's CUDA sources: a shipped fatbin where one fits, else NVRTC.

``load_module("csr_kernels.cu", {"MIN_BLOCKS": 2}, cooperative=True)`` returns the
``cupy.RawModule`` of that build (:mod:`._variants` names the builds), once per process:

1. the fatbin the wheel shipped for that variant (``_binaries/``), when it was built from the
   sources as they are now; the driver picks the machine code for the GPU's architecture, or
   compiles the PTX for a newer GPU. Loading it costs milliseconds;
2. otherwise, or when the driver cannot load it (no code that this GPU or driver can run), the
   source compiled with NVRTC through CuPy, with the same ``-D`` options (seconds the first
   time, then CuPy's on-disk kernel cache).

``GRAPHCUT_CUDA_KERNELS=nvrtc`` skips the shipped binaries (for comparisons and debugging).
:func:`module_origin` tells which way a module was loaded.
"""

from __future__ import annotations

import functools
import logging
import os

import cupy

from ._variants import INCLUDE_DIR, Variant, shipped_binary, source_path, variant

log = logging.getLogger("graphcut.solver.cuda")

NVRTC_OPTIONS = ("-std=c++17",)
ENVIRONMENT_SWITCH = "GRAPHCUT_CUDA_KERNELS"  # "nvrtc": never use the shipped binaries

_origins: dict[Variant, str] = {}


def load_module(filename: str, defines=None, *, cooperative: bool = False) -> cupy.RawModule:
    """The module of ``filename`` (a .cu file beside this module, or one of the library's
    named with its folder: ``"segmentation/mask_kernels.cu"``) built with ``defines``
    (``{"NAME": value}``, value None for a bare ``-DNAME``), loaded once per process.

    ``cooperative``: its kernels are launched with ``cuLaunchCooperativeKernel`` (needed for
    cooperative groups' ``grid.sync()``).
    """
    return _load(variant(filename, defines, cooperative=cooperative))


def kernel(filename: str, name: str, defines=None, *, cooperative: bool = False
           ) -> cupy.RawKernel:
    """The kernel ``name`` of :func:`load_module`'s module, cached."""
    return _kernel(variant(filename, defines, cooperative=cooperative), name)


def module_origin(filename: str, defines=None, *, cooperative: bool = False) -> str | None:
    """"binary" (a shipped fatbin), "nvrtc" (compiled here), or None (not loaded yet)."""
    return _origins.get(variant(filename, defines, cooperative=cooperative))


@functools.cache
def _kernel(entry: Variant, name: str) -> cupy.RawKernel:
    return _load(entry).get_function(name)


@functools.cache
def _load(entry: Variant) -> cupy.RawModule:
    binary = None
    if os.environ.get(ENVIRONMENT_SWITCH, "").lower() != "nvrtc":
        binary = shipped_binary(entry)
    if binary is not None:
        module = cupy.RawModule(path=str(binary), enable_cooperative_groups=entry.cooperative)
        try:
            module.compile()  # loads it now: a fatbin with no code this GPU can run fails here
        except cupy.cuda.driver.CUDADriverError as error:
            log.info("cannot load %s (%s); compiling %s with NVRTC", binary.name, error,
                     entry.source)
        else:
            _origins[entry] = "binary"
            return module
    _origins[entry] = "nvrtc"
    code = source_path(entry.source).read_text()
    options = (*NVRTC_OPTIONS, f"-I{INCLUDE_DIR}", *entry.build_options)
    return cupy.RawModule(code=code, options=options,
                          enable_cooperative_groups=entry.cooperative)
