"""Shared fixtures and the GPU skip for every test group. The helpers (stand-ins, oracles,
synthetic images) are in ``tests/support/``, which pyproject's pytest ``pythonpath`` puts on
sys.path."""

import pytest


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
    """The package's .cu files compiled as host C++ (tests/support/fake_cupy.py), for running the GPU
    path's host code without a GPU; the nvcc builds are checked by tests/solver/test_cuda_compile.py."""
    import fake_cupy
    if fake_cupy.compiler() is None:
        pytest.skip("no C++ compiler")
    return fake_cupy.build_kernel_library(tmp_path_factory.mktemp("kernels"))
