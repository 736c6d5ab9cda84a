"""Wheel build hook: compile the CUDA kernels into fatbins that the wheel ships.

Everything else about the package is declared in pyproject.toml. ``build_py`` here does what
setuptools' does, then compiles every variant of ``solver/cuda/_variants.py`` (the max-flow
kernels of ``solver/cuda/`` and the library's kernels beside their launchers, in the folders of
its ``KERNEL_FOLDERS``, with the constants of its ``CONSTANTS``) with nvcc into
``graphcut/solver/cuda/_binaries/`` (machine code for the GPU generations CUDA 13 supports, PTX
for newer ones, and a manifest of the sources' SHA-256). The loader uses them instead of NVRTC,
so the first GPU solve after an install does not wait for a compiler.

``GRAPHCUT_BUILD_KERNELS`` chooses what happens:
  auto (default)  build when nvcc is found (``$NVCC``, else ``nvcc`` on the PATH); without nvcc,
                  or if nvcc fails, print why and build the wheel without binaries (the
                  kernels are then compiled with NVRTC on first use, as from a source checkout);
  require         a missing nvcc or a failed build fails the wheel build (CI sets this);
  never           do not build them.
Editable installs (``pip install -e .``) never build them; a checkout can build its own with
``python solver/cuda/_variants.py build`` (into ``solver/cuda/_binaries/``, ignored by git).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
VARIANTS_FILE = HERE / "solver" / "cuda" / "_variants.py"
BINARY_DIR = Path("graphcut") / "solver" / "cuda" / "_binaries"  # inside the wheel
MODES = ("auto", "require", "never")


def load_variants():
    """solver/cuda/_variants.py as a module (standard library only, loaded by path)."""
    spec = importlib.util.spec_from_file_location("_graphcut_kernel_variants", VARIANTS_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def build_kernels(build_lib, *, mode: str = "auto", nvcc: str | None = None) -> str:
    """Compile the fatbins into ``build_lib``'s ``graphcut/solver/cuda/_binaries`` according to
    ``mode`` (see the module docstring); returns what was done, for the build log.

    Raises SystemExit for an unknown mode, and in mode "require" when nvcc is missing or fails.
    """
    mode = (mode or "auto").strip().lower()
    if mode not in MODES:
        raise SystemExit(f"GRAPHCUT_BUILD_KERNELS={mode!r}: expected one of {', '.join(MODES)}")
    if mode == "never":
        return "graphcut: CUDA kernels not compiled (GRAPHCUT_BUILD_KERNELS=never)"
    nvcc = shutil.which(nvcc or "nvcc")
    if nvcc is None:
        return _skip(mode, "nvcc was not found (set NVCC or put it on the PATH)")
    output = Path(build_lib) / BINARY_DIR
    try:
        manifest = load_variants().build_binaries(output, nvcc=nvcc)
    except (RuntimeError, OSError, subprocess.SubprocessError) as error:
        shutil.rmtree(output, ignore_errors=True)
        return _skip(mode, f"nvcc failed: {error}")
    return (f"graphcut: built {len(manifest['binaries'])} CUDA fatbins with {manifest['nvcc']} "
            f"(sm_{', sm_'.join(manifest['architectures'])}; PTX compute_"
            f"{manifest['ptx_architecture']})")


def _skip(mode: str, reason: str) -> str:
    if mode == "require":
        raise SystemExit(f"graphcut: GRAPHCUT_BUILD_KERNELS=require but {reason}")
    return (f"graphcut: the wheel ships no compiled CUDA kernels: {reason}. The GPU backend "
            "compiles them with NVRTC on first use.")


class build_py_with_kernels(build_py):
    """setuptools' build_py, then the CUDA fatbins into the build (see the module docstring)."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        print(build_kernels(self.build_lib, mode=os.environ.get("GRAPHCUT_BUILD_KERNELS", "auto"),
                            nvcc=os.environ.get("NVCC")), file=sys.stderr)


if __name__ == "__main__":  # setuptools runs this file as __main__; tests import it
    setup(cmdclass={"build_py": build_py_with_kernels})
