"""Every CUDA source of the package compiles for Hopper (sm_90) with the machine's nvcc.

This runs without a GPU (CI has none), so a kernel that does not build never lands. The
sources are compiled as the package loads them (C++17, NVRTC-style self-contained files).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

CUDA_DIR = Path(__file__).resolve().parent.parent / "solver" / "cuda"
SOURCES = sorted(CUDA_DIR.glob("*.cu"))


def test_there_are_cuda_sources():
    assert SOURCES, f"no .cu files found in {CUDA_DIR}"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on the PATH")
@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_compiles_for_sm90(source, tmp_path):
    result = subprocess.run(
        ["nvcc", "-arch=sm_90", "-std=c++17", "--cubin", "-Werror", "all-warnings",
         "-o", str(tmp_path / (source.stem + ".cubin")), str(source)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"nvcc failed on {source.name}:\n{result.stderr}"
