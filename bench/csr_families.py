"""Network families for bench/bench_csr.py beyond solver/generators.py.

``camera_network`` and ``segmentation_volume``: segmentation networks (the camera sample
upscaled; a synthetic 3-D volume). Two families added for issue 27 ("two families not in the
table"):

- ``mesh_network(rows, cols)``: a Washington-style mesh. Vertices on a rows x cols grid; arcs
  (r, c) -> (r, c + 1) (forward, capacity in [1, max_capacity]) and (r, c) -> (r +- 1, c) (within
  a column, both directions, independent capacities in [1, max_capacity]); s -> every vertex of
  column 0 and every vertex of the last column -> t with capacity ``max_capacity * rows``. Like
  the DIMACS ``washington`` mesh graphs in shape (the flow crosses ``cols`` columns), generated
  here with NumPy, not by the DIMACS program.
- ``random_grid3d(side)``: a vision-style 3-D grid as a CSRNetwork: side^3 voxels, 6-connected,
  every neighbour arc in both directions with an independent capacity in [1, max_capacity], and
  per voxel an arc from s and one to t with capacities in [0, terminal] (each zero with
  probability 0.3). Unlike the smooth segmentation volume of bench_csr.py, the terminal
  capacities are noise, so the flow has to travel far and the cut is ragged.

The generators are deterministic for a seed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from graphcut.solver import CSRNetwork

SAMPLES = Path(__file__).resolve().parents[1] / "samples"


def camera_network(side: int) -> CSRNetwork:
    """The camera sample's segmentation network, image and seeds upscaled to side x side."""
    from skimage.transform import resize

    from graphcut.segmentation import build_network
    from graphcut.io import read_image
    from graphcut.io import read_seeds

    image = read_image(SAMPLES / "images" / "camera.png")
    seeds = read_seeds(SAMPLES / "seeds" / "camera.png", image.shape[:2])
    big = resize(image, (side, side), order=1, preserve_range=True,
                 anti_aliasing=False).astype(image.dtype)
    rows = np.arange(side) * seeds.shape[0] // side
    cols = np.arange(side) * seeds.shape[1] // side
    return build_network(big, seeds[np.ix_(rows, cols)]).to_csr()


def segmentation_volume(side: int, *, seed: int = 0) -> CSRNetwork:
    """A 3-D segmentation network: side^3 voxels (6-connected) plus s and t.

    The volume holds a few random Gaussian blobs (object) in Gaussian noise; terminal capacities
    are the Boykov-Jolly negative log-likelihoods of two intensity models (object 0.7,
    background 0.3, sigma 0.2) and each pair of neighbours gets 10 * exp(-(dI)^2 / (2 0.1^2))
    in both directions, all scaled by 100 and rounded.
    """
    rng = np.random.default_rng(seed)
    grid = np.indices((side,) * 3, dtype=np.float32) / side
    field = np.zeros((side,) * 3, dtype=np.float32)
    for _ in range(6):
        centre = rng.uniform(0.2, 0.8, 3).astype(np.float32)[:, None, None, None]
        radius = np.float32(rng.uniform(0.08, 0.2))
        field += np.exp(-((grid - centre) ** 2).sum(axis=0) / (2 * radius ** 2))
    del grid
    image = np.where(field > 0.5, 0.7, 0.3).astype(np.float32)
    image += rng.normal(0, 0.2, image.shape).astype(np.float32)
    n_vox = side ** 3
    s, t = n_vox, n_vox + 1
    ids = np.arange(n_vox, dtype=np.int64).reshape((side,) * 3)
    to_fg = (image - 0.7) ** 2 / (2 * 0.2 ** 2)  # cost of labelling a voxel object
    to_bg = (image - 0.3) ** 2 / (2 * 0.2 ** 2)
    tails = [np.full(n_vox, s), ids.ravel()]
    heads = [ids.ravel(), np.full(n_vox, t)]
    caps = [np.rint(100 * to_bg).ravel(), np.rint(100 * to_fg).ravel()]
    for axis in range(3):
        a = np.moveaxis(ids, axis, 0)
        i = np.moveaxis(image, axis, 0)
        w = np.rint(1000 * np.exp(-(i[1:] - i[:-1]) ** 2 / (2 * 0.1 ** 2))).ravel()
        tails += [a[:-1].ravel(), a[1:].ravel()]
        heads += [a[1:].ravel(), a[:-1].ravel()]
        caps += [w, w]
    return CSRNetwork.from_arcs(n_vox + 2, s, t, np.concatenate(tails), np.concatenate(heads),
                                np.concatenate(caps).astype(np.int64))


