"""The kernels of ``stereo_kernels.cu`` (imported only on the GPU path)."""

from __future__ import annotations

from pathlib import Path

from graphcut.labeling._cuda import launch_config, source_kernel

SOURCE = Path(__file__).resolve().parent / "stereo_kernels.cu"

__all__ = ["kernel", "launch_config"]


def kernel(name: str):
    return source_kernel(SOURCE, name)
