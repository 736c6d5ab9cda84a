"""The segmentation energy's GPU operations, as launches of ``energy_kernels.cu``.

graphcut/energy.py, graphcut/seeds.py and graphcut/session.py call these for CuPy arrays
instead of CuPy's element-wise and reduction kernels: those are compiled by NVRTC on a
machine's first run (seconds for the few dozen the energy needs) and CuPy's ufuncs import its
SciPy and linear-algebra extras on first use, where these kernels come from the fatbin shipped
in the wheel (the solver's one loader, :mod:`graphcut.solver.kernels`). Only memsets and
copies run besides them. Each function computes what its NumPy counterpart in graphcut/energy.py does, with the
same float64 formulas (see the .cu file).

Arrays are CuPy arrays; results that decide an error or a Python value (sums, extremes,
counts) come back to the host as a few numbers.
"""

from __future__ import annotations

import numpy as np
import cupy

from graphcut.solver.kernels import kernel, launch_grid

SOURCE = "segmentation/energy_kernels.cu"
INT32_MAX = 2**31 - 1
SIGN = 1 << 63
ALL_ONES = 2**64 - 1

# dtype.kind + itemsize -> the kernel suffix of image_to_float / seed_labels
_IMAGE_TYPES = {"b1": "b1", "u1": "u1", "u2": "u2", "u4": "u4", "u8": "u8", "i1": "i1",
                "i2": "i2", "i4": "i4", "i8": "i8", "f2": "f2", "f4": "f4", "f8": "f8"}


def blocks(n: int) -> int:
    """Blocks of a grid-stride launch over ``n`` items."""
    return launch_grid(n)[0][0]


def _launch(name: str, n: int, args) -> None:
    kernel(SOURCE, name)(*launch_grid(n), args)


def _key_to_float(key: int) -> float:
    """Inverse of the .cu file's ordered_key."""
    bits = key & ~SIGN if key & SIGN else ~key & ALL_ONES
    return float(np.array(bits, dtype=np.uint64).view(np.float64))


