"""What the window and the solver processes exchange, sent as little as possible. No Qt in here.

- The image goes once per opened image, through shared memory (:class:`SharedArray`): every
  solver process maps the same pages, and a restarted process maps them again for free (when
  the shared-memory disk is too small, see :func:`shared_memory_fits`, it goes through the
  pipe instead, once per solver process).
- Seeds go as edits: the rectangle that changed and its labels (:class:`SeedDelta`).
- Masks come back as edits too: the bounding box of the pixels that changed since the last
  mask sent, as packed bits (:class:`MaskUpdate`, 1 bit per pixel), computed where the mask
  is (on the GPU for the GPU backend).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from multiprocessing import shared_memory

import numpy as np

Region = tuple  # (row_start, row_stop, col_start, col_stop), ints; volumes: a pair per axis


@dataclass(frozen=True)
class ArrayRef:
    """Where to find a :class:`SharedArray`: picklable, a few bytes."""

    name: str
    shape: tuple
    dtype: str


class SharedArray:
    """A NumPy array in a named shared-memory block, created by the window's process.

    The creator owns the block: :meth:`close` (or the end of the creating process) frees it.
    Other processes :func:`attach` to it by its :attr:`ref` and never free it.
    """

    def __init__(self, array: np.ndarray):
        array = np.ascontiguousarray(array)
        self._memory = shared_memory.SharedMemory(create=True, size=max(array.nbytes, 1))
        self.array = np.ndarray(array.shape, array.dtype, buffer=self._memory.buf)
        self.array[...] = array
        self.ref = ArrayRef(self._memory.name, tuple(array.shape), array.dtype.str)

    def close(self) -> None:
        """Free the block (processes that attached keep their mapping until they close it)."""
        if self._memory is None:
            return
        memory, self._memory = self._memory, None
        self.array = None
        memory.close()
        try:
            memory.unlink()
        except FileNotFoundError:
            pass


def shared_memory_fits(nbytes: int) -> bool:
    """Whether a shared block of ``nbytes`` fits: on Linux shared memory lives in /dev/shm, a
    RAM disk that containers often keep small (64 MB), and writing past its end kills the
    process (SIGBUS) instead of failing cleanly."""
    if not sys.platform.startswith("linux"):
        return True
    try:
        stats = os.statvfs("/dev/shm")
    except OSError:
        return False
    return stats.f_bavail * stats.f_frsize > 1.1 * nbytes + 2**20


class AttachedArray:
    """A view of another process's :class:`SharedArray` (``.array``, read-only)."""

    def __init__(self, ref: ArrayRef):
        if sys.version_info >= (3, 13):
            self._memory = shared_memory.SharedMemory(name=ref.name, track=False)
        else:
            self._memory = shared_memory.SharedMemory(name=ref.name)
            # Before 3.13 attaching registers the block with this process's resource tracker,
            # which would free it when this process ends (or is killed): the creator owns it.
            from multiprocessing import resource_tracker
            resource_tracker.unregister(self._memory._name, "shared_memory")
        self.array = np.ndarray(ref.shape, np.dtype(ref.dtype), buffer=self._memory.buf)
        self.array.flags.writeable = False

    def close(self) -> None:
        """Drop the array and detach from the shared memory (it is not unlinked)."""
        if self._memory is not None:
            self.array = None
            self._memory.close()
            self._memory = None


@dataclass(frozen=True)
class SeedDelta:
    """New labels for a rectangle of the seeds (``region`` None: the whole seed array)."""

    region: Region | None
    labels: np.ndarray

    def apply(self, seeds: np.ndarray) -> tuple:
        """Write the labels into ``seeds``; returns the region as a pair of slices."""
        slices = full_slices(seeds.shape) if self.region is None else to_slices(self.region)
        seeds[slices] = self.labels
        return slices


