"""A stand-in for CuPy that runs this package's CUDA kernels on the CPU, for CI without a GPU.

The .cu files listed in SOURCES (the labelling, stereo, energy, mask and grid-state kernels of
solver/cuda) are written as grid-stride loops, so compiled as plain C++ with one "thread"
(blockDim = gridDim = 1) each kernel visits every item in turn; block and warp reductions run
with one lane (a shuffle brings 0, atomics are plain read-modify-writes). ``build_kernel_library`` compiles them that way into a shared library;
``fake_cupy_module`` returns a module object that behaves like the parts of CuPy the package
uses: arrays are NumPy arrays of a subclass whose module name starts with "cupy" (so the
package's "is this CuPy?" checks say yes), and ``RawModule(...).get_function(name)`` returns a
callable that checks every argument against the kernel's C signature (pointer element types,
contiguity unless the parameter's name starts with ``strided_``, scalar types: a mismatch there
would corrupt memory on a real GPU) and calls the compiled function through ctypes.

``strict`` mode (:func:`set_strict`) stands for a machine where nothing may be compiled at run
time: any ufunc, reduction, ``astype`` or slice assignment on a stand-in array raises
``StrictError``, and of the module's functions only those that allocate or copy work (``zeros``,
``empty``, ``asarray``, ``ascontiguousarray`` of an array that already is, views), so a path
that runs in strict mode uses only the package's own kernels, memsets and copies.

This checks the kernels' arithmetic and the Python side's launches; it does not check what
only a GPU shows (races between threads, real timing).
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import numpy as np

from graphcut.solver.kernels import CONSTANTS

ROOT = Path(__file__).resolve().parents[2]
CUDA = ROOT / "solver" / "cuda"
LIBRARY = ROOT / "graphcut"
SOURCES = [LIBRARY / "labeling" / "expansion_kernels.cu", LIBRARY / "stereo" / "stereo_kernels.cu",
           LIBRARY / "segmentation" / "energy_kernels.cu",
           LIBRARY / "segmentation" / "mask_kernels.cu", CUDA / "grid_state.cu",
           LIBRARY / "models" / "learned_kernels.cu", LIBRARY / "models" / "gmm_kernels.cu"]

# What the loader gives every build: the shared header's folder and the kernels' constants.
BUILD_FLAGS = (f"-I{CUDA}", *(f"-D{name}={value}" for name, value in sorted(CONSTANTS.items())))

PRELUDE = """
#include <cstdint>
struct FakeDim3 { unsigned int x, y, z; };
static const FakeDim3 blockIdx = {0, 0, 0}, threadIdx = {0, 0, 0};
static const FakeDim3 blockDim = {1, 1, 1}, gridDim = {1, 1, 1};
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static
#include <algorithm>
#include <cmath>
#include <cstring>
using std::min; using std::max; using std::exp; using std::rint; using std::floor;
using std::ldexp;
static inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
static inline void __syncthreads() {}
template <typename T> static inline T __shfl_down_sync(unsigned, T, int) { return T(0); }
static inline long long __double_as_longlong(double v)
{ long long r; std::memcpy(&r, &v, 8); return r; }
static inline double __longlong_as_double(long long v)
{ double r; std::memcpy(&r, &v, 8); return r; }
static inline double __dadd_rn(double a, double b) { volatile double r = a + b; return r; }
static inline double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
template <typename T> static inline T atomicAdd(T* a, T v) { T old = *a; *a = old + v; return old; }
template <typename T> static inline T atomicMin(T* a, T v) { T old = *a; if (v < old) *a = v; return old; }
template <typename T> static inline T atomicMax(T* a, T v) { T old = *a; if (v > old) *a = v; return old; }
"""

# The package's modules that import cupy when first imported: a test that installs the stand-in
# must import them afresh (and drop them afterwards), with GRAPHCUT_CUDA_KERNELS=nvrtc.
LOADERS = ("graphcut.solver.cuda._loader", "graphcut.solver.cuda.module",
           "graphcut.segmentation.energy_kernels", "graphcut.segmentation.masks")



def rebind_parents(names) -> None:
    """Make each package's attribute for its submodule in ``names`` the module in
    ``sys.modules`` again (or drop it): after a test swapped modules there, ``from package
    import submodule`` would otherwise still find the swapped-out module."""
    for name in names:
        parent_name, _, child = name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is None:
            continue
        if name in sys.modules:
            setattr(parent, child, sys.modules[name])
        elif child in vars(parent):
            delattr(parent, child)


_POINTER_TYPES = {"int": np.int32, "long long": np.int64, "unsigned long long": np.uint64,
                  "bool": np.bool_, "double": np.float64, "float": np.float32,
                  "unsigned char": np.uint8, "signed char": np.int8, "short": np.int16,
                  "unsigned short": np.uint16, "unsigned int": np.uint32}
_SCALAR_TYPES = {"int": np.int32, "long long": np.int64, "double": np.float64}
_CTYPES = {np.int32: ctypes.c_int, np.int64: ctypes.c_longlong, np.float64: ctypes.c_double}


class StrictError(AssertionError):
    """A CuPy operation that would compile a kernel at run time, made in strict mode."""


def compiler() -> str | None:
    return shutil.which("c++") or shutil.which("g++")


def build_kernel_library(directory: Path) -> ctypes.CDLL:
    """Compile every kernel source as host C++ into ``directory``/kernels.so."""
    source = directory / "kernels.cpp"
    source.write_text(PRELUDE + "".join(f'#include "{path}"\n' for path in SOURCES))
    library = directory / "kernels.so"
    subprocess.run([compiler(), "-O1", "-shared", "-fPIC", "-std=c++17", *BUILD_FLAGS,
                    "-o", str(library), str(source)], check=True, capture_output=True, text=True)
    return ctypes.CDLL(str(library))


def preprocessed(code: str) -> str:
    """``code`` through the C preprocessor (kernels made by macros show their signatures)."""
    done = subprocess.run([compiler(), "-E", "-P", "-x", "c++", "-D__launch_bounds__(...)=",
                           *BUILD_FLAGS, "-"], input=code, capture_output=True, text=True,
                          check=True)
    return done.stdout


def kernel_names(code: str) -> set[str]:
    return set(_signatures_of(code))


def _signatures_of(code: str) -> dict[str, list[tuple[str, bool, str]]]:
    signatures = {}
    for match in re.finditer(r'extern\s+"C"\s+__global__\s+void\s+(\w+)\s*\(([^)]*)\)',
                             preprocessed(code)):
        params = []
        for param in match.group(2).split(","):
            param = " ".join(param.replace("__restrict__", "").split())
            pointer = "*" in param
            ctype = param.replace("*", " ").replace("const ", "").split()
            params.append((" ".join(ctype[:-1]), pointer, ctype[-1]))
        signatures[match.group(1)] = params
    return signatures


def kernel_signatures() -> dict[str, list[tuple[str, bool, str]]]:
    """name -> [(C element type, is_pointer, parameter name)] for every extern "C" kernel of
    the sources."""
    signatures = {}
    for path in SOURCES:
        signatures.update(_signatures_of(path.read_text()))
    return signatures


class ndarray(np.ndarray):
    """A NumPy array that the package takes for a CuPy array."""

    strict = False  # see set_strict

    def get(self, stream=None):
        return np.array(self.view(np.ndarray), copy=True)

    @property
    def data(self):
        """As CuPy's ``ndarray.data``: something with the address of the first element."""
        return types.SimpleNamespace(ptr=self.ctypes.data)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ndarray.strict:
            raise StrictError(f"CuPy ufunc {ufunc.__name__}.{method} on the strict path")
        inputs = tuple(i.view(np.ndarray) if isinstance(i, ndarray) else i for i in inputs)
        outs = kwargs.get("out")
        if outs:
            kwargs["out"] = tuple(o.view(np.ndarray) if isinstance(o, ndarray) else o
                                  for o in outs)
        result = getattr(ufunc, method)(*inputs, **kwargs)
        if result is None:
            return None
        if outs:
            return outs[0] if len(outs) == 1 else tuple(outs)
        return _wrap(result)

    def __getitem__(self, key):
        if ndarray.strict:
            keys = key if isinstance(key, tuple) else (key,)
            if any(isinstance(k, (np.ndarray, list)) for k in keys):
                raise StrictError("advanced indexing (a CuPy gather kernel) on the strict path")
        return super().__getitem__(key)

    def astype(self, *args, **kwargs):
        if ndarray.strict:
            raise StrictError("astype (a CuPy element-wise copy kernel) on the strict path")
        return super().astype(*args, **kwargs)

    def __setitem__(self, key, value):
        if ndarray.strict:
            raise StrictError("slice assignment (a CuPy element-wise copy kernel) on the "
                              "strict path")
        super().__setitem__(key, value)

    def fill(self, value):
        if ndarray.strict and value != 0:
            raise StrictError("fill with a non-zero value (a CuPy kernel) on the strict path")
        super().fill(value)  # zero: a memset


