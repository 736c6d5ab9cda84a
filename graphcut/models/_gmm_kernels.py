"""The Gaussian mixture's costs on the GPU as one launch of ``models/gmm_kernels.cu`` (shipped
precompiled): every pixel's ``-log p(x)`` from its channels and the mixture's linear form,
with no per-pixel feature matrix (:class:`graphcut.models.GMMModel` on an image it did not
learn from: a live stroke's full-size costs)."""

from __future__ import annotations

import numpy as np

SOURCE = "models/gmm_kernels.cu"
#: the kernel's limits (its registers): channels and Gaussians per mixture
MAX_CHANNELS, MAX_COMPONENTS = 4, 16


def fused_mixture_costs(values, linear, constant):
    """``-log p(x)`` (N,) float64 of every pixel of CuPy ``values`` (H, W, C) under the
    mixture's linear form (``linear`` (F, K), ``constant`` (K,), host NumPy;
    ``GMMModel._linear_form``), in one kernel launch; None where the kernel does not apply
    (not CuPy float64 C-contiguous, more than :data:`MAX_CHANNELS` channels or
    :data:`MAX_COMPONENTS` Gaussians).

    Examples
    --------
    >>> costs = fused_mixture_costs(values, *model._linear_form(3))  # doctest: +SKIP
    """
    channels = int(values.shape[-1])
    count = int(linear.shape[1])
    if (type(values).__module__.split(".")[0] != "cupy" or values.dtype != np.float64
            or not values.flags.c_contiguous or not 0 < channels <= MAX_CHANNELS
            or not 0 < count <= MAX_COMPONENTS
            or linear.shape[0] != channels + channels * (channels + 1) // 2):
        return None
    import cupy

    from graphcut.solver.kernels import kernel, launch_grid

    n = int(values.size) // channels
    costs = cupy.empty(n, dtype=cupy.float64)
    if n:
        kernel(SOURCE, "gmm_costs")(*launch_grid(n), (
            np.int64(n), np.int32(channels), np.int32(count), values,
            cupy.asarray(np.ascontiguousarray(linear, dtype=np.float64)),
            cupy.asarray(np.ascontiguousarray(constant, dtype=np.float64)), costs))
    return costs


__all__ = ["MAX_CHANNELS", "MAX_COMPONENTS", "SOURCE", "fused_mixture_costs"]
