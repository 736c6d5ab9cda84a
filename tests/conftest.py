"""Puts tests/ on sys.path so that test modules can ``from oracle import ...``."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest  # noqa: E402


def pytest_collection_modifyitems(config, items):
    """Skip `gpu`-marked tests, with the reason, where the CUDA backend cannot run."""
    from graphcut.solver import cuda_status

    ok, why = cuda_status()
    if ok:
        return
    skip = pytest.mark.skip(reason=f"no GPU backend: {why}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="module")
def kernel_library(tmp_path_factory):
    """The package's .cu files compiled as host C++ (tests/fake_cupy.py), for running the GPU
    path's host code without a GPU; the nvcc builds are checked by tests/test_cuda_compile.py."""
    import fake_cupy
    if fake_cupy.compiler() is None:
        pytest.skip("no C++ compiler")
    return fake_cupy.build_kernel_library(tmp_path_factory.mktemp("kernels"))
