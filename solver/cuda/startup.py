"""Getting a process's GPU ready while it does something else (e.g. decodes the image).

:func:`prepare_process` creates the CUDA context and CuPy's memory pool and loads the kernel
modules that a segmentation uses (the shipped fatbins, else NVRTC), so that the first
``graphcut.segment(..., device="cuda")`` starts with everything loaded. ``graphcut segment``
runs it in a thread while it reads the image and the seeds.
"""

from __future__ import annotations

import time

# The kernel sources of graphcut.segment's GPU path (energy, solver state, push-relabel).
SEGMENTATION_SOURCES = ("segmentation/energy_kernels.cu", "grid_state.cu", "grid_kernels.cu")


def prepare_process(sources=SEGMENTATION_SOURCES) -> float:
    """Create the CUDA context of the current device, and load ``sources``' plain builds
    through the package's one loader; returns the seconds spent. Raises what CuPy raises when
    the GPU cannot be used (callers that only want a head start may ignore it: the real work
    raises it again)."""
    started = time.perf_counter()
    import cupy

    from ._loader import load_module
    cupy.empty(1, dtype=cupy.uint8)  # the context and the memory pool
    for source in sources:
        load_module(source)
    return time.perf_counter() - started


__all__ = ["SEGMENTATION_SOURCES", "prepare_process"]