@dataclass(frozen=True)
class MaskUpdate:
    """A mask as a change to the previous one: the rectangle ``region`` that holds every pixel
    that changed, and that rectangle's new values as packed bits (row-major). ``region`` None:
    nothing changed."""

    shape: tuple
    region: Region | None
    bits: bytes = b""

    @classmethod
    def between(cls, old, new) -> "MaskUpdate":
        """The update that turns ``old`` into ``new`` (bool (H, W), NumPy or CuPy; ``old``
        None: the whole of ``new``). Bits are computed on ``new``'s device. A volume
        (D, H, W, ...) is handled as its (D * H * ..., W) view: ``region`` is then a rectangle
        of that view and ``shape`` the volume's shape."""
        shape = tuple(new.shape)
        if new.ndim != 2:
            new = new.reshape(-1, shape[-1])
            old = None if old is None else old.reshape(-1, shape[-1])
        xp = _array_module(new)
        h, w = new.shape
        if xp is not np:  # the shipped mask kernels (no CuPy kernel to compile)
            from graphcut.segmentation import masks
            region = (0, h, 0, w) if old is None else masks.changed_region(old, new)
            if region is None:
                return cls(shape, None)
            return cls(shape, region, masks.packed_bits(new, region))
        if old is None:
            region = (0, h, 0, w)
        else:
            changed = old != new
            rows = xp.flatnonzero(changed.any(axis=1))
            if rows.size == 0:
                return cls(shape, None)
            cols = xp.flatnonzero(changed.any(axis=0))
            bounds = xp.stack([rows[0], rows[-1], cols[0], cols[-1]])
            r0, r1, c0, c1 = (int(v) for v in (bounds.get() if xp is not np else bounds))
            region = (r0, r1 + 1, c0, c1 + 1)
        bits = xp.packbits(new[to_slices(region)])
        return cls(shape, region, (bits.get() if xp is not np else bits).tobytes())

    def apply(self, mask: np.ndarray) -> tuple | None:
        """Write the update into ``mask`` (bool, NumPy); returns the changed region as a tuple
        of slices (one per axis; for a volume the slabs of its first axis that changed), or
        None."""
        if self.region is None:
            return None
        view = mask if mask.ndim == 2 else mask.reshape(-1, mask.shape[-1])
        r0, r1, c0, c1 = self.region
        count = (r1 - r0) * (c1 - c0)
        values = np.unpackbits(np.frombuffer(self.bits, np.uint8), count=count)
        view[to_slices(self.region)] = values.reshape(r1 - r0, c1 - c0).view(bool)
        if mask.ndim == 2:
            return to_slices(self.region)
        per_slab = int(np.prod(mask.shape[1:-1]))
        return (slice(r0 // per_slab, (r1 - 1) // per_slab + 1),) + full_slices(mask.shape)[1:]


def mask_fraction(mask) -> float:
    """The share of True pixels of a bool mask (NumPy, or CuPy: counted by a shipped kernel)."""
    if _array_module(mask) is not np:
        from graphcut.segmentation import masks
        return masks.count_true(mask) / mask.size
    return float(np.count_nonzero(mask)) / mask.size


def to_slices(region: Region) -> tuple:
    """``(start0, stop0, start1, stop1, ...)`` as a tuple of slices, one per axis."""
    return tuple(slice(region[i], region[i + 1]) for i in range(0, len(region), 2))


def full_slices(shape) -> tuple:
    """Slices that cover every element of an array of ``shape``.

    Parameters
    ----------
    shape : tuple of int

    Returns
    -------
    tuple of slice
    """
    return tuple(slice(0, n) for n in shape)


def union(a: Region | None, b: Region | None) -> Region | None:
    """The bounding box of two regions (None is empty)."""
    if a is None:
        return b
    if b is None:
        return a
    return tuple(min(a[i], b[i]) if i % 2 == 0 else max(a[i], b[i]) for i in range(len(a)))


def from_slices(slices) -> Region:
    """A tuple of slices (steps of 1, bounds set) as ``(start0, stop0, start1, stop1, ...)``."""
    return tuple(bound for s in slices for bound in (s.start, s.stop))


def _array_module(array):
    if type(array).__module__.split(".")[0] == "cupy":
        import cupy
        return cupy
    return np
