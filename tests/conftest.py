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


def pytest_sessionstart(session):
    """Ctrl-C tests send SIGINT to the subprocesses they start, which inherit this process's
    dispositions: a suite started in the background by a non-interactive shell (``cmd &``)
    has SIGINT ignored, and so would its subprocesses. Start from Python's default."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
