"""A NumPy model of the grid kernels (solver/cuda/grid_kernels.cu) and a CuPy stand-in, so that
the GPU grid solver's host code (solver/cuda/grid.py, grid3d.py) runs on machines without a GPU.

`model_kernel(filename, name)` replaces `graphcut.solver.cuda.module.kernel`: it returns a
callable with the launch signature of the CUDA kernel of that name, `(grid, block, args)`, whose
arguments are unpacked exactly as the .cu file declares them and which checks that the launch
geometry matches the tiles of the .cu file (read from its #defines). Each model does what the
kernel does, at the granularity of whole tiles:

- push_relabel: for every flagged tile, `cycles` steps of Hong's push-or-relabel rule on every
  pixel of the tile, applied in two colour classes (x + y + z even, then odd): pixels of one
  class share no neighbour, so a vectorised class step equals some sequential order of the
  lock-free kernel's threads (one of its legal interleavings). Tile flags are cleared, set on
  pushes across a tile border and set again for tiles left with an active pixel, as in the
  kernel.
- bfs_tile: every dirty tile relaxes its heights to a fixed point within the tile, with the
  halo as it was when the pass started, then flags the neighbouring tiles across the faces
  where a border pixel changed.
- bfs_init, count_active: as in the kernel.

`fake_cupy()` builds a module object standing in for `cupy`: arrays are NumPy arrays of a
subclass with `.get()`, streams and events do nothing (elapsed times are zero), CUDA graph
capture records the launches (and the `fill` calls in between) and replays them.
`TRANSFERS` replaces solver/cuda/transfer.py's pinned-memory copies and grid_state.cu kernels
with plain NumPy ones (the model does not cover that file).
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from pathlib import Path

import numpy as np
from fake_cupy import rebind_parents

CU_FILE = Path(__file__).resolve().parent.parent / "solver" / "cuda" / "grid_kernels.cu"
MASK_FILE = "segmentation/mask_kernels.cu"
FLOOD_FILE = "segmentation/flood_kernels.cu"


def _defines() -> dict:
    """The kernels' compile-time constants (every build gets them with -D)."""
    from graphcut.solver.kernels import CONSTANTS
    return dict(CONSTANTS)