def set_strict(on: bool) -> None:
    """Strict mode on or off (see the module docstring)."""
    ndarray.strict = bool(on)


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
        for position, (arg, (ctype, pointer, name)) in enumerate(zip(args, self.signature)):
            where = f"{self.name} argument {position} ({ctype}{' *' if pointer else ''})"
            if pointer:
                if not isinstance(arg, ndarray):
                    raise TypeError(f"{where}: expected a device array, got {type(arg)}")
                if arg.dtype != _POINTER_TYPES[ctype]:
                    raise TypeError(f"{where}: array of {arg.dtype}")
                if not arg.flags.c_contiguous and not name.startswith("strided_"):
                    raise TypeError(f"{where}: array is not contiguous")
                converted.append(ctypes.c_void_p(arg.ctypes.data))
            else:
                expected = _SCALAR_TYPES[ctype]
                if type(arg) is not expected:
                    raise TypeError(f"{where}: scalar of type {type(arg).__name__}")
                converted.append(_CTYPES[expected](arg.item() if hasattr(arg, "item")
                                                   else arg))
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
        def __init__(self, code=None, options=(), path=None, enable_cooperative_groups=False):
            if code is None:
                raise NotImplementedError("the stand-in compiles sources, not fatbins (set "
                                          "GRAPHCUT_CUDA_KERNELS=nvrtc)")
            self.names = kernel_names(code)

        def get_function(self, name):
            if name not in self.names:
                raise AttributeError(f"no kernel {name} in this module")
            return _Kernel(library, name, signatures[name], calls)

    module.RawModule = RawModule
    module.RawKernel = _Kernel
    stream = types.SimpleNamespace(synchronize=lambda: None, ptr=0)

    def memcpy2d(dst, dpitch, src, spitch, width, height, kind, stream_ptr):
        for row in range(height):
            ctypes.memmove(dst + row * dpitch, src + row * spitch, width)

    def memcpy(dst, src, size, kind, stream_ptr=0):
        ctypes.memmove(dst, src, size)

    runtime = types.SimpleNamespace(memcpy2DAsync=memcpy2d, memcpyAsync=memcpy,
                                    memcpyHostToDevice=1, memcpyDeviceToHost=2,
                                    memcpyDeviceToDevice=3)
    module.cuda = types.SimpleNamespace(
        Device=lambda *a: types.SimpleNamespace(synchronize=lambda: None, id=0),
        get_current_stream=lambda: stream, runtime=runtime)

    allowed = {"zeros", "empty", "asarray", "ascontiguousarray", "moveaxis", "dtype"}

    def delegate(name):
        target = getattr(np, name)
        if not callable(target) or (isinstance(target, type)
                                    and issubclass(target, np.generic)):
            return target  # constants (newaxis) and dtypes: cupy.int32 is numpy.int32

        def function(*args, **kwargs):
            if ndarray.strict and name not in allowed:
                raise StrictError(f"cupy.{name} on the strict path")
            if ndarray.strict and name == "ascontiguousarray":
                array = args[0]
                dtype = kwargs.get("dtype", args[1] if len(args) > 1 else None)
                if not (array.flags.c_contiguous and (dtype is None or array.dtype == dtype)):
                    raise StrictError("cupy.ascontiguousarray would copy with a kernel")
            if name == "asarray" and args and isinstance(args[0], ndarray):
                return args[0] if len(args) == 1 and not kwargs else _wrap(target(*args, **kwargs))
            return _wrap(target(*args, **kwargs))
        return function

    module.__getattr__ = delegate
    return module


