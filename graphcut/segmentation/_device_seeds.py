"""The pipeline's seeds kept on the GPU between updates, so that a stroke uploads and checks
only the rectangle it changed (:class:`DeviceSeeds`).

:class:`~graphcut.Segmenter`'s pipeline (every model but the histogram's table route, boxes,
lassos, several objects) reads the seeds on the image's device. Given host seeds, it used to
check all of them on the host and upload all of them at every update (a 4 MP image: two
passes over 4 MB on the host and a 4 MB copy). With a ``region`` bounding every pixel whose
label changed since the last update, only that part is checked and copied; given the whole
seeds again (the library's ``Segmenter.update(seeds)``), the region is found by comparing them
with the kept copy (:func:`changed_region`: one pass, no check of the unchanged pixels, which
were checked when they came). The kept copy equals the caller's seeds, so every answer is the
one a fresh upload would give.
"""

from __future__ import annotations

import numpy as np

from graphcut._arrays import array_module, energy_kernels
from graphcut.io import check_seeds


#: whole seeds given again are compared with the kept copy, only the changed box checked and
#: uploaded (:func:`changed_region`); False: all of them (the state before the seventeenth
#: session, for A/B runs)
DIFF_WHOLE = True


class DeviceSeeds:
    """A host copy and a GPU copy (uint8) of the seeds last given to the pipeline.

    Parameters
    ----------
    shape : tuple of int
        The seeds' shape, (H, W) or a volume's (D, H, W).

    Examples
    --------
    >>> from graphcut.segmentation._device_seeds import DeviceSeeds
    >>> kept = DeviceSeeds((2, 3))
    >>> kept.host is None          # nothing kept yet: the first take uploads every seed
    True
    """

    def __init__(self, shape):
        self.shape = tuple(int(n) for n in shape)
        self.host = None    # uint8 NumPy copy, None: nothing kept
        self.device = None  # the same on the GPU

    def reset(self) -> None:
        """Forget the kept seeds: the next :meth:`take` uploads the whole array."""
        self.host = self.device = None

    def take(self, seeds, region=None):
        """The GPU seeds equal to ``seeds`` (host labels: 0 none, 1 object, 2 background,
        3 .. 254 further objects).

        Parameters
        ----------
        seeds : numpy.ndarray
            The seeds, of this object's shape; not modified.
        region : tuple of slices or None
            Bounds every pixel whose label changed since the last :meth:`take` (None: any
            pixel may have). Only that part is checked (:func:`graphcut.io.check_seeds`) and
            copied; without a kept copy the whole array is.

        Returns
        -------
        cupy.ndarray
            uint8, this object's shape: the kept GPU copy (read-only by convention; the next
            :meth:`take` changes it in place).

        Raises
        ------
        ValueError, TypeError
            As :func:`graphcut.io.check_seeds` (``multi=True``, no label required): a wrong
            shape, a non-integer dtype or an unknown label value; nothing is kept then.
        """
        import cupy

        seeds = np.asarray(seeds)
        name = "seeds in the edited region"
        if region is None and self.host is not None and tuple(seeds.shape) == self.shape \
                and seeds.dtype.kind in "iu" and DIFF_WHOLE:  # what changed, by a diff
            region, name = changed_region(seeds, self.host), "seeds"
        if region is None or self.host is None or tuple(seeds.shape) != self.shape:
            self.reset()
            checked = check_seeds(seeds, self.shape, require_both=False, multi=True)
            host = np.ascontiguousarray(checked, dtype=np.uint8)
            if host is checked:
                host = host.copy()  # ours: the caller's array changes between updates
            self.device, self.host = cupy.asarray(host), host
            return self.device
        if seeds.dtype.kind not in "iu":
            check_seeds(seeds)  # the dtype's message
        try:
            part = check_seeds(seeds[region], name=name, require_both=False, multi=True)
        except (TypeError, ValueError):
            self.reset()
            raise
        self.host[region] = part
        energy_kernels().upload_region(self.device, self.host, region)
        return self.device


def changed_region(seeds, kept):
    """The smallest box (a tuple of slices) holding every pixel where ``seeds`` differs from
    ``kept`` (same shape); empty slices when none does.

    Examples
    --------
    >>> import numpy as np
    >>> kept = np.zeros((4, 5), np.uint8)
    >>> seeds = kept.copy()
    >>> seeds[1, 3], seeds[2, 1] = 2, 1
    >>> changed_region(seeds, kept)
    (slice(1, 3, None), slice(1, 4, None))
    >>> changed_region(kept, kept)
    (slice(0, 0, None), slice(0, 0, None))
    """
    differs = seeds != kept
    bounds = []
    for axis in range(differs.ndim):
        others = tuple(a for a in range(differs.ndim) if a != axis)
        where = np.flatnonzero(differs.any(axis=others))
        if where.size == 0:
            return tuple(slice(0, 0) for _ in range(differs.ndim))
        bounds.append(slice(int(where[0]), int(where[-1]) + 1))
    return tuple(bounds)


def on_device(seeds) -> bool:
    """Whether ``seeds`` is a GPU (CuPy) array."""
    return seeds is not None and array_module(seeds) is not np


__all__ = ["DeviceSeeds", "changed_region", "on_device"]
