"""Flow networks: a pixel or voxel grid (4- or 6-connected) and a general directed network in
CSR form.

Capacities are integers that fit in int32 (0 .. 2**31 - 1). Flow values can exceed that range
and are always reported as exact Python ints.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import array_module, is_cupy
from .memory import require_host_memory

INT32_MAX = np.iinfo(np.int32).max

# Peak bytes of CSRNetwork.from_arcs per vertex (offsets, tail counts) and per arc given (int64
# copies, sort keys and order, sums), measured and rounded up.
CSR_BUILD_BYTES_PER_VERTEX = 24
CSR_BUILD_BYTES_PER_ARC = 96


def csr_build_bytes(num_vertices: int, num_arcs: int) -> int:
    """Peak bytes :meth:`CSRNetwork.from_arcs` needs for ``num_vertices`` and ``num_arcs``."""
    return (CSR_BUILD_BYTES_PER_VERTEX * int(num_vertices)
            + CSR_BUILD_BYTES_PER_ARC * int(num_arcs))


def check_network_size(num_vertices: int, num_arcs: int) -> None:
    """Refuse (HostMemoryError, a MemoryError) a CSRNetwork whose construction would need more
    memory than is available, before anything is allocated."""
    require_host_memory(csr_build_bytes(num_vertices, num_arcs),
                        f"building a network of {num_vertices} vertices and {num_arcs} arcs")


def _check_terminals(n, source, sink) -> tuple[int, int, int]:
    n, source, sink = int(n), int(source), int(sink)
    if n < 2:
        raise ValueError(f"a flow network needs at least 2 vertices, got n={n}")
    for name, v in (("source", source), ("sink", sink)):
        if not 0 <= v < n:
            raise ValueError(f"{name} vertex {v} is out of range 0..{n - 1}")
    if source == sink:
        raise ValueError(f"source and sink must differ (both are {source})")
    return n, source, sink


def _as_capacity_array(name: str, array, shape: tuple[int, ...]):
    """Validate one capacity array and return it as int32 (NumPy or CuPy, as given)."""
    if is_cupy(array):
        xp = __import__("cupy")
    else:
        xp = np
        array = np.asarray(array)
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {array.shape}")
    if array.dtype.kind not in "iub":
        raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")
    if array.size:
        low, high = int(array.min()), int(array.max())
        if low < 0:
            raise ValueError(f"{name} has a negative capacity ({low}); capacities must be >= 0")
        if high > INT32_MAX:
            raise ValueError(
                f"{name} has a capacity of {high}, above the int32 limit {INT32_MAX}; "
                "rescale the weights")
    return xp.ascontiguousarray(array, dtype=xp.int32)


def _shape_of(array) -> tuple[int, ...]:
    shape = getattr(array, "shape", None)
    return tuple(np.shape(array) if shape is None else shape)


def _link_shape(shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """Shape of the n-link array along ``axis`` of a grid of ``shape``: one less on that axis."""
    return shape[:axis] + (shape[axis] - 1,) + shape[axis + 1:]


@dataclass(frozen=True, init=False)
class GridNetwork:
    """A flow network on a 2-D pixel grid (4-connected) or a 3-D voxel grid (6-connected),
    with a source s and a sink t.

    The grid has NumPy axis order: (H, W) = (Y, X) for images, (D, H, W) = (Z, Y, X) for
    volumes. Attributes (all int32, NumPy or CuPy):

        source: shape of the grid, capacity of s -> p.
        sink:   shape of the grid, capacity of p -> t.
        forward[a]:  capacity of p -> p + e_a, where e_a is one step along axis a; its shape is
                     the grid's with one less along axis a.
        backward[a]: capacity of p + e_a -> p, same shape.

    For 2-D grids the per-direction names of the first version remain:
    ``right = forward[1]`` ((y, x) -> (y, x+1), (H, W-1)), ``left = backward[1]``,
    ``down = forward[0]`` ((y, x) -> (y+1, x), (H-1, W)), ``up = backward[0]``; on a volume
    they name the same in-plane directions (the last two axes).

    Construct a 2-D grid as ``GridNetwork(source, sink, right, down, left=None, up=None)`` or,
    for any dimension, ``GridNetwork(source, sink, forward=(...), backward=None)`` with one
    array per axis. Missing reverse capacities default to the forward ones (symmetric
    n-links). The arrays are validated (shape, integer dtype, 0 .. 2**31 - 1) and converted to
    int32 once; they are not copied when already int32 and contiguous, and never modified.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut.solver import GridNetwork
    >>> network = GridNetwork(source=np.array([[9, 0], [0, 0]]),
    ...                       sink=np.array([[0, 0], [0, 9]]),
    ...                       right=np.array([[3], [1]]), down=np.array([[2, 2]]))
    >>> network.shape, network.num_vertices     # 4 pixels, s and t
    ((2, 2), 6)
    >>> network.left                            # the reverse arcs default to the forward ones
    array([[3],
           [1]], dtype=int32)

    A volume takes one n-link array per axis (here 2 x 1 x 1 voxels, one arc along z):

    >>> volume = GridNetwork(np.array([[[5]], [[0]]]), np.array([[[0]], [[4]]]),
    ...                      forward=(np.array([[[7]]]), np.zeros((2, 0, 1), int),
    ...                               np.zeros((2, 1, 0), int)))
    >>> volume.ndim, volume.to_csr().num_arcs
    (3, 4)
    """

    source: np.ndarray
    sink: np.ndarray
    forward: tuple
    backward: tuple

    def __init__(self, source, sink, right=None, down=None, left=None, up=None, *,
                 forward=None, backward=None):
        shape = _shape_of(source)
        if len(shape) not in (2, 3) or min(shape) < 1:
            raise ValueError("source must be a non-empty 2-D (H, W) or 3-D (D, H, W) array, "
                             f"got shape {shape}")
        ndim = len(shape)
        named = (right, down, left, up)
        if forward is None:
            if ndim != 2:
                raise TypeError(f"a {ndim}-D GridNetwork takes its n-links as forward=(...) "
                                "(one array per axis), not right/down/left/up")
            if right is None or down is None:
                raise TypeError("GridNetwork needs right and down (or forward=(down, right))")
            forward, backward = (down, right), (up, left)
        elif any(a is not None for a in named):
            raise TypeError("give the n-links either as right/down/left/up or as forward/"
                            "backward, not both")
        forward = tuple(forward)
        backward = (None,) * ndim if backward is None else tuple(backward)
        if len(forward) != ndim or len(backward) != ndim:
            raise ValueError(f"a {ndim}-D grid needs {ndim} forward and {ndim} backward n-link "
                             f"arrays (one per axis), got {len(forward)} and {len(backward)}")
        names = _DIRECTION_NAMES[ndim]
        fields = {"source": (source, shape), "sink": (sink, shape)}
        for axis in range(ndim):
            link_shape = _link_shape(shape, axis)
            fields[names[axis][0]] = (forward[axis], link_shape)
            reverse = forward[axis] if backward[axis] is None else backward[axis]
            fields[names[axis][1]] = (reverse, link_shape)
        kinds = {is_cupy(array) for array, _ in fields.values()}
        if len(kinds) > 1:
            raise TypeError("GridNetwork arrays must be all NumPy or all CuPy, not a mix")
        checked = {name: _as_capacity_array(name, array, expected)
                   for name, (array, expected) in fields.items()}
        object.__setattr__(self, "source", checked["source"])
        object.__setattr__(self, "sink", checked["sink"])
        object.__setattr__(self, "forward", tuple(checked[names[a][0]] for a in range(ndim)))
        object.__setattr__(self, "backward", tuple(checked[names[a][1]] for a in range(ndim)))

    @classmethod
    def from_checked(cls, source, sink, forward, backward=None) -> "GridNetwork":
        """A network of arrays already known to be valid (int32, C-contiguous, the shapes of
        one grid, capacities in 0 .. 2**31 - 1), made without the checks' passes over them.
        The GPU energy uses it for the capacities its kernels built and range-checked, so that
        no CuPy reduction runs (and has to be compiled) on the segmentation path."""
        network = object.__new__(cls)
        forward = tuple(forward)
        object.__setattr__(network, "source", source)
        object.__setattr__(network, "sink", sink)
        object.__setattr__(network, "forward", forward)
        object.__setattr__(network, "backward", forward if backward is None else tuple(backward))
        return network

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.source.shape)

    @property
    def ndim(self) -> int:
        """2 for an image grid, 3 for a volume."""
        return self.source.ndim

    @property
    def right(self):
        """Capacities of p -> p + one step along the last axis (x)."""
        return self.forward[-1]

    @property
    def left(self):
        return self.backward[-1]

    @property
    def down(self):
        """Capacities of p -> p + one step along the second-last axis (y)."""
        return self.forward[-2]

    @property
    def up(self):
        return self.backward[-2]

    @property
    def num_vertices(self) -> int:
        """Pixels (voxels) plus the two terminals."""
        return self.source.size + 2

    @property
    def on_gpu(self) -> bool:
        return is_cupy(self.source)

    def to_numpy(self) -> "GridNetwork":
        if not self.on_gpu:
            return self
        return GridNetwork(self.source.get(), self.sink.get(),
                           forward=[a.get() for a in self.forward],
                           backward=[a.get() for a in self.backward])

    def to_csr(self) -> "CSRNetwork":
        """The same network as a general CSRNetwork (pixel p is vertex ``ravel index of p``,
        e.g. y*W + x or (z*H + y)*W + x; s = the number of pixels, t = s + 1)."""
        grid = self.to_numpy()
        size = grid.source.size
        ids = np.arange(size, dtype=np.int64).reshape(grid.shape)
        s, t = size, size + 1
        tails = [np.full(size, s), ids.ravel()]
        heads = [ids.ravel(), np.full(size, t)]
        caps = [grid.source.ravel(), grid.sink.ravel()]
        for axis in range(grid.ndim):
            lower = ids[axis_slice(grid.ndim, axis, 0, -1)].ravel()
            upper = ids[axis_slice(grid.ndim, axis, 1, None)].ravel()
            tails += [lower, upper]
            heads += [upper, lower]
            caps += [grid.forward[axis].ravel(), grid.backward[axis].ravel()]
        return CSRNetwork.from_arcs(size + 2, s, t, np.concatenate(tails),
                                    np.concatenate(heads), np.concatenate(caps))


# Names used in validation messages, per axis: (forward, backward).
_DIRECTION_NAMES = {
    2: (("down", "up"), ("right", "left")),
    3: (("forward[0]", "backward[0]"), ("forward[1]", "backward[1]"),
        ("forward[2]", "backward[2]")),
}


def axis_slice(ndim: int, axis: int, start, stop) -> tuple:
    """An index selecting ``start:stop`` along ``axis`` and everything along the others."""
    index = [slice(None)] * ndim
    index[axis] = slice(start, stop)
    return tuple(index)


def _array_module(*arrays):
    """cupy if any array is a CuPy array (then all must be), else numpy."""
    kinds = {is_cupy(a) for a in arrays}
    if len(kinds) > 1:
        raise TypeError("CSRNetwork arrays must be all NumPy or all CuPy, not a mix")
    return array_module(*arrays)


def _check_integers(name: str, array, xp):
    if array.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got dtype {array.dtype}")
    return array.astype(xp.int64, copy=False)


def _first_bad(mask, xp) -> int | None:
    bad = xp.flatnonzero(mask)
    return int(bad[0]) if bad.size else None


def _check_arcs(n: int, tails, heads, capacities, xp) -> None:
    """Vertex ids in 0..n-1 and non-negative capacities, with the first offending arc named."""
    for name, a in (("tail", tails), ("head", heads)):
        bad = _first_bad((a < 0) | (a >= n), xp)
        if bad is not None:
            raise ValueError(f"arc {bad}: {name} vertex {int(a[bad])} is out of range 0..{n - 1}")
    bad = _first_bad(capacities < 0, xp)
    if bad is not None:
        raise ValueError(f"arc {bad} has a negative capacity ({int(capacities[bad])})")


def _merge_arcs(n: int, tails, heads, capacities, xp):
    """Canonical CSR arrays (offsets int64, heads int32, capacities int32) of a list of arcs:
    sorted by (tail, head), parallel arcs summed, self-loops and zero capacities dropped."""
    keep = (tails != heads) & (capacities > 0)
    tails, heads, capacities = tails[keep], heads[keep], capacities[keep]
    key = tails * n + heads
    order = xp.argsort(key)
    key, capacities = key[order], capacities[order]
    first = xp.ones(key.size, dtype=bool)
    first[1:] = key[1:] != key[:-1]
    starts = xp.flatnonzero(first)
    running = xp.cumsum(capacities)
    ends = xp.concatenate([starts[1:] - 1, xp.asarray([key.size - 1])]) if key.size else starts
    summed = running[ends] - running[starts] + capacities[starts]
    if summed.size and int(summed.max()) > INT32_MAX:
        where = int(xp.argmax(summed))
        u, v = divmod(int(key[starts[where]]), n)
        raise ValueError(f"arc {u} -> {v} has total capacity {int(summed[where])} after "
                         f"summing parallel arcs, above the int32 limit {INT32_MAX}")
    unique_key = key[starts]
    offsets = xp.zeros(n + 1, dtype=xp.int64)
    xp.cumsum(xp.bincount(unique_key // n, minlength=n), out=offsets[1:])
    return offsets, (unique_key % n).astype(xp.int32), summed.astype(xp.int32)


@dataclass(frozen=True)
class CSRNetwork:
    """A general directed flow network in compressed sparse row form.

    Vertices are 0 .. n-1; ``source`` and ``sink`` are two of them. Arcs are sorted by tail, then
    head; there is at most one arc per ordered pair (parallel arcs summed) and no self-loop.
    ``offsets`` has n + 1 entries: the arcs out of u are ``heads[offsets[u]:offsets[u+1]]`` with
    ``capacities`` alongside (int32, > 0).

    Every constructor goes through the same checks: built directly from CSR arrays (NumPy, or
    CuPy to stay on the GPU) the arrays are validated and, when they are not canonical (parallel
    arcs, self-loops, zero capacities, unsorted heads), canonicalised with the same rules as
    :meth:`from_arcs`, on the arrays' own device.

    Examples
    --------
    Four vertices, s = 0 and t = 3; the two parallel arcs 1 -> 3 are summed:

    >>> from graphcut.solver import CSRNetwork, min_cut
    >>> network = CSRNetwork.from_arcs(4, 0, 3, tails=[0, 0, 1, 2, 1, 1],
    ...                                heads=[1, 2, 3, 3, 2, 3],
    ...                                capacities=[3, 2, 1, 3, 1, 1])
    >>> network.num_arcs
    5
    >>> network.offsets, network.heads, network.capacities
    (array([0, 2, 4, 5, 5]...), array([1, 2, 2, 3, 3]...), array([3, 2, 1, 2, 3]...))
    >>> result = min_cut(network, device="cpu")
    >>> result.flow, result.source_side
    (5, array([ True,  True,  True, False]))
    """

    num_vertices: int
    source: int
    sink: int
    offsets: np.ndarray
    heads: np.ndarray
    capacities: np.ndarray

    def __post_init__(self):
        n, source, sink = _check_terminals(self.num_vertices, self.source, self.sink)
        xp = _array_module(self.offsets, self.heads, self.capacities)
        offsets = _check_integers("offsets", xp.asarray(self.offsets), xp)
        heads = _check_integers("heads", xp.asarray(self.heads), xp)
        capacities = _check_integers("capacities", xp.asarray(self.capacities), xp)
        if offsets.size != n + 1:
            raise ValueError(f"offsets must have n + 1 = {n + 1} entries, got {offsets.size}")
        if heads.size != capacities.size:
            raise ValueError(f"heads and capacities must have equal length, got {heads.size} "
                             f"and {capacities.size}")
        if int(offsets[0]) != 0 or int(offsets[-1]) != heads.size:
            raise ValueError(f"offsets must run from 0 to the number of arcs ({heads.size}), got "
                             f"{int(offsets[0])} .. {int(offsets[-1])}")
        bad = _first_bad(offsets[1:] < offsets[:-1], xp)
        if bad is not None:
            raise ValueError(f"offsets must not decrease (vertex {bad} ends before it starts)")
        tails = xp.searchsorted(offsets, xp.arange(heads.size), side="right") - 1
        _check_arcs(n, tails, heads, capacities, xp)
        key = tails * n + heads
        canonical = bool(((key[1:] > key[:-1]).all() if key.size > 1 else True)
                         and not (tails == heads).any() and not (capacities == 0).any()
                         and (int(capacities.max()) <= INT32_MAX if capacities.size else True))
        if canonical:
            offsets, heads, capacities = (offsets, heads.astype(xp.int32),
                                          capacities.astype(xp.int32))
        else:
            offsets, heads, capacities = _merge_arcs(n, tails, heads, capacities, xp)
        for name, value in (("num_vertices", n), ("source", source), ("sink", sink),
                            ("offsets", offsets), ("heads", heads), ("capacities", capacities)):
            object.__setattr__(self, name, value)

    @classmethod
    def from_arcs(cls, n, source, sink, tails, heads, capacities) -> "CSRNetwork":
        """Build a network from parallel arrays of arcs (tail -> head with a capacity).

        Parallel arcs are summed; self-loops and zero-capacity arcs are dropped; arcs into the
        source or out of the sink are kept (they cannot carry flow in a maximum flow). NumPy or
        CuPy arrays are accepted; the network is stored on the host.

        Raises
        ------
        HostMemoryError
            building it would need more memory than is available
            (:func:`check_network_size`).
        """
        for name, value in (("n", n), ("source", source), ("sink", sink)):
            try:
                whole = not isinstance(value, bool) and int(value) == value
            except (TypeError, ValueError, OverflowError):
                whole = False
            if not whole:
                raise ValueError(f"{name} must be an integer, got {value!r}")
        check_network_size(int(n), int(np.size(tails)))
        n, source, sink = _check_terminals(n, source, sink)
        tails, heads, capacities = (
            a.get() if is_cupy(a) else np.asarray(a) for a in (tails, heads, capacities))
        int64_max = np.iinfo(np.int64).max
        for name, array in (("tail", tails), ("head", heads), ("capacity", capacities)):
            # uint64 values above the int64 range would wrap around to negative numbers
            if array.dtype == np.uint64 and array.size and int(array.max()) > int64_max:
                bad = int(np.argmax(array > int64_max))
                value = int(array[bad])
                raise ValueError(f"arc {bad} has a capacity of {value}, above the int32 limit "
                                 f"{INT32_MAX}" if name == "capacity" else
                                 f"arc {bad}: {name} vertex {value} is out of range 0..{n - 1}")
        if not (tails.shape == heads.shape == capacities.shape) or tails.ndim != 1:
            raise ValueError("tails, heads and capacities must be 1-D arrays of equal length, got "
                             f"shapes {tails.shape}, {heads.shape}, {capacities.shape}")
        tails, heads, capacities = (_check_integers(name, a, np) for name, a in
                                    (("tails", tails), ("heads", heads),
                                     ("capacities", capacities)))
        _check_arcs(n, tails, heads, capacities, np)
        return cls(n, source, sink, *_merge_arcs(n, tails, heads, capacities, np))

    @property
    def num_arcs(self) -> int:
        return int(self.heads.size)

    def tails(self) -> np.ndarray:
        """The tail of every arc, expanded from the offsets (int32)."""
        return np.repeat(np.arange(self.num_vertices, dtype=np.int32), np.diff(self.offsets))

    def arcs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(tails, heads, capacities) as parallel arrays."""
        return self.tails(), self.heads, self.capacities
