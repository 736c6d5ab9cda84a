"""``Segmenter``: one image, many seed edits, each answered by an incremental re-solve.

For interactive use: the image's n-links are built once; each :meth:`Segmenter.update` rebuilds
only the terminal capacities (colour models from the new seeds, hard constraints) and resumes
the max-flow from the previous one instead of starting over:

- on the GPU, the push-relabel state (residuals, excess, heights) stays in GPU memory; the new
  t-links are applied with the Kohli-Torr reparameterisation and phase I resumes from the
  previous preflow (``GridState.change_terminals``);
- on the CPU, PyMaxflow's graph is kept and its search trees are reused (``reuse_trees``),
  with the t-link changes added to the pixels whose capacities changed.

Either way the mask and the flow value equal those of a fresh :func:`graphcut.segment` with the
same seeds (the tests check this on long random edit sequences).
"""

from __future__ import annotations

import time

import numpy as np

from .energy import (DEFAULT_LAM, DEFAULT_SCALE, array_module, image_as_float, nlink_weights,
                     quantize, regional_costs, terminal_capacities)
from .seeds import check_seeds
from .solver import CutResult, resolve_device
from .solver.cpu import grid_bytes, grid_graph
from .solver.memory import require_host_memory


class Segmenter:
    """Segment one image again and again as its seeds change.

    Args:
        image: grey or colour image, or volume, as for :func:`graphcut.segment`. Not modified.
            A grey (D, H, W) volume needs ``channel_axis=None`` (a 3-D array is otherwise read
            as an (H, W, C) colour image).
        lam, sigma, bins, channel_axis, scale, spacing: energy options, as for
            :func:`graphcut.segment`; fixed for the session (make a new Segmenter to change
            them).
        device: "auto", "cpu" or "cuda"; the choice made is in :attr:`backend`.

    Example:
        >>> session = Segmenter(image, device="auto")          # doctest: +SKIP
        >>> mask = session.update(seeds)                       # doctest: +SKIP
        >>> seeds[10:20, 30:40] = 2; mask = session.update(seeds)  # doctest: +SKIP
    """

    def __init__(self, image, *, lam=DEFAULT_LAM, sigma=None, bins=None, channel_axis=-1,
                 scale=DEFAULT_SCALE, device="auto", spacing=None):
        self.backend = resolve_device(device)
        self.lam, self.sigma, self.bins, self.scale = lam, sigma, bins, scale
        if self.backend == "cuda":
            import cupy
            image = cupy.asarray(image) if array_module(image) is np else image
        self._values = image_as_float(image, channel_axis=channel_axis)
        what = "n-link capacities (lam * weights)"
        self._nlinks = tuple(quantize(lam * w, scale=scale, what=what)  # last axis first
                             for w in nlink_weights(self._values, sigma=sigma, spacing=spacing))
        self.shape = tuple(self._values.shape[:-1])
        self.last_result: CutResult | None = None
        self._state = None     # GridState on the GPU, or (graph, node ids, source, sink) on CPU

    @property
    def device_name(self) -> str:
        if self.backend == "cuda":
            from .solver.cuda.grid import device_name
            return device_name()
        return "CPU (PyMaxflow, Boykov-Kolmogorov)"

    def update(self, seeds) -> np.ndarray:
        """Segment with these seeds ((H, W) or (D, H, W) labels: 0 none, 1 object, 2
        background; at least one of each); returns the bool NumPy mask, True = object. Not
        modified."""
        started = time.perf_counter()
        xp = array_module(self._values)
        seeds = xp.asarray(seeds)
        if seeds.ndim != len(self.shape):
            raise ValueError(
                f"seeds have shape {tuple(seeds.shape)} but this Segmenter's image is "
                f"{'x'.join(map(str, self.shape))} ({len(self.shape)}-D); a grey volume needs "
                "Segmenter(volume, channel_axis=None)")
        seeds = check_seeds(seeds, self.shape)
        cost_object, cost_background = regional_costs(self._values, seeds, bins=self.bins)
        source, sink = terminal_capacities(cost_object, cost_background, self._nlinks, seeds,
                                           scale=self.scale)
        built = time.perf_counter()
        if self.backend == "cuda":
            flow, mask, counters = self._solve_cuda(source, sink)
        else:
            flow, mask, counters = self._solve_cpu(source, sink)
        done = time.perf_counter()
        stats = {"seconds": {"energy": built - started, "solve": done - built,
                             "total": done - started},
                 "device_name": self.device_name, "incremental": counters.pop("incremental"),
                 **counters}
        self.last_result = CutResult(flow, mask, self.backend, stats)
        return mask

    def _network(self, source, sink):
        from .solver import GridNetwork
        return GridNetwork(source, sink, forward=self._nlinks[::-1])

    def _solve_cuda(self, source, sink):
        from .solver.cuda.grid import GridState
        incremental = self._state is not None
        if incremental:
            self._state.change_terminals(source, sink)
        else:
            self._state = GridState.from_network(self._network(source, sink))
        counters = self._state.solve()
        mask = self._state.source_side().get()
        return self._state.true_flow(), mask, {"incremental": incremental, **counters}

    def _solve_cpu(self, source, sink):
        source, sink = np.asarray(source, dtype=np.int64), np.asarray(sink, dtype=np.int64)
        incremental = self._state is not None
        if incremental:
            graph, ids, old_source, old_sink = self._state
            changed = (source != old_source) | (sink != old_sink)
            if changed.any():
                graph.add_grid_tedges(ids[changed], (source - old_source)[changed],
                                      (sink - old_sink)[changed])
                graph.mark_grid_nodes(ids[changed])
        else:
            size = "x".join(str(n) for n in self.shape[::-1])
            require_host_memory(grid_bytes(self.shape), f"segmenting a {size} image on the "
                                "CPU (PyMaxflow's graph)")  # PyMaxflow exits 1 when out of memory
            graph = grid_graph(self._network(source, sink).to_numpy())
            ids = np.arange(int(np.prod(self.shape)), dtype=np.int64).reshape(self.shape)
            graph.add_grid_tedges(ids, source, sink)
        flow = int(graph.maxflow(reuse_trees=incremental))
        mask = ~graph.get_grid_segments(ids)
        self._state = (graph, ids, source, sink)
        return flow, mask, {"incremental": incremental}


__all__ = ["Segmenter"]
