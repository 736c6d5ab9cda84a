"""The kernels of ``solver/cuda/stereo_kernels.cu`` (the package's one CUDA loader: a shipped
fatbin, else NVRTC). Imported only on the GPU path."""

from __future__ import annotations

from graphcut.labeling._cuda import launch_config, source_kernel

SOURCE = "stereo_kernels.cu"

__all__ = ["kernel", "launch_config"]


def kernel(name: str):
    return source_kernel(SOURCE, name)