def stand_in_cupy(monkeypatch, library):
    """For a fixture (``yield from``): the stand-in CuPy of ``library``'s kernels
    (:func:`build_kernel_library`) installed as ``cupy`` (with ``cupyx.scipy.ndimage``,
    :func:`install_cupyx_ndimage`) and the package's kernel loaders imported afresh through
    NVRTC's path; yields the module, then puts the real modules back."""
    module = fake_cupy_module(library)
    monkeypatch.setenv("GRAPHCUT_CUDA_KERNELS", "nvrtc")
    for name in LOADERS:
        if name in sys.modules:
            monkeypatch.delitem(sys.modules, name)
    install_cupyx_ndimage(monkeypatch, module)
    yield module
    for name in LOADERS:
        sys.modules.pop(name, None)
    monkeypatch.undo()
    rebind_parents(LOADERS)


def install_cupyx_ndimage(monkeypatch, module) -> None:
    """Make ``module`` (:func:`fake_cupy_module`) importable as ``cupy``, with
    ``cupyx.scipy.ndimage.gaussian_filter`` and ``maximum_filter`` standing in as SciPy's
    (what the learned model's GPU features and its local split call), for the test that
    ``monkeypatch`` belongs to."""
    from scipy import ndimage as scipy_ndimage

    ndimage = types.ModuleType("cupyx.scipy.ndimage")
    ndimage.gaussian_filter = lambda values, *args, **kwargs: _wrap(
        scipy_ndimage.gaussian_filter(np.asarray(values), *args, **kwargs))
    ndimage.maximum_filter = lambda values, *args, **kwargs: _wrap(  # the local split's
        scipy_ndimage.maximum_filter(np.asarray(values), *args, **kwargs))
    scipy = types.ModuleType("cupyx.scipy")
    scipy.ndimage = ndimage
    cupyx = types.ModuleType("cupyx")
    cupyx.scipy = scipy
    for name, value in (("cupy", module), ("cupyx", cupyx), ("cupyx.scipy", scipy),
                        ("cupyx.scipy.ndimage", ndimage)):
        monkeypatch.setitem(sys.modules, name, value)
