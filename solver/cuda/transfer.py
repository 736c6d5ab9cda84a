"""Moving grid networks onto the GPU and results back, through page-locked staging buffers.

A NumPy array lives in pageable memory, which the GPU cannot read directly: a plain copy
(``cupy.asarray``) goes through the driver's own small staging buffers, one piece after another,
at a few GB/s. Here the host arrays are cut into row blocks and copied by a few threads into a
ring of page-locked (pinned) buffers, each block sent on with an asynchronous copy as soon as it
is staged, so the host copies, the transfers and the other threads overlap.

What the grid kernels need, and only that, goes up: the four n-link arrays straight into their
place in the residual arrays (pitched 2-D copies; the border cells stay zero; a symmetric
network's ``left``/``up``, which are its ``right``/``down``, copied on the GPU from those), and
the terminal capacities, which one kernel (``grid_state.cu``) folds into excess, residuals
to the sink, the int64 capacities in force and their sum. A network already on the GPU is
copied device to device and folded in place. The flow and the cut are read out with kernels of
the same file (:func:`sum_nonnegative`, :func:`cut_side`), which also applies the new terminal
capacities of a dynamic re-solve (:func:`reparameterize`) and its new n-link capacities
(:func:`change_nlinks`), and fills the solver's flag arrays (:func:`fill_int32`). No CuPy
element-wise or reduction kernel runs on these paths, so nothing has to be compiled for them on
a machine's first run.
"""

from __future__ import annotations

import concurrent.futures
import functools
import os
import threading

import cupy
import numpy as np
from cupy.cuda import runtime

from ._loader import kernel
from .launch import THREADS, launch_grid

STATE_SOURCE = "grid_state.cu"
FOLD_THREADS = THREADS           # GRAPHCUT_THREADS, compiled into grid_state.cu
SLOT_BYTES = 4 << 20             # one staging buffer (page-locked, allocated once per process)
BLOCK_BYTES = SLOT_BYTES         # the most one staged copy carries (<= SLOT_BYTES)
SLOTS_PER_WORKER = 2             # a worker fills one while the other is being sent
MAX_WORKERS = 4
RIGHT, LEFT, DOWN, UP = range(4)  # the residual array order of GridState