def tiles(ndim: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(push-relabel tile, BFS tile) extents, x first, as the kernels are compiled with them."""
    d = _defines()
    if ndim == 2:
        return ((d["PR_TILE_2D_X"], d["PR_TILE_2D_Y"]), (d["BFS_TILE_2D_X"], d["BFS_TILE_2D_Y"]))
    return ((d["PR_TILE_3D_X"], d["PR_TILE_3D_Y"], d["PR_TILE_3D_Z"]),
            (d["BFS_TILE_3D_X"], d["BFS_TILE_3D_Y"], d["BFS_TILE_3D_Z"]))


# ---- CuPy stand-in ------------------------------------------------------------------------------

class FakeArray(np.ndarray):
    """A NumPy array that answers ``.get()`` like a CuPy array; ``fill`` is recorded while a
    CUDA graph is being captured."""

    def get(self):
        return np.array(self)

    def fill(self, value):
        if _capture is not None:
            _capture.append(lambda: np.ndarray.fill(self, value))
        else:
            np.ndarray.fill(self, value)


_capture: list | None = None  # launches recorded by the stream capture in progress


def _wrap(array):
    return np.asarray(array).view(FakeArray)


class _Graph:
    def __init__(self, steps):
        self.steps = steps

    def launch(self):
        for step in self.steps:
            step()


class _Stream:
    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        pass

    def begin_capture(self):
        global _capture
        _capture = []

    def end_capture(self):
        global _capture
        steps, _capture = _capture, None
        return _Graph(steps)


class _Event:
    def record(self, stream=None):
        pass

    def synchronize(self):
        pass


class _Device:
    id = 0

    def __init__(self, *args):
        pass

    def synchronize(self):
        pass


class _Pool:
    def free_bytes(self):
        return 0


class OutOfMemoryError(MemoryError):
    pass


def fake_cupy(free_bytes: int = 8 * 2**30) -> types.ModuleType:
    """A module object with the parts of CuPy that the grid solver's host code uses."""
    cp = types.ModuleType("cupy")
    cp.__getattr__ = lambda name: getattr(np, name)  # dtypes, ufuncs, ...
    for name in ("zeros", "ones", "empty", "full", "arange"):
        setattr(cp, name, (lambda f: lambda *a, **k: _wrap(f(*a, **k)))(getattr(np, name)))
    cp.asarray = lambda a, dtype=None: _wrap(np.asarray(a, dtype=dtype))
    cp.ascontiguousarray = lambda a, dtype=None: _wrap(np.ascontiguousarray(a, dtype=dtype))
    cp.ndarray = FakeArray
    cp.get_default_memory_pool = _Pool
    cuda = types.ModuleType("cupy.cuda")
    cuda.Stream, cuda.Event, cuda.Device = _Stream, _Event, _Device
    cuda.get_current_stream = lambda: _Stream()
    cuda.get_elapsed_time = lambda a, b: 0.0
    cuda.runtime = types.SimpleNamespace(
        memGetInfo=lambda: (free_bytes, free_bytes),
        getDeviceCount=lambda: 1,
        getDeviceProperties=lambda i: {"name": b"NumPy model of the grid kernels"})
    cuda.memory = types.SimpleNamespace(OutOfMemoryError=OutOfMemoryError)
    cp.cuda = cuda
    return cp


# The library's kernel launchers, which import cupy when first imported (beside their kernels)
LAUNCHERS = ("graphcut.segmentation.energy_kernels", "graphcut.segmentation.masks",
             "graphcut.segmentation.flood")


@contextlib.contextmanager
def cuda_modules_on_model():
    """``graphcut.solver.cuda`` imported afresh against the CuPy stand-in, with
    :data:`TRANSFERS` in place of transfer.py's functions. Yields ``importlib.import_module``
    for its modules (patch their ``kernel`` with :func:`model_kernel`); afterwards the real
    modules (or their absence) are restored."""
    import graphcut.solver as solver_package

    def ours(name):
        return name == "cupy" or name.startswith("cupy.") or \
            name.startswith("graphcut.solver.cuda") or name in LAUNCHERS

    saved = {name: sys.modules.pop(name) for name in list(sys.modules) if ours(name)}
    had_cuda = "cuda" in vars(solver_package)
    old_cuda = vars(solver_package).get("cuda")
    install_fake_cupy(sys.modules)
    try:
        transfer = importlib.import_module("graphcut.solver.cuda.transfer")
        for name, function in TRANSFERS.items():
            setattr(transfer, name, function)   # before grid and grid3d import them
        yield importlib.import_module
    finally:
        for name in [name for name in sys.modules if ours(name)]:
            del sys.modules[name]
        sys.modules.update(saved)
        rebind_parents(LAUNCHERS)
        if had_cuda:
            solver_package.cuda = old_cuda
        elif "cuda" in vars(solver_package):
            del solver_package.cuda


def install_fake_cupy(modules: dict) -> None:
    """Put the stand-in into ``modules`` (``sys.modules``) as ``cupy`` and ``cupy.cuda``."""
    cp = fake_cupy()
    modules["cupy"] = cp
    modules["cupy.cuda"] = cp.cuda


# The host-side transfers of solver/cuda/transfer.py (pinned staging, and the grid_state.cu
# kernels that fold the terminals and read the flow and the cut out), done the plain way.
def upload_grid(state, network) -> None:
    state._load_nlinks()
    fold_terminals(state, _wrap(network.source), _wrap(network.sink), None)


def fold_terminals(state, source, sink, stream) -> None:
    from graphcut.solver.dynamic import fresh_terminals
    state._apply(fresh_terminals(source, sink))


def sum_nonnegative(values) -> int:
    return int(np.asarray(values).sum(dtype=np.int64))


def cut_side(height, inf: int):
    return _wrap(np.asarray(height) >= inf)


def to_host(array) -> np.ndarray:
    return np.array(array)


def load_residuals(state) -> None:
    right, left, down, up = state.nlinks
    state.residual[0, :, :-1] = np.asarray(right)
    state.residual[1, :, 1:] = np.asarray(left)
    state.residual[2, :-1, :] = np.asarray(down)
    state.residual[3, 1:, :] = np.asarray(up)


def reparameterize(state, source, sink) -> bool:
    from graphcut.solver.dynamic import reparameterize_terminals
    update = reparameterize_terminals(state.excess, np.asarray(state.to_sink, np.int64),
                                      state.source_capacity, state.sink_capacity, source, sink)
    if update is None:
        return False
    state._apply(update)
    return True


def change_nlinks(state, old_links, new_links, restart=False) -> tuple[int, int]:
    """grid_state.cu's change_nlinks through graphcut.solver.dynamic's functions (test_energy_
    kernels.py checks that the kernel equals them). On overflow the state is left as it was
    (the kernel leaves it half updated): either way the caller restarts it."""
    from graphcut.solver.dynamic import reparameterize_nlinks, restart_nlinks
    if restart:
        update = restart_nlinks(new_links, state.source_capacity, state.sink_capacity, 0,
                                state.residual.dtype)
    else:
        update = reparameterize_nlinks(state.residual, state.excess,
                                       np.asarray(state.to_sink, np.int64),
                                       state.source_capacity, state.sink_capacity, 0,
                                       old_links, new_links)
        if update is None:
            return 0, 1
    for name in ("residual", "excess", "to_sink", "source_capacity", "sink_capacity"):
        getattr(state, name)[...] = getattr(update, name)
    return update.reparameterization, 0


TRANSFERS = {"upload_grid": upload_grid, "fold_terminals": fold_terminals,
             "sum_nonnegative": sum_nonnegative, "cut_side": cut_side, "to_host": to_host,
             "prepare_staging": lambda: None, "load_residuals": load_residuals,
             "reparameterize": reparameterize, "change_nlinks": change_nlinks,
             "fill_int32": lambda array, value: array.fill(value)}


# ---- kernel models ------------------------------------------------------------------------------

def model_kernel(filename: str, name: str):
    """The model of kernel ``name`` of ``filename`` (grid_kernels.cu, and mask_kernels.cu's
    flood fill and counting kernels)."""
    if filename in (MASK_FILE, FLOOD_FILE):
        model = {"flood_init": _flood_init, "flood_result": _flood_result,
                 "count_true": _count_true, "label_init": _label_init,
                 "label_tile": _label_tile, "label_sizes": _label_sizes,
                 "set_small_parts": _set_small_parts}[name]
        ndim = None
    else:
        assert filename == CU_FILE.name, filename
        ndim = 3 if name.endswith("_3d") else 2
        base = name[:-3] if ndim == 3 else name
        model = {"push_relabel": _push_relabel, "bfs_init": _bfs_init, "bfs_tile": _bfs_tile,
                 "count_active": _count_active}[base]

    def launch(grid, block, args):
        def run():
            model(ndim, tuple(grid), tuple(block), list(args))
        if _capture is not None:
            _capture.append(run)
        else:
            run()
    return launch


class _Geometry:
    """A grid of `sizes` (x first) covered by tiles of `tile` (x first), checked against the
    launch's grid and block."""

    def __init__(self, ndim, sizes, tile, grid, block):
        self.ndim = ndim
        self.sizes = tuple(int(s) for s in sizes)
        self.shape = self.sizes[::-1]           # NumPy order (z, y, x)
        self.tile = tile
        self.tiles = tuple(-(-s // t) for s, t in zip(self.sizes, tile))
        assert tuple(block) == tuple(tile), f"block {block} differs from the .cu tile {tile}"
        assert tuple(grid) == self.tiles, f"grid {grid} does not cover {self.sizes} with {tile}"
        self.strides = [1]
        for s in self.sizes[:-1]:
            self.strides.append(self.strides[-1] * s)
        coords = np.indices(self.shape)[::-1]   # x first
        self.coords = [c.ravel() for c in coords]
        self.local = [c % t for c, t in zip(self.coords, tile)]
        tile_strides = [1]
        for t in self.tiles[:-1]:
            tile_strides.append(tile_strides[-1] * t)
        self.tile_strides = tile_strides
        self.tile_of = sum((c // t) * ts for c, t, ts in zip(self.coords, tile, tile_strides))
        self.n = int(np.prod(self.shape))

    def neighbour(self, k):
        """(index of the neighbour in direction k, whether it is inside, whether it lies in
        another tile) for every pixel."""
        axis, backward = k >> 1, k & 1
        step = -self.strides[axis] if backward else self.strides[axis]
        c = self.coords[axis]
        inside = c > 0 if backward else c + 1 < self.sizes[axis]
        crosses = (self.local[axis] == 0) if backward else (self.local[axis] == self.tile[axis] - 1)
        index = np.where(inside, np.arange(self.n) + step, 0)
        return index, inside, crosses


def _flat(array):
    return np.asarray(array).reshape(-1)


def _split(ndim, args):
    sizes, rest = args[:ndim], args[ndim:]
    return [int(s) for s in sizes], rest


def _push_relabel(ndim, grid, block, args):
    sizes, rest = _split(ndim, args)
    inf, cycles, block_sync = int(rest[0]), int(rest[1]), int(rest[2])
    excess, height, to_sink = (_flat(a) for a in rest[3:6])
    res = [_flat(a) for a in rest[6:6 + 2 * ndim]]
    (tile_flag,) = rest[6 + 2 * ndim:]
    assert len(rest) == 7 + 2 * ndim
    assert block_sync in (0, 1) and cycles >= 1
    geo = _Geometry(ndim, sizes, tiles(ndim)[0], grid, block)
    flags = _flat(tile_flag)
    running = flags[geo.tile_of] != 0          # pixels of flagged tiles
    flags[np.unique(geo.tile_of[running])] = 0
    colour = sum(geo.coords) % 2
    neighbours = [geo.neighbour(k) for k in range(2 * ndim)]
    for _ in range(cycles):
        for parity in (0, 1):
            _step(np.flatnonzero(running & (colour == parity)), inf, excess, height, to_sink,
                  res, neighbours, geo, flags)
    active = running & (excess > 0) & (height < inf)
    flags[np.unique(geo.tile_of[active])] = 1


def _step(u, inf, excess, height, to_sink, res, neighbours, geo, flags):
    """One push-or-relabel of every pixel in ``u`` (no two of which are neighbours)."""
    e = excess[u]
    h = height[u]
    u = u[(e > 0) & (h < inf)]
    if not u.size:
        return
    e, h = excess[u], height[u]
    r_sink = to_sink[u].astype(np.int64)
    best_h = np.where(r_sink > 0, 0, inf)
    best_dir = np.where(r_sink > 0, len(res), -1)
    best_res = np.where(r_sink > 0, r_sink, 0)
    for k, (index, inside, _) in enumerate(neighbours):
        r = res[k][u].astype(np.int64)
        assert not (r[~inside[u]] > 0).any(), "a residual leaves the grid"
        hv = height[index[u]]
        take = (r_sink <= 0) & (r > 0) & (hv < best_h)
        best_h = np.where(take, hv, best_h)
        best_dir = np.where(take, k, best_dir)
        best_res = np.where(take, r, best_res)
    stuck = (best_dir < 0) | (best_h >= inf - 1)
    height[u[stuck]] = inf
    relabel = ~stuck & (h <= best_h)
    height[u[relabel]] = best_h[relabel] + 1
    push = ~stuck & ~relabel
    d = np.minimum(e, best_res)
    to_t = push & (best_dir == len(res))
    to_sink[u[to_t]] -= d[to_t].astype(to_sink.dtype)
    for k, (index, _, crosses) in enumerate(neighbours):
        sel = push & (best_dir == k)
        if not sel.any():
            continue
        src, dk = u[sel], d[sel]
        dst = index[src]
        res[k][src] -= dk.astype(res[k].dtype)
        np.add.at(res[k ^ 1], dst, dk.astype(res[k].dtype))
        np.add.at(excess, dst, dk)
        flags[geo.tile_of[dst[crosses[src]]]] = 1
    excess[u[push]] -= d[push]


def _bfs_init(ndim, grid, block, args):
    n, inf = int(args[0]), int(args[1])
    to_sink = _flat(args[2])
    res = [_flat(a) for a in args[3:3 + 2 * ndim]]
    height, arcs = (_flat(a) for a in args[3 + 2 * ndim:])
    assert len(args) == 5 + 2 * ndim and n == height.size
    assert tuple(block) == (256,) and grid[0] * 256 >= n
    height[:] = np.where(to_sink > 0, 1, inf)
    bits = np.zeros(n, dtype=np.uint8)
    for k, r in enumerate(res):
        bits |= np.where(r > 0, 1 << k, 0).astype(np.uint8)
    arcs[:] = bits


def _bfs_tile(ndim, grid, block, args):
    sizes, rest = _split(ndim, args)
    arcs, height, dirty, next_dirty, any_dirty = (_flat(a) for a in rest[1:])
    assert len(rest) == 6
    geo = _Geometry(ndim, sizes, tiles(ndim)[1], grid, block)
    running = dirty[geo.tile_of] != 0
    if not running.any():
        return
    dirty[np.unique(geo.tile_of[running])] = 0
    start = height.copy()
    h = height.copy()
    neighbours = [geo.neighbour(k) for k in range(2 * ndim)]
    while True:
        best = h.copy()
        for k, (index, inside, crosses) in enumerate(neighbours):
            has_arc = running & ((arcs >> k) & 1).astype(bool) & inside
            value = np.where(crosses, start[index], h[index]) + 1
            best = np.where(has_arc, np.minimum(best, value), best)
        if not (best < h).any():
            break
        h = best
    changed = running & (h != start)
    height[:] = h
    for axis in range(ndim):
        c = geo.coords[axis]
        for low in (True, False):
            face = changed & ((geo.local[axis] == 0) if low else
                              (geo.local[axis] == geo.tile[axis] - 1))
            tile_c = c // geo.tile[axis]
            neighbour_exists = tile_c > 0 if low else tile_c + 1 < geo.tiles[axis]
            step = -geo.tile_strides[axis] if low else geo.tile_strides[axis]
            hit = np.unique(geo.tile_of[face & neighbour_exists])
            if hit.size:
                next_dirty[hit + step] = 1
                any_dirty[0] = 1


def _count_active(ndim, grid, block, args):
    sizes, rest = _split(ndim, args)
    inf = int(rest[0])
    excess, height, tile_flag, count = (_flat(a) for a in rest[1:])
    assert len(rest) == 5
    geo = _Geometry(ndim, sizes, tiles(ndim)[0], grid, block)
    active = (excess > 0) & (height < inf)
    per_tile = np.bincount(geo.tile_of, weights=active, minlength=tile_flag.size)
    tile_flag[:] = per_tile > 0
    count[0] += int(active.sum())


# ---- mask_kernels.cu: the clean-up's flood fills (grid-stride kernels, whole arrays at once) ----

def _flood_init(_, grid, block, args):
    h, w, inf, mask, invert, seeds, start_label, border_starts, arcs, height = args
    h, w, inf = int(h), int(w), int(inf)
    region = np.asarray(mask).reshape(h, w) != bool(int(invert))
    bits = np.zeros((h, w), dtype=np.uint8)
    bits[:, :-1] |= np.where(region[:, :-1] & region[:, 1:], 1, 0).astype(np.uint8)
    bits[:, 1:] |= np.where(region[:, 1:] & region[:, :-1], 2, 0).astype(np.uint8)
    bits[:-1, :] |= np.where(region[:-1, :] & region[1:, :], 4, 0).astype(np.uint8)
    bits[1:, :] |= np.where(region[1:, :] & region[:-1, :], 8, 0).astype(np.uint8)
    border = np.zeros((h, w), dtype=bool)
    border[0, :] = border[-1, :] = border[:, 0] = border[:, -1] = True
    start = region & ((np.asarray(seeds).reshape(h, w) == int(start_label))
                      | (bool(int(border_starts)) & border))
    _flat(arcs)[:] = bits.ravel()
    _flat(height)[:] = np.where(start, 1, inf).ravel()


def _flood_result(_, grid, block, args):
    n, inf, height, mask, invert, unreached, out, count = args
    region = _flat(mask) != bool(int(invert))
    reached = _flat(height) < int(inf)
    value = region & (reached != bool(int(unreached)))
    _flat(out)[:] = value
    _flat(count)[0] += int(value.sum())


def _count_true(_, grid, block, args):
    n, mask, count = args
    _flat(count)[0] += int(np.count_nonzero(_flat(mask)[:int(n)]))


LABEL_NONE = 2**31 - 1


def _label_init(_, grid, block, args):
    n, mask, label = args
    flat = _flat(mask)[:int(n)]
    _flat(label)[:] = np.where(flat, np.arange(int(n)), LABEL_NONE)


def _label_tile(_, grid, block, args):
    """A whole-image pass: every part gets its smallest index at once; when that changed a
    label, all tiles are flagged for one more pass (which then changes nothing)."""
    from scipy import ndimage
    h, w, label, dirty, next_dirty, any_dirty = args
    h, w = int(h), int(w)
    assert tuple(block) == (32, 32) and tuple(grid) == (-(-w // 32), -(-h // 32))
    labels = _flat(label)
    if not _flat(dirty).any():
        return
    _flat(dirty)[:] = 0
    member = (labels != LABEL_NONE).reshape(h, w)
    parts, count = ndimage.label(member, structure=ndimage.generate_binary_structure(2, 1))
    smallest = np.full(count + 1, LABEL_NONE, dtype=np.int64)
    np.minimum.at(smallest, parts.ravel(), np.where(member.ravel(), labels, LABEL_NONE))
    new = np.where(member.ravel(), smallest[parts.ravel()], LABEL_NONE)
    if (new != labels).any():
        labels[:] = new
        _flat(next_dirty)[:] = 1
        _flat(any_dirty)[0] = 1


def _label_sizes(_, grid, block, args):
    n, label, sizes = args
    labels = _flat(label)[:int(n)]
    np.add.at(_flat(sizes), labels[labels != LABEL_NONE], 1)


def _set_small_parts(_, grid, block, args):
    n, label, sizes, max_area, mask = args
    labels = _flat(label)[:int(n)]
    member = labels != LABEL_NONE
    small = np.zeros(labels.size, dtype=bool)
    small[member] = _flat(sizes)[labels[member]] < int(max_area)
    _flat(mask)[:int(n)] |= small