def _spatial_layout(array) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
    """(extents, element strides) of the spatial axes of ``array``, padded to three axes at
    the front (extent 1, stride 0)."""
    shape = tuple(int(n) for n in array.shape)
    strides = tuple(int(s) // array.itemsize for s in array.strides)
    pad = 3 - len(shape)
    return (1,) * pad + shape, (0,) * pad + strides


def image_to_float(image, divisor: float) -> tuple[cupy.ndarray, int]:
    """``image`` (a possibly strided (..., C) view with 1 or 3 channels, 2 or 3 spatial axes)
    as a new C-contiguous float64 array of the same shape, divided by ``divisor`` unless it is
    0, and the number of non-finite values (float images). The dtype picks the kernel."""
    code = f"{image.dtype.kind}{image.dtype.itemsize}"
    if code not in _IMAGE_TYPES:
        raise TypeError(f"no GPU conversion of images of dtype {image.dtype}")
    if code == "f2":
        image = image.view(cupy.uint16)
    channels = int(image.shape[-1])
    spatial = image[..., 0]
    (_, n1, n2), (s0, s1, s2) = _spatial_layout(spatial)
    channel_stride = int(image.strides[-1]) // image.itemsize
    values = cupy.empty(tuple(image.shape), dtype=cupy.float64)
    nonfinite = cupy.zeros(1, dtype=cupy.uint64)
    n = int(spatial.size)
    if n:
        _launch(f"image_to_float_{_IMAGE_TYPES[code]}", n, (
            np.int64(n), np.int32(channels), np.int64(n1), np.int64(n2), np.int64(s0),
            np.int64(s1), np.int64(s2), np.int64(channel_stride), np.float64(divisor), image,
            values, nonfinite))
    return values, int(nonfinite.get()[0])


def squared_differences(values) -> tuple[tuple[cupy.ndarray, ...], tuple[float, ...]]:
    """Per spatial axis of ``values`` (..., C), last axis first: the sums over channels of
    squared differences to the next neighbour along that axis, and the sum of each array."""
    spatial_shape = values.shape[:-1]
    ndim = len(spatial_shape)
    (n0, n1, n2), _ = _spatial_layout(values[..., 0])
    channels = int(values.shape[-1])
    arrays, sums = [], []
    for axis in reversed(range(ndim)):
        shape = list(spatial_shape)
        shape[axis] -= 1
        out = cupy.empty(tuple(shape), dtype=cupy.float64)
        count = int(np.prod(shape))
        total = 0.0
        if count:
            partials = cupy.zeros(blocks(count), dtype=cupy.float64)
            _launch("neighbour_differences", count, (
                np.int64(n0), np.int64(n1), np.int64(n2), np.int32(axis + 3 - ndim),
                np.int32(channels), values, out, partials))
            total = float(partials.get().sum())
        arrays.append(out)
        sums.append(total)
    return tuple(arrays), tuple(sums)


def exp_weights(differences, exponent: float, factor: float):
    """In place: ``differences`` -> ``exp(differences * exponent)`` (times ``factor`` unless
    it is 1). Returns the array."""
    if differences.size:
        _launch("nlink_weights", differences.size, (
            np.int64(differences.size), np.float64(exponent), np.float64(factor), differences))
    return differences


def quantize(values, lam: float, scale: float) -> tuple[cupy.ndarray, float | None, bool]:
    """``rint((lam * values) * scale)`` as int32, the largest rounded value (None when empty)
    and whether any rounded value was negative or not finite (the int32 array is then not
    valid, nor when the largest value is above the int32 limit)."""
    out = cupy.empty(values.shape, dtype=cupy.int32)
    if not values.size:
        return out, None, False
    stats = cupy.zeros(2, dtype=cupy.uint64)
    _launch("quantize", values.size, (np.int64(values.size), np.float64(lam), np.float64(scale),
                                      values, out, stats))
    largest, bad = (int(v) for v in stats.get())
    return out, (_key_to_float(largest) if largest else None), bad > 0


def seed_pins(links) -> tuple[cupy.ndarray, int]:
    """K_p = 1 + the sum of p's n-link capacities (int32 where it fits) and the largest K_p.
    ``links``: int32 C-contiguous arrays, one per axis, last axis first."""
    links = tuple(links)
    ndim = len(links)
    shape = list(links[0].shape)
    shape[-1] += 1
    n0, n1, n2 = (1,) * (3 - ndim) + tuple(int(v) for v in shape)
    pins = cupy.empty(tuple(shape), dtype=cupy.int32)
    stats = cupy.zeros(1, dtype=cupy.uint64)
    n = n0 * n1 * n2
    along_z = links[2] if ndim == 3 else links[0]
    _launch("seed_pins", n, (np.int64(n0), np.int64(n1), np.int64(n2), np.int32(ndim),
                             links[0], links[1], along_z, pins, stats))
    return pins, int(stats.get()[0])


def binary_capacities(cost_object, cost_background, constraints, weights, right, down,
                      scale: float):
    """One object's terminal capacities in one launch (``binary_capacities`` in the .cu file):
    ``(source, sink, fits, offset)``: ``fits`` whether they are valid (no negative or
    non-finite rounded cost, none and no K_p above the int32 limit, every constraint 0 / 1 /
    2), ``offset`` the energy offset (the free pixels' shifts plus the pinned pixels'
    weighted costs, float64 per-block sums added here in order).

    Every array is C-contiguous on the device: the costs float64 (H, W), ``constraints``
    uint8 (H, W), ``weights`` float64 (H, W) or None, ``right`` / ``down`` the int32 n-links
    (H, W - 1) / (H - 1, W)."""
    h, w = (int(v) for v in cost_object.shape)
    source = cupy.empty((h, w), dtype=cupy.int32)
    sink = cupy.empty((h, w), dtype=cupy.int32)
    n = h * w
    stats = cupy.zeros(6 + 2 * blocks(n), dtype=cupy.uint64)
    _launch("binary_capacities", n, (
        np.int64(h), np.int64(w), np.float64(scale), cost_object, cost_background, constraints,
        np.int32(weights is not None), cost_object if weights is None else weights, right, down,
        source, sink, stats))
    host = stats.get()
    source_key, source_bad, sink_key, sink_bad, largest_pin, bad_constraints = \
        (int(v) for v in host[:6])
    fits = not (source_bad or sink_bad or bad_constraints or largest_pin > INT32_MAX
                or any(key and _key_to_float(key) > INT32_MAX for key in (source_key, sink_key)))
    sums = host[6:].view(np.float64)
    return source, sink, fits, float(sums[0::2].sum()) + float(sums[1::2].sum())


def cut_capacity(side, source, sink, forward, backward) -> int:
    """The capacity of the cut of a 2-D grid network whose source side is the bool ``side``
    (H, W), one launch (``cut_capacity_2d``): ``forward`` / ``backward`` the (down, right)
    int32 arcs. Every array C-contiguous on the device."""
    h, w = (int(v) for v in side.shape)
    total = cupy.zeros(1, dtype=cupy.uint64)
    if h * w:
        _launch("cut_capacity_2d", h * w, (np.int64(h), np.int64(w), side, source, sink,
                                          forward[1], backward[1], forward[0], backward[0],
                                          total))
    return int(total.get()[0])


def seed_labels(seeds) -> tuple[cupy.ndarray, tuple[int, int, int]]:
    """``seeds`` (integer, 2-D or 3-D, possibly strided) as C-contiguous uint8 labels, and the
    counts of (object seeds, background seeds, values other than 0 / 1 / 2)."""
    code = f"{seeds.dtype.kind}{seeds.dtype.itemsize}"
    if code not in _IMAGE_TYPES or code[0] not in "iu":
        raise TypeError(f"no GPU seed check for dtype {seeds.dtype}")
    (_, n1, n2), (s0, s1, s2) = _spatial_layout(seeds)
    labels = cupy.empty(seeds.shape, dtype=cupy.uint8)
    counts = cupy.zeros(3, dtype=cupy.uint64)
    n = int(seeds.size)
    if n:
        _launch(f"seed_labels_{code}", n, (np.int64(n), np.int64(n1), np.int64(n2),
                                           np.int64(s0), np.int64(s1), np.int64(s2), seeds,
                                           labels, counts))
    object_seeds, background_seeds, bad = (int(v) for v in counts.get())
    return labels, (object_seeds, background_seeds, bad)


def label_histogram(labels) -> np.ndarray | None:
    """The pixels of each value 1 .. 255 of uint8 ``labels`` (a C-contiguous CuPy array), as
    host ``uint64`` counts indexed by value (entry 0 is 0); None for other arrays. One pass
    and one 2 KB read: several objects' seeds listed without a copy of the image to the host.
    """
    if labels.dtype != np.uint8 or not labels.flags.c_contiguous:
        return None
    counts = cupy.zeros(256, dtype=cupy.uint64)
    n = int(labels.size)
    if n:
        _launch("label_histogram_u1", n, (np.int64(n), labels, counts))
    return counts.get()


def nearest_seed_costs(shape, seeded, table) -> cupy.ndarray:
    """float64 ``shape`` (rows, cols): at each cell ``table[d]``, ``d`` the squared distance
    (cells) to the nearest True cell of the host bool array ``seeded`` (at least one);
    ``table`` a CuPy float64 array covering every squared distance of the grid. One brute-force
    pass (rows x cols x seeded cells): for coarse grids (a live model's blocks)."""
    rows, cols = (int(n) for n in shape)
    where = np.nonzero(seeded)
    seed_rows, seed_cols = (cupy.asarray(a.astype(np.int32)) for a in where)
    cost = cupy.empty((rows, cols), dtype=cupy.float64)
    _launch("nearest_seed_cost", rows * cols, (np.int64(rows * cols), np.int32(cols),
                                               np.int32(where[0].size), seed_rows, seed_cols,
                                               table, cost))
    return cost


def channel_ranges(values) -> tuple[list[float], list[float]]:
    """Per channel of ``values`` (..., C), C <= 3: its minimum and maximum."""
    channels = int(values.shape[-1])
    n = int(values.size) // channels
    keys = cupy.asarray(np.array([ALL_ONES, 0] * channels, dtype=np.uint64))
    _launch("channel_range", n, (np.int64(n), np.int32(channels), values, keys))
    found = [int(k) for k in keys.get()]
    return ([_key_to_float(k) for k in found[0::2]], [_key_to_float(k) for k in found[1::2]])


def bin_cells(values, bins: int) -> cupy.ndarray:
    """The joint histogram cell (int32) of every pixel of ``values`` (..., C), each channel cut
    into ``bins`` equal bins over its own range (graphcut.energy._bin_indices)."""
    channels = int(values.shape[-1])
    n = int(values.size) // channels
    low, high = channel_ranges(values)
    span = [h - l if h > l else 1.0 for l, h in zip(low, high)]
    low, span = low + [0.0] * (3 - channels), span + [1.0] * (3 - channels)
    index = cupy.empty(values.shape[:-1], dtype=cupy.int32)
    _launch("bin_cells", n, (np.int64(n), np.int32(channels), np.int32(bins),
                             *(np.float64(v) for v in low), *(np.float64(v) for v in span),
                             values, index))
    return index


def seed_histograms(index, labels, cells: int) -> np.ndarray:
    """int64 (2, cells) NumPy array: object (row 0) and background (row 1) seeds per cell."""
    counts = cupy.zeros(2 * cells, dtype=cupy.uint64)
    n = int(index.size)
    _launch("seed_histograms", n, (np.int64(n), np.int32(cells), index, labels, counts))
    return counts.get().astype(np.int64).reshape(2, cells)


def capacities_from_tables(index, seeds, pins, source_table, sink_table, source, sink) -> None:
    """Terminal capacities by table lookup, with the seeds' hard constraints (into
    ``source``, ``sink``)."""
    for name, array, dtype in (("index", index, cupy.int32), ("seeds", seeds, cupy.uint8),
                               ("pins", pins, cupy.int32), ("source_table", source_table,
                                                            cupy.int32),
                               ("sink_table", sink_table, cupy.int32),
                               ("source", source, cupy.int32), ("sink", sink, cupy.int32)):
        if array.dtype != dtype or not array.flags.c_contiguous:
            raise TypeError(f"capacities_from_tables: {name} must be a C-contiguous "
                            f"{np.dtype(dtype).name} array on the GPU, got {array.dtype}")
    if not (seeds.size == pins.size == source.size == sink.size == index.size):
        raise ValueError("capacities_from_tables: index, seeds, pins and the outputs must "
                         "have the same size")
    n = int(index.size)
    _launch("capacities_from_tables", n, (np.int64(n), source_table, sink_table, index, seeds,
                                          pins, source, sink))


def apply_seed_pins(seeds, pins, source, sink) -> None:
    """In place: object seeds (1) get ``source = pins``, ``sink = 0``, background seeds (2)
    ``source = 0``, ``sink = pins`` (all C-contiguous; ``seeds`` uint8)."""
    n = int(seeds.size)
    _launch("apply_seed_pins", n, (np.int64(n), seeds, pins, source, sink))


def lookup_costs(table, index) -> cupy.ndarray:
    """float64 ``table[index]`` shaped like ``index``."""
    costs = cupy.empty(index.shape, dtype=cupy.float64)
    n = int(index.size)
    _launch("lookup_costs", n, (np.int64(n), table, index, costs))
    return costs


def upload_region(device, host: np.ndarray, region) -> None:
    """``device[region] = host[region]`` with copies only (no CuPy kernel): ``device`` a
    C-contiguous 2-D or 3-D CuPy array, ``host`` a NumPy array of its shape and dtype,
    ``region`` a tuple of slices with step 1."""
    part = np.ascontiguousarray(host[region])
    if part.size == 0:
        return
    item = device.itemsize
    starts = [s.start for s in region]
    rows, cols = part.shape[-2:]
    pitch = device.shape[-1] * item
    stream = cupy.cuda.get_current_stream()
    planes = part.reshape(-1, rows, cols)
    for k, plane in enumerate(planes):
        offset = (starts[-2] * device.shape[-1] + starts[-1]) * item
        if device.ndim == 3:
            offset += (starts[0] + k) * device.shape[-2] * pitch
        cupy.cuda.runtime.memcpy2DAsync(device.data.ptr + offset, pitch, plane.ctypes.data,
                                        cols * item, cols * item, rows,
                                        cupy.cuda.runtime.memcpyHostToDevice, stream.ptr)
    stream.synchronize()  # the host part is a temporary


__all__ = ["bin_cells", "binary_capacities", "capacities_from_tables", "apply_seed_pins",
           "channel_ranges", "cut_capacity", "exp_weights", "image_to_float", "label_histogram",
           "lookup_costs", "quantize", "seed_histograms", "seed_labels", "seed_pins",
           "squared_differences", "upload_region"]