def row_blocks(rows: int, row_bytes: int, block_bytes: int) -> list[tuple[int, int]]:
    """``(first, end)`` row ranges covering ``rows`` rows, each at most ``block_bytes`` (and at
    least one row)."""
    per_block = max(1, block_bytes // max(1, row_bytes))
    return [(first, min(rows, first + per_block)) for first in range(0, rows, per_block)]


@functools.cache
def worker_count() -> int:
    """Staging threads: up to MAX_WORKERS, at most the CPUs this process may use."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return max(1, min(MAX_WORKERS, cpus))


class _Stager:
    """One thread's staging buffers and stream (the buffers are allocated once per process)."""

    def __init__(self, slot_bytes: int):
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.slots = [cupy.cuda.alloc_pinned_memory(slot_bytes) for _ in range(SLOTS_PER_WORKER)]
        self.views = [np.frombuffer(slot, dtype=np.uint8, count=slot_bytes)
                      for slot in self.slots]
        self.sent = [None] * SLOTS_PER_WORKER  # event of each slot's last transfer
        self.next = 0
        self.lock = threading.Lock()

    def send(self, host: np.ndarray, destination: int, pitch: int) -> None:
        """Stage the C-contiguous 2-D ``host`` block and copy it to ``destination`` (a device
        address), its rows ``pitch`` bytes apart."""
        slot = self.next
        self.next = (slot + 1) % SLOTS_PER_WORKER
        if self.sent[slot] is not None:
            self.sent[slot].synchronize()  # the buffer's previous transfer has finished
        rows, width = host.shape[0], host.shape[1] * host.itemsize
        staged = self.views[slot][:rows * width].view(host.dtype).reshape(host.shape)
        np.copyto(staged, host)
        runtime.memcpy2DAsync(destination, pitch, self.slots[slot].ptr, width, width, rows,
                              runtime.memcpyHostToDevice, self.stream.ptr)
        event = cupy.cuda.Event(block=False, disable_timing=True)
        event.record(self.stream)
        self.sent[slot] = event


_stagers: dict[int, list[_Stager]] = {}  # by device id
_stagers_lock = threading.Lock()


def _stagers_for(device_id: int) -> list[_Stager]:
    with _stagers_lock:
        if device_id not in _stagers:
            with cupy.cuda.Device(device_id):
                _stagers[device_id] = [_Stager(SLOT_BYTES) for _ in range(worker_count())]
        return _stagers[device_id]


def prepare_staging() -> None:
    """Allocate this device's staging buffers now (page-locking memory takes milliseconds)."""
    _stagers_for(cupy.cuda.Device().id)


def copy_rows(copies, stream: cupy.cuda.Stream) -> None:
    """Copy 2-D arrays into device memory; ``stream`` waits for all of it.

    Args:
        copies: ``(array, destination, pitch)`` triples: a C-contiguous 2-D array of NumPy
            (staged through pinned buffers) or CuPy (copied device to device on ``stream``),
            the device address of its first row, and the bytes between rows there.
        stream: the stream whose later work must see the copies.
    """
    device_id = cupy.cuda.Device().id
    blocks = []
    for array, destination, pitch in copies:
        if array.size == 0:
            continue
        width = array.shape[1] * array.itemsize
        if isinstance(array, cupy.ndarray):
            runtime.memcpy2DAsync(destination, pitch, array.data.ptr, width, width,
                                  array.shape[0], runtime.memcpyDeviceToDevice, stream.ptr)
            continue
        block_bytes = min(BLOCK_BYTES, SLOT_BYTES)
        for first, end in row_blocks(array.shape[0], width, block_bytes):
            if (end - first) * width <= SLOT_BYTES:
                blocks.append((array[first:end], destination + first * pitch, pitch))
                continue
            for column in range(0, array.shape[1], SLOT_BYTES // array.itemsize):  # a huge row
                part = array[first:end, column:column + SLOT_BYTES // array.itemsize]
                blocks.append((np.ascontiguousarray(part),
                               destination + first * pitch + column * array.itemsize, pitch))
    if not blocks:
        return
    stagers = _stagers_for(device_id)
    shares = [blocks[i::len(stagers)] for i in range(len(stagers))]

    def run(stager: _Stager, share) -> None:
        with cupy.cuda.Device(device_id), stager.lock:
            for host, destination, pitch in share:
                stager.send(host, destination, pitch)
            done = cupy.cuda.Event(block=False, disable_timing=True)
            done.record(stager.stream)
            stream.wait_event(done)

    busy = [(stager, share) for stager, share in zip(stagers, shares) if share]
    if len(busy) == 1:
        run(*busy[0])
        return
    for future in [_pool().submit(run, stager, share) for stager, share in busy]:
        future.result()


@functools.cache
def _pool() -> concurrent.futures.ThreadPoolExecutor:
    return concurrent.futures.ThreadPoolExecutor(worker_count(), thread_name_prefix="gc-stage")


def upload_grid(state, network) -> None:
    """Load ``network`` (a 2-D GridNetwork, NumPy or CuPy) into ``state`` (a GridState of its
    shape): residuals = n-link capacities, zero flow, terminal arcs folded in. Returns when the
    state is complete."""
    h, w = state.shape
    stream = cupy.cuda.get_current_stream()
    residual = state.residual  # (4, H, W) uint32, C-contiguous; borders stay 0
    base, item = residual.data.ptr, residual.itemsize
    plane, pitch = h * w * item, w * item
    right, left = base + RIGHT * plane, base + LEFT * plane + item    # (H, W-1) views
    down, up = base + DOWN * plane, base + UP * plane + pitch         # (H-1, W) views
    copies = [(network.right, right, pitch), (network.down, down, pitch)]
    # a symmetric network's reverse arcs come from the forward ones already on the GPU
    mirrored = [(network.left is network.right, right, left, (h, w - 1)),
                (network.up is network.down, down, up, (h - 1, w))]
    copies += [(network.left, left, pitch)] if not mirrored[0][0] else []
    copies += [(network.up, up, pitch)] if not mirrored[1][0] else []
    if network.on_gpu:
        source, sink = network.source, network.sink
    else:
        terminals = cupy.empty((2, h, w), dtype=cupy.int32)
        source, sink = terminals
        copies[:0] = [(network.source, source.data.ptr, pitch),
                      (network.sink, sink.data.ptr, pitch)]
    copy_rows(copies, stream)
    for same, origin, target, (rows, cols) in mirrored:
        if same and rows and cols:
            runtime.memcpy2DAsync(target, pitch, origin, pitch, cols * item, rows,
                                  runtime.memcpyDeviceToDevice, stream.ptr)
    fold_terminals(state, source, sink, stream)


def fold_terminals(state, source: cupy.ndarray, sink: cupy.ndarray,
                   stream: cupy.cuda.Stream) -> None:
    """The state of zero n-link flow for these terminal capacities (int32 (H, W) on the GPU):
    excess, residual to the sink, capacities in force and their sum (``fresh_terminals``)."""
    n = source.size
    if state.source_capacity is None or state.source_capacity.shape != source.shape:
        state.source_capacity = cupy.empty(source.shape, dtype=cupy.int64)
        state.sink_capacity = cupy.empty(source.shape, dtype=cupy.int64)
    total = cupy.zeros(1, dtype=cupy.uint64)
    blocks = _blocks(n)
    with stream:
        kernel(STATE_SOURCE, "fold_terminals")(
            (blocks,), (FOLD_THREADS,),
            (np.int64(n), source, sink, state.excess, state.to_sink, state.source_capacity,
             state.sink_capacity, total))
        sink_total = total.get(stream=stream)
    state.sink_capacity_total = int(sink_total[0])
    state.reparameterization = 0


def _blocks(n: int) -> int:
    return launch_grid(n, FOLD_THREADS)[0][0]


def sum_nonnegative(values: cupy.ndarray) -> int:
    """The exact sum of a C-contiguous int32 array of values >= 0, as a Python int."""
    total = cupy.zeros(1, dtype=cupy.uint64)
    kernel(STATE_SOURCE, "sum_nonnegative")((_blocks(values.size),), (FOLD_THREADS,),
                                            (np.int64(values.size), values, total))
    return int(total.get()[0])


def load_residuals(state) -> None:
    """The residuals of a 2-D ``state`` = its n-link capacities in force (``state.nlinks``,
    NumPy or CuPy), by copies into the residual planes (their borders stay zero)."""
    h, w = state.shape
    right, left, down, up = state.nlinks
    base, item = state.residual.data.ptr, state.residual.itemsize
    plane, pitch = h * w * item, w * item
    copy_rows([(right, base + RIGHT * plane, pitch), (left, base + LEFT * plane + item, pitch),
               (down, base + DOWN * plane, pitch), (up, base + UP * plane + pitch, pitch)],
              cupy.cuda.get_current_stream())


def reparameterize(state, source: cupy.ndarray, sink: cupy.ndarray) -> bool:
    """New terminal capacities (C-contiguous int32) for ``state``'s kept preflow, in place by
    grid_state.cu's ``reparameterize_terminals`` (graphcut.solver.dynamic's function of that
    name, per pixel). Returns False when a residual to the sink would leave int32: the state
    is then inconsistent and the caller must restart it from zero n-link flow."""
    totals = cupy.zeros(3, dtype=cupy.uint64)  # deltas, new sink capacities, overflows
    kernel(STATE_SOURCE, "reparameterize_terminals")(
        (_blocks(source.size),), (FOLD_THREADS,),
        (np.int64(source.size), source, sink, state.excess, state.to_sink,
         state.source_capacity, state.sink_capacity, totals))
    deltas, sinks, overflows = (int(v) for v in totals.get())
    if overflows:
        return False
    state.sink_capacity_total = sinks
    state.reparameterization = deltas
    return True


def change_nlinks(state, old_links, new_links, restart: bool = False) -> tuple[int, int]:
    """New n-link capacities for ``state``'s kept preflow (a GridState or VolumeState), in place
    by grid_state.cu's ``change_nlinks`` (graphcut.solver.dynamic's reparameterize_nlinks, per
    pixel), or with ``restart`` its zero-flow state (restart_nlinks; ``old_links`` unread).

    ``old_links``, ``new_links``: ``(forward, backward)``, one C-contiguous int32 device array
    per NumPy axis (GridNetwork's layout), the old ones those in force. Returns (the sum of the
    deltas added to both terminal capacities, the pixels whose residual to the sink would leave
    int32): when the second is not 0 the state is inconsistent and must be restarted."""
    ndim = len(state.shape)

    def by_direction(links):  # RIGHT, LEFT, DOWN, UP(, NEXT_SLICE, PREV_SLICE)
        forward, backward = links
        return [(backward if k & 1 else forward)[ndim - 1 - k // 2] for k in range(2 * ndim)]

    totals = cupy.zeros(2, dtype=cupy.uint64)  # deltas, overflows
    kernel(STATE_SOURCE, "change_nlinks" + state.KERNEL_SUFFIX)(
        (_blocks(state.excess.size),), (FOLD_THREADS,),
        (*(np.int32(n) for n in reversed(state.shape)), np.int32(bool(restart)),
         *by_direction(new_links if restart else old_links), *by_direction(new_links),
         *state.residual, state.excess, state.to_sink, state.source_capacity,
         state.sink_capacity, totals))
    deltas, overflows = (int(v) for v in totals.get())
    return deltas, overflows


def fill_int32(array: cupy.ndarray, value: int) -> None:
    """``array[...] = value`` for a C-contiguous int32 array, by a kernel of grid_state.cu (on
    the current stream)."""
    if array.size:
        kernel(STATE_SOURCE, "fill_int32")((_blocks(array.size),), (FOLD_THREADS,),
                                           (np.int64(array.size), np.int32(value), array))


def cut_side(height: cupy.ndarray, inf: int) -> cupy.ndarray:
    """``height >= inf`` as a bool array of the same shape (the pixels cut off from the sink)."""
    side = cupy.empty(height.shape, dtype=cupy.bool_)
    kernel(STATE_SOURCE, "cut_side")((_blocks(height.size),), (FOLD_THREADS,),
                                     (np.int64(height.size), height, np.int32(inf), side))
    return side


def to_host(array: cupy.ndarray) -> np.ndarray:
    """A NumPy copy of ``array`` made through page-locked memory (the returned array owns it)."""
    pinned = cupy.cuda.alloc_pinned_memory(max(1, array.nbytes))
    out = np.frombuffer(pinned, dtype=array.dtype, count=array.size).reshape(array.shape)
    array = cupy.ascontiguousarray(array)
    stream = cupy.cuda.get_current_stream()
    runtime.memcpyAsync(out.ctypes.data, array.data.ptr, array.nbytes,
                        runtime.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()
    return out


def int32_on_gpu(array) -> cupy.ndarray:
    """``array`` as a C-contiguous int32 CuPy array (no copy when it is one already)."""
    array = cupy.asarray(array)
    if array.dtype != cupy.int32 or not array.flags.c_contiguous:
        array = cupy.ascontiguousarray(array, dtype=cupy.int32)
    return array


def checked_links(shape, forward, backward) -> tuple[tuple, tuple]:
    """n-link capacities ``(forward, backward)`` of a grid of ``shape`` (one array per NumPy
    axis each, :class:`~graphcut.solver.GridNetwork`'s convention) as int32 device arrays,
    their number and shapes checked (ValueError naming the array otherwise)."""
    ndim = len(shape)
    if len(forward) != ndim or len(backward) != ndim:
        raise ValueError(f"a {ndim}-D state needs {ndim} forward and {ndim} backward n-link "
                         f"arrays (one per axis), got {len(forward)} and {len(backward)}")
    checked = []
    for side, name in ((forward, "forward"), (backward, "backward")):
        arrays = []
        for axis, array in enumerate(side):
            expected = tuple(n - (a == axis) for a, n in enumerate(shape))
            if tuple(array.shape) != expected:
                raise ValueError(f"{name}[{axis}] must have shape {expected} for a grid "
                                 f"of shape {tuple(shape)}, got {tuple(array.shape)}")
            arrays.append(int32_on_gpu(array))
        checked.append(tuple(arrays))
    return tuple(checked)