def mesh_network(rows: int, cols: int, *, max_capacity: int = 10_000,
                 seed: int = 0) -> CSRNetwork:
    """A rows x cols Washington-style mesh (see the module docstring); s = rows * cols,
    t = rows * cols + 1.

    Parameters
    ----------
    rows, cols : int
        Mesh height (vertices per column) and length (columns), both >= 1.
    max_capacity : int
        Largest inner arc capacity (the terminal arcs carry ``max_capacity * rows``, which must
        stay below 2**31).
    seed : int
        Random seed.

    Returns
    -------
    CSRNetwork
        rows * cols + 2 vertices.
    """
    if rows < 1 or cols < 1 or max_capacity * rows >= 2**31:
        raise ValueError(f"mesh {rows}x{cols} with capacity {max_capacity}: out of range")
    rng = np.random.default_rng(seed)
    ids = np.arange(rows * cols).reshape(rows, cols)
    s, t = rows * cols, rows * cols + 1
    tails = [ids[:, :-1].ravel(), ids[:-1, :].ravel(), ids[1:, :].ravel(),
             np.full(rows, s), ids[:, -1]]
    heads = [ids[:, 1:].ravel(), ids[1:, :].ravel(), ids[:-1, :].ravel(),
             ids[:, 0], np.full(rows, t)]
    inner = sum(a.size for a in tails[:3])
    caps = np.concatenate([rng.integers(1, max_capacity + 1, inner),
                           np.full(2 * rows, max_capacity * rows)])
    return CSRNetwork.from_arcs(rows * cols + 2, s, t, np.concatenate(tails),
                                np.concatenate(heads), caps)


def random_grid3d(side: int, *, max_capacity: int = 100, terminal: int = 300,
                  seed: int = 0) -> CSRNetwork:
    """A side^3 6-connected grid with random capacities (see the module docstring); voxel
    (z, y, x) is vertex (z * side + y) * side + x, s = side^3, t = side^3 + 1.

    Parameters
    ----------
    side : int
        Voxels per axis, >= 1.
    max_capacity : int
        Largest neighbour arc capacity.
    terminal : int
        Largest capacity of a terminal arc.
    seed : int
        Random seed.

    Returns
    -------
    CSRNetwork
        side^3 + 2 vertices.
    """
    if side < 1:
        raise ValueError(f"side must be >= 1, got {side}")
    rng = np.random.default_rng(seed)
    n = side ** 3
    ids = np.arange(n).reshape(side, side, side)
    s, t = n, n + 1
    tails, heads = [], []
    for axis in range(3):
        lo = [slice(None)] * 3
        hi = [slice(None)] * 3
        lo[axis], hi[axis] = slice(0, -1), slice(1, None)
        a, b = ids[tuple(lo)].ravel(), ids[tuple(hi)].ravel()
        tails += [a, b]
        heads += [b, a]
    voxels = ids.ravel()
    inner = sum(x.size for x in tails)

    def terminal_caps():
        caps = rng.integers(0, terminal + 1, n)
        caps[rng.random(n) < 0.3] = 0
        return caps

    tails += [np.full(n, s), voxels]
    heads += [voxels, np.full(n, t)]
    caps = np.concatenate([rng.integers(1, max_capacity + 1, inner), terminal_caps(),
                           terminal_caps()])
    return CSRNetwork.from_arcs(n + 2, s, t, np.concatenate(tails), np.concatenate(heads), caps)
