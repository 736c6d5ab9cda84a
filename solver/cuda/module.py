"""Loading the CUDA sources of this package with cupy.RawModule, once per process."""

from __future__ import annotations

import functools
from pathlib import Path

import cupy

SOURCE_DIR = Path(__file__).resolve().parent


@functools.cache
def load_module(filename: str) -> cupy.RawModule:
    """Compile ``filename`` (a .cu file beside this module) with NVRTC and cache the module."""
    code = (SOURCE_DIR / filename).read_text()
    return cupy.RawModule(code=code, options=("-std=c++17",))


@functools.cache
def kernel(filename: str, name: str) -> cupy.RawKernel:
    return load_module(filename).get_function(name)
