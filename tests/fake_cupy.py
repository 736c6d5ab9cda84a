"""A stand-in for CuPy that runs this package's CUDA kernels on the CPU, for CI without a GPU.

The .cu files of graphcut/labeling and graphcut/stereo are written as grid-stride loops, so
compiled as plain C++ with one "thread" (blockDim = gridDim = 1) each kernel visits every item
in turn. ``build_kernel_library`` compiles them that way into a shared library;
``fake_cupy_module`` returns a module object that behaves like the parts of CuPy the package
uses: arrays are NumPy arrays of a subclass whose module name starts with "cupy" (so the
package's "is this CuPy?" checks say yes), and ``RawModule(...).get_function(name)`` returns a
callable that checks every argument against the kernel's C signature (pointer element types,
contiguity, scalar types: a mismatch there would corrupt memory on a real GPU) and calls the
compiled function through ctypes.

This checks the kernels' arithmetic and the Python side's launches; it does not check what
only a GPU shows (races between threads, real timing).
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "graphcut" / "labeling" / "expansion_kernels.cu",
           ROOT / "graphcut" / "stereo" / "stereo_kernels.cu"]

PRELUDE = """
#include <cstdint>
struct FakeDim3 { unsigned int x, y, z; };
static const FakeDim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0};
static const FakeDim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
static inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
"""

_POINTER_TYPES = {"int": np.int32, "long long": np.int64, "unsigned long long": np.uint64,
                  "bool": np.bool_}
_SCALAR_TYPES = {"int": np.int32, "long long": np.int64}


def compiler() -> str | None:
    return shutil.which("c++") or shutil.which("g++")


def build_kernel_library(directory: Path) -> ctypes.CDLL:
    """Compile every kernel source as host C++ into ``directory``/kernels.so."""
    source = directory / "kernels.cpp"
    source.write_text(PRELUDE + "".join(f'#include "{path}"\n' for path in SOURCES))
    library = directory / "kernels.so"
    subprocess.run([compiler(), "-O1", "-shared", "-fPIC", "-std=c++17", "-o", str(library),
                    str(source)], check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(library))


def kernel_signatures() -> dict[str, list[tuple[str, bool]]]:
    """name -> [(C element type, is_pointer)] for every extern "C" kernel of the sources."""
    signatures = {}
    for path in SOURCES:
        code = path.read_text()
        for match in re.finditer(r'extern "C" __global__ void (?:__launch_bounds__\([^)]*\) )?'
                                 r'(\w+)\(([^)]*)\)', code):
            params = []
            for param in match.group(2).split(","):
                param = " ".join(param.replace("__restrict__", "").split())
                pointer = "*" in param
                ctype = param.replace("*", " ").replace("const ", "").split()
                params.append((" ".join(ctype[:-1]), pointer))
            signatures[match.group(1)] = params
    return signatures


class ndarray(np.ndarray):
    """A NumPy array that the package takes for a CuPy array."""

    def get(self):
        return np.array(self, copy=True).view(np.ndarray)


ndarray.__module__ = "cupy._core.core"


def _wrap(value):
    if isinstance(value, np.ndarray) and not isinstance(value, ndarray):
        return value.view(ndarray)
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    return value


class _Kernel:
    def __init__(self, library, name, signature, calls):
        self.function = getattr(library, name)
        self.name, self.signature, self.calls = name, signature, calls

    def __call__(self, grid, block, args):
        if len(args) != len(self.signature):
            raise TypeError(f"{self.name}: {len(args)} arguments for {len(self.signature)} "
                            f"parameters")
        converted = []
        for position, (arg, (ctype, pointer)) in enumerate(zip(args, self.signature)):
            where = f"{self.name} argument {position} ({ctype}{' *' if pointer else ''})"
            if pointer:
                if not isinstance(arg, ndarray):
                    raise TypeError(f"{where}: expected a device array, got {type(arg)}")
                if arg.dtype != _POINTER_TYPES[ctype]:
                    raise TypeError(f"{where}: array of {arg.dtype}")
                if not arg.flags.c_contiguous:
                    raise TypeError(f"{where}: array is not contiguous")
                converted.append(ctypes.c_void_p(arg.ctypes.data))
            else:
                expected = _SCALAR_TYPES[ctype]
                if type(arg) is not expected:
                    raise TypeError(f"{where}: scalar of type {type(arg).__name__}")
                converted.append(ctypes.c_int(int(arg)) if expected is np.int32
                                 else ctypes.c_longlong(int(arg)))
        self.calls.append(self.name)
        self.function(*converted)


def fake_cupy_module(library: ctypes.CDLL) -> types.ModuleType:
    """A module object standing in for ``cupy`` (see the module docstring)."""
    signatures = kernel_signatures()
    calls: list[str] = []
    module = types.ModuleType("cupy")
    module.ndarray = ndarray
    module.kernel_calls = calls

    class RawModule:
        def __init__(self, code=None, options=()):
            names = set(re.findall(r'extern "C" __global__ void (\w+)\(', code))
            self.names = names

        def get_function(self, name):
            if name not in self.names:
                raise AttributeError(f"no kernel {name} in this module")
            return _Kernel(library, name, signatures[name], calls)

    module.RawModule = RawModule
    module.RawKernel = _Kernel
    module.cuda = types.SimpleNamespace(
        Device=lambda *a: types.SimpleNamespace(synchronize=lambda: None, id=0))

    def delegate(name):
        target = getattr(np, name)
        if not callable(target) or (isinstance(target, type)
                                    and issubclass(target, np.generic)):
            return target  # constants (newaxis) and dtypes: cupy.int32 is numpy.int32

        def function(*args, **kwargs):
            return _wrap(target(*args, **kwargs))
        return function

    module.__getattr__ = delegate
    return module
