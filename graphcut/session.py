"""``Segmenter``: one image, many seed edits, each answered by an incremental re-solve.

For interactive use. What depends only on the image is computed once: the n-link weights
(kept as floats, so that a new lam only rescales them), the histogram cell of every pixel,
the hard-constraint capacities and the solver's n-links. Each :meth:`Segmenter.update` then
costs little besides the max-flow itself:

- colour model: the seed histograms are updated from the pixels whose label changed
  (:class:`~graphcut.energy.SeedHistograms`), their costs become two small per-cell tables,
  and one lookup per pixel turns them into terminal capacities (one kernel on the GPU);
- solve: on the GPU the push-relabel state (residuals, excess, heights) stays in GPU memory,
  the new t-links are applied with the Kohli-Torr reparameterisation and phase I resumes from
  the previous preflow (``GridState.change_terminals``; a new lam likewise keeps the flow,
  ``GridState.change_nlinks``); on the CPU PyMaxflow's graph and its flow are kept, the t-link
  changes are added to the pixels whose capacities changed, and its search trees are reused
  when few changed (``reuse_trees``).

Either way the mask and the flow value equal those of a fresh :func:`graphcut.segment` with the
same seeds and options (the tests check this on long random edit sequences).

With the GMM colour model, GrabCut iterations, clean-up, a box or lasso, or seeds of several
objects (``Segmenter(image, model="gmm")``, ``update(seeds, box=...)``, ...), an update runs
:func:`graphcut.segment`'s pipeline (:func:`graphcut.segmentation._segment.segment_values`)
on the kept n-links, and every cut of its iterations is such an incremental re-solve.
"""

from __future__ import annotations

import math
import time

import numpy as np

from .energy import (DEFAULT_LAM, DEFAULT_SCALE, SeedHistograms, _check_positive, _nlink_weights,
                     array_module, capacities_from_tables, image_as_float, quantize_weights,
                     seed_pins, terminal_capacities)
from .seeds import BACKGROUND, FOREGROUND, check_seeds
from .segmentation._segment import (DEFAULT_LAMS, check_options, only_binary_labels, result_of,
                                    segment_values)
from .solver import CutResult, resolve_device
from .solver.cpu import grid_bytes
from .solver.memory import require_host_memory
from .solver.networks import axis_slice

CPU_DEVICE_NAME = "CPU (PyMaxflow, Boykov-Kolmogorov)"


class Segmenter:
    """Segment one image (or volume) again and again as its seeds change.

    Parameters
    ----------
    image
        grey or colour image, or volume, as for :func:`graphcut.segment`. Not modified.
        A grey (D, H, W) volume needs ``channel_axis=None`` (a 3-D array is otherwise read
        as an (H, W, C) colour image).
    lam
        smoothness weight; change it later with :meth:`set_lam` (the image's weights are
        kept; on the GPU the solver's flow too, on the CPU its graph restarts).
    sigma, bins, channel_axis, scale, spacing
        energy options, as for
        :func:`graphcut.segment`; fixed for the session.
    device
        "auto", "cpu" or "cuda"; the choice made is in :attr:`backend`.
    model
        the colour model: ``"histogram"`` (the default: the Boykov-Jolly histograms,
        updated incrementally), ``"gmm"`` (GrabCut's mixtures, through
        :func:`graphcut.segment`'s pipeline), or a pair ``(object_model,
        background_model)`` of objects with ``fit(values, mask)`` and ``costs(values)``
        (the interface of ``graphcut.models``), refitted on every update.
    components, iterations, keep, fill_holes, seed_share, locality, far_cost, texture
        as for :func:`graphcut.segment`; any of them other than its default (and model
        "gmm") sends every update through the pipeline. ``lam`` None: the model's default.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import Segmenter
    >>> image = np.zeros((6, 10), np.uint8)
    >>> image[1:5, 1:4] = 200                 # a bright square
    >>> image[1:5, 6:9] = 100                 # a grey one
    >>> seeds = np.zeros_like(image)
    >>> seeds[2, 2], seeds[0, 0] = 1, 2
    >>> session = Segmenter(image, device="cpu")
    >>> session.update(seeds).astype(int)
    array([[0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
           [0, 1, 1, 1, 0, 0, 0, 0, 0, 0],
           [0, 1, 1, 1, 0, 0, 0, 0, 0, 0],
           [0, 1, 1, 1, 0, 0, 0, 0, 0, 0],
           [0, 1, 1, 1, 0, 0, 0, 0, 0, 0],
           [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])

    One more object seed on the grey square; ``region`` says where the seeds changed, and the
    re-solve starts from the previous flow:

    >>> seeds[2, 7] = 1
    >>> session.update(seeds, region=np.s_[2:3, 7:8]).astype(int)
    array([[0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
           [0, 1, 1, 1, 0, 0, 1, 1, 1, 0],
           [0, 1, 1, 1, 0, 0, 1, 1, 1, 0],
           [0, 1, 1, 1, 0, 0, 1, 1, 1, 0],
           [0, 1, 1, 1, 0, 0, 1, 1, 1, 0],
           [0, 0, 0, 0, 0, 0, 0, 0, 0, 0]])

    The answer equals a fresh :func:`graphcut.segment`'s:

    >>> from graphcut import segment
    >>> _, fresh = segment(image, seeds, device="cpu", return_result=True)
    >>> session.last_result.flow == fresh.flow
    True

    On a GPU the solver's state stays in GPU memory between updates:

    >>> int(Segmenter(image, device="cuda").update(seeds).sum())  # doctest: +GPU
    24
    """

    def __init__(self, image, *, lam=None, sigma=None, bins=None, channel_axis=-1,
                 scale=DEFAULT_SCALE, device="auto", spacing=None, model="histogram",
                 components=None, iterations=None, keep="all", fill_holes=0, seed_share=None,
                 locality=None, far_cost=None, texture=None):
        self.backend = resolve_device(device)
        named = model if isinstance(model, str) else "histogram"
        self._options = check_options(model=named, lam=lam, sigma=sigma, bins=bins,
                                      components=components, iterations=iterations, keep=keep,
                                      fill_holes=fill_holes, seed_share=seed_share,
                                      locality=locality, far_cost=far_cost, texture=texture,
                                      channel_axis=channel_axis,
                                      scale=scale)
        # today's incremental histogram energy answers updates unless these ask for more
        self._plain = (named == "histogram" and not self._options["iterations"]
                       and keep == "all" and not self._options["fill_holes"]
                       and not self._options["seed_share"] and not self._options["locality"]
                       and not self._options["far_cost"] and not self._options["texture"])
        self._image, self._channel_axis, self._pipeline_values = image, channel_axis, None
        self._seeds_stale = False  # a pipeline update left the incremental seed state behind
        if lam is None:
            lam = DEFAULT_LAMS[named] if isinstance(model, str) else DEFAULT_LAM
        if self.backend == "cuda":
            import cupy
            image = cupy.asarray(image) if array_module(image) is np else image
        self.sigma, self.bins = sigma, bins
        self.scale = _check_positive("scale", scale)
        self._values = image_as_float(image, channel_axis=channel_axis)
        self.shape = tuple(self._values.shape[:-1])
        self._xp = array_module(self._values)
        self._weights = _nlink_weights(self._values, sigma, spacing)  # last axis first
        self._model = model
        if isinstance(model, str):
            self._histograms = SeedHistograms(self._values, bins=bins)
        else:
            self._histograms = None
            if len(model) != 2 or not all(hasattr(m, "fit") and hasattr(m, "costs")
                                          for m in model):
                raise TypeError("model must be 'histogram' or a pair (object_model, "
                                "background_model) with fit(values, mask) and costs(values)")
        if self._histograms is not None:
            self._values = None      # the bins and weights hold all the image's part now
        self._seeds = None           # host uint8 copy of the seeds last given to update()
        self._seeds_device = None    # the same on the GPU (cuda backend)
        self._solver = None          # _GridSolverCPU or _GridSolverGPU, made by prepare()
        self.last_result: CutResult | None = None
        self.lam = None
        self.set_lam(lam)

    @property
    def device_name(self) -> str:
        if self.backend == "cuda":
            from .solver import cuda_device_name as device_name
            return device_name()
        return CPU_DEVICE_NAME

    @property
    def device_seeds(self):
        """The seeds of the last :meth:`update` (uint8 (H, W)) on the solver's device: a CuPy
        array on the GPU (kept there between updates), else NumPy. Read-only by convention;
        None before the first update."""
        if self.backend == "cuda" and self._seeds_device is not None:
            return self._seeds_device
        return self._seeds

    def set_lam(self, lam) -> None:
        """Use another smoothness weight from the next :meth:`update` on. The image's weights,
        the colour model and the seeds are kept. On the GPU the solver keeps its flow too: the
        new n-link capacities are applied to the kept preflow with the Kohli-Torr
        reparameterisation (``GridState.change_nlinks``), and the next update resumes from it
        like a stroke does. On the CPU PyMaxflow's graph starts over (it cannot lower an arc's
        capacity while keeping its flow)."""
        lam = float(lam)
        if not (math.isfinite(lam) and lam >= 0.0):
            raise ValueError(f"lam must be a finite number >= 0, got {lam}")
        if lam == self.lam:
            return
        what = "n-link capacities (lam * weights)"
        nlinks = tuple(quantize_weights(w, lam, scale=self.scale, what=what)
                       for w in self._weights)
        self._pins = seed_pins(nlinks)
        self._nlinks, self.lam = nlinks, lam
        if self._solver is not None:
            self._solver.set_nlinks(nlinks)

    def prepare(self) -> float:
        """Build the solver's seed-independent part now (PyMaxflow's graph with its n-links, or
        the GPU state), so that the first :meth:`update` does not wait for it. Returns the
        seconds it took (0 when already built)."""
        if self._solver is not None:
            return 0.0
        started = time.perf_counter()
        solver_class = _GridSolverGPU if self.backend == "cuda" else _GridSolverCPU
        self._solver = solver_class(self.shape, self._nlinks)
        if self.backend == "cuda":  # compile the capacity kernel now, not at the first stroke
            one = self._xp.zeros((1, 1), dtype=self._xp.int32)
            capacities_from_tables(one, self._xp.zeros((1, 1), dtype=self._xp.uint8), one,
                                   one[0], one[0])
        return time.perf_counter() - started

    def update(self, seeds, *, region=None, cancel=None, device_mask=False, box=None,
               lasso=None):
        """Segment with these seeds; returns the bool mask, True = object (or, for seeds of
        several objects, the label image).

        Parameters
        ----------
        seeds
            (H, W) (or (D, H, W)) labels: 0 none, 1 object, 2 background; at least one
            of each. NumPy or CuPy; not modified.
        region
            optional tuple of slices, one per axis (``(rows, cols)`` for an image),
            that contains every pixel whose label changed since the last update (e.g. a
            stroke's bounding box); only that part is read and checked. ``None`` compares
            the whole array.
        cancel
            optional callable polled during a GPU solve (between launch batches);
            when it returns True the solve stops with
            :class:`~graphcut.solver.SolveCancelled`. The session stays usable: the next
            update continues from where the solve stopped. (PyMaxflow cannot be
            interrupted: on the CPU this is ignored.)
        device_mask
            return the mask on the solver's device (a CuPy array on the GPU).
        box, lasso
            as for :func:`graphcut.segment` (seeds may then be None).

        Returns
        -------
        numpy.ndarray
            The bool (H, W) mask, a NumPy array unless ``device_mask``.
        """
        started = time.perf_counter()
        if region is not None:
            region = _check_region(region, self.shape)
        if self._needs_pipeline(seeds, box, lasso):
            return self._update_pipeline(seeds, box, lasso, cancel, device_mask, started)
        if self._seeds_stale:
            region, self._seeds_stale = None, False  # compare the whole array once
        self._take_seeds(seeds, region)
        source, sink = self._terminal_capacities()
        if self.backend == "cuda":  # so that the energy's time is its own, not the solve's
            self._xp.cuda.get_current_stream().synchronize()
        built = time.perf_counter()
        self.prepare()
        built_solver = time.perf_counter()
        flow, mask, counters = self._solver.solve(source, sink, cancel)
        if not device_mask and self.backend == "cuda":
            mask = mask.get()
        done = time.perf_counter()
        stats = {"seconds": {"energy": built - started, "prepare": built_solver - built,
                             "solve": done - built_solver, "total": done - started},
                 "device_name": self.device_name, **counters}
        self.last_result = CutResult(flow, mask, self.backend, stats)
        return mask

    # -- the segmentation pipeline (colour models, iterations, boxes, several objects) -----

    def _needs_pipeline(self, seeds, box, lasso) -> bool:
        if not self._plain or box is not None or lasso is not None or seeds is None:
            return True
        return (getattr(seeds, "ndim", 0) == 2 and seeds.size > 0
                and getattr(seeds.dtype, "kind", "") in "iu" and not only_binary_labels(seeds))

    def _update_pipeline(self, seeds, box, lasso, cancel, device_mask, started):
        if not isinstance(self._model, str):
            raise ValueError("a box, lasso, iterations, clean-up or several objects need "
                             "model='histogram' or 'gmm', not a pair of model objects")
        if len(self.shape) != 2:
            raise ValueError("volumes are segmented with today's energy only: the histogram "
                             "model without iterations, box, lasso, clean-up or further objects")
        if self._pipeline_values is None:
            image = self._image
            if self.backend == "cuda" and array_module(image) is np:
                import cupy
                image = cupy.asarray(image)
            self._pipeline_values = image_as_float(image, channel_axis=self._channel_axis)
        values = self._pipeline_values
        if seeds is not None:
            seeds = self._xp.asarray(seeds)
        self.prepare()

        def cut(network):
            solved = time.perf_counter()
            flow, mask, counters = self._solver.solve(network.source, network.sink, cancel)
            return CutResult(flow, mask, self.backend,
                             {"seconds": {"total": time.perf_counter() - solved},
                              "device_name": self.device_name, **counters})

        options = {**self._options, "lam": self.lam, "box": box, "lasso": lasso}
        output, run = segment_values(values, self._nlinks, seeds, options,
                                     device=self.backend, cut=cut)
        self._seeds_stale = True
        self.last_result = result_of(run, np.asarray(output) != 0, options, started)
        if device_mask and self.backend == "cuda":
            return self._xp.asarray(output)
        return output

    # -- seeds and capacities ---------------------------------------------------------------

    def _take_seeds(self, seeds, region) -> None:
        """Copy the new seeds (or their ``region``) and count the edit in the colour model."""
        on_gpu = array_module(seeds) is not np
        if not on_gpu:
            seeds = np.asarray(seeds)
        if seeds.ndim != len(self.shape):
            raise ValueError(
                f"seeds have shape {tuple(seeds.shape)} but this Segmenter's image is "
                f"{'x'.join(map(str, self.shape))} ({len(self.shape)}-D); a grey volume needs "
                "Segmenter(volume, channel_axis=None)")
        if region is None or self._seeds is None:
            after = check_seeds(seeds.get() if on_gpu else np.asarray(seeds), self.shape,
                                require_both=False)
            region = tuple(slice(0, n) for n in self.shape)
            if self._seeds is None:
                self._seeds = np.zeros(self.shape, np.uint8)
        else:
            region = _check_region(region, self.shape)
            after = seeds[region]
            after = check_seeds(after.get() if on_gpu else np.asarray(after),
                                name="seeds in the edited region", require_both=False)
        before = self._seeds[region]
        if self._histograms is not None:
            self._histograms.edit(region, before, after)
        self._seeds[region] = after
        if self.backend == "cuda":
            import cupy
            from .segmentation.energy_kernels import upload_region
            if self._seeds_device is None:
                self._seeds_device = cupy.asarray(self._seeds)
            else:  # copies only: no CuPy kernel to compile
                upload_region(self._seeds_device, self._seeds, region)
        object_seeds, background_seeds = self._seed_counts()
        if not object_seeds:
            raise ValueError("seeds contain no foreground seed (label 1 / red stroke); mark at "
                             "least one pixel of the object")
        if not background_seeds:
            raise ValueError("seeds contain no background seed (label 2 / blue stroke); mark "
                             "at least one background pixel")

    def _seed_counts(self) -> tuple[int, int]:
        if self._histograms is not None:
            return self._histograms.seed_counts
        return (int(np.count_nonzero(self._seeds == FOREGROUND)),
                int(np.count_nonzero(self._seeds == BACKGROUND)))

    def _terminal_capacities(self):
        seeds = self._seeds_device if self.backend == "cuda" else self._seeds
        if self._histograms is None:
            object_model, background_model = self._model
            values = self._values
            cost_object = object_model.fit(values, seeds == FOREGROUND).costs(values)
            cost_background = background_model.fit(values, seeds == BACKGROUND).costs(values)
            return terminal_capacities(cost_object, cost_background, self._nlinks, seeds,
                                       scale=self.scale)
        source_table, sink_table = self._histograms.capacity_tables(self.scale)
        if self.backend == "cuda":
            import cupy
            source_table, sink_table = cupy.asarray(source_table), cupy.asarray(sink_table)
        return capacities_from_tables(self._histograms.index, seeds, self._pins, source_table,
                                      sink_table)


def _check_region(region, shape):
    """``region`` as a tuple of slices (one per axis) with steps of 1, clipped to ``shape``."""
    try:
        region = tuple(region)
        if len(region) != len(shape):
            raise ValueError
        bounds = [s.indices(n) for s, n in zip(region, shape)]
    except (TypeError, ValueError, AttributeError):
        raise TypeError(f"region must be a tuple of {len(shape)} slices, one per axis "
                        f"((rows, cols) for an image), got {region!r}") from None
    if any(step != 1 for _, _, step in bounds):
        raise ValueError(f"region slices must have step 1, got {region!r}")
    return tuple(slice(start, max(start, stop)) for start, stop, _ in bounds)


class _GridSolverCPU:
    """PyMaxflow's graph of the grid, kept between solves; t-link changes are added as deltas
    and the search trees reused."""

    def __init__(self, shape, nlinks):
        self.shape = shape
        self.set_nlinks(nlinks)

    def set_nlinks(self, nlinks) -> None:
        """Load these n-link capacities (one array per axis, last axis first); the flow, the
        t-links and the search trees start over.

        The first call allocates PyMaxflow's graph; later calls (a new lam) empty it with
        ``reset()`` and fill the same memory again, which takes about a third of the time of
        a new graph (4 MP: 0.17 s instead of 0.55 s; no fresh pages to fault in) and never
        holds two graphs at once."""
        import maxflow
        shape, ndim = self.shape, len(self.shape)
        graph = getattr(self, "graph", None)
        if graph is not None:
            graph.reset()  # keeps the node and arc arrays, drops nodes, arcs and flow
        else:
            size = "x".join(str(n) for n in shape[::-1])
            require_host_memory(grid_bytes(shape), f"segmenting a {size} image on the CPU "
                                "(PyMaxflow's graph)")  # PyMaxflow exits 1 when out of memory
            pixels = int(np.prod(shape))
            graph = maxflow.Graph[int](pixels, sum(pixels // n * (n - 1) for n in shape))
        self.graph = None  # unusable until filled again
        ids = graph.add_grid_nodes(shape)
        # per-node weights towards the next node along one axis (zero on the last slice:
        # PyMaxflow skips edges that leave the grid); one C loop per axis
        weights = np.zeros(shape, dtype=np.int32)
        for axis, link in zip(reversed(range(ndim)), nlinks):
            if shape[axis] > 1:
                weights[axis_slice(ndim, axis, -1, None)] = 0
                weights[axis_slice(ndim, axis, 0, -1)] = np.asarray(link)
                structure = np.zeros((3,) * ndim, dtype=np.int32)
                structure[tuple(2 if a == axis else 1 for a in range(ndim))] = 1
                graph.add_grid_edges(ids, weights=weights, structure=structure, symmetric=True)
        self.graph, self.ids = graph, ids.ravel()
        self.terminals = None  # (source, sink) int32 in force; None = not yet added

    # Reuse the search trees only when at most this share of the t-links changed: after a
    # colour-model change (most strokes) most do, and rebuilding the trees from the kept flow
    # measured 5-40 % faster than repairing them (4 MP, PyMaxflow 1.3).
    REUSE_TREES_AT_MOST = 0.1

    def solve(self, source, sink, cancel):
        started = time.perf_counter()
        incremental = self.terminals is not None
        reuse_trees = False
        if not incremental:
            self.graph.add_grid_tedges(self.ids, source.ravel(), sink.ravel())
            changed = source.size
        else:
            old_source, old_sink = self.terminals
            # both in [0, 2**31 - 1]: their difference fits in int32
            d_source = np.subtract(source, old_source).ravel()
            d_sink = np.subtract(sink, old_sink).ravel()
            where = np.flatnonzero((d_source != 0) | (d_sink != 0))
            changed = len(where)
            reuse_trees = changed <= self.REUSE_TREES_AT_MOST * source.size
            if changed:
                nodes = self.ids[where]
                self.graph.add_grid_tedges(nodes, d_source[where], d_sink[where])
                if reuse_trees:
                    self.graph.mark_grid_nodes(nodes)
        self.terminals = (source, sink)
        tlinks = time.perf_counter()
        flow = int(self.graph.maxflow(reuse_trees=reuse_trees))
        solved = time.perf_counter()
        mask = ~self.graph.get_grid_segments(self.ids).reshape(self.shape)
        return flow, mask, {"incremental": incremental, "changed_terminals": changed,
                            "reused_trees": reuse_trees, "tlinks_seconds": tlinks - started,
                            "maxflow_seconds": solved - tlinks,
                            "cut_seconds": time.perf_counter() - solved}


def _interactive_schedule():
    from .solver.cuda.grid import Schedule
    return Schedule(cycles=4, launches_per_relabel=16, bfs_passes_per_check=2)


class _GridSolverGPU:
    """The push-relabel state on the GPU (``GridState``), kept between solves."""

    def __init__(self, shape, nlinks):
        import cupy

        from .solver import GridNetwork
        from .solver.cuda.grid import GridState
        self.shape = shape
        zero = cupy.zeros(shape, dtype=cupy.int32)
        self.state = GridState.from_network(GridNetwork.from_checked(zero, zero, nlinks[::-1]))
        self.solved = False  # False: terminals not yet set since the n-links were loaded
        self.nlink_change = None  # how the last set_nlinks went, reported by the next solve

    def set_nlinks(self, nlinks) -> None:
        """New n-link capacities (a new lam). Once terminals are set, the flow is kept as far
        as the new capacities allow (``GridState.change_nlinks``, one kernel); the state
        restarts from zero n-link flow only where a residual would leave int32."""
        if self.solved:
            kept = self.state.change_nlinks(nlinks[::-1])
            self.nlink_change = "kept" if kept else "restarted"
            return
        import cupy

        from .solver import GridNetwork
        zero = cupy.zeros(self.shape, dtype=cupy.int32)
        self.state.load(GridNetwork.from_checked(zero, zero, nlinks[::-1]))

    def solve(self, source, sink, cancel):
        incremental = self.solved
        if incremental:
            self.state.change_terminals(source, sink)
        else:
            self.state.set_terminals(source, sink)
            self.solved = True
        nlink_change, self.nlink_change = self.nlink_change, None
        # 4 push/relabel cycles per launch and a BFS flag check every 2 passes: the fastest of
        # 24 schedules for interactive re-solves at 4 MP on an H100 (bench/bench_schedule.py,
        # bench/RESULTS.md), also from scratch there; every schedule gives the same answer
        counters = self.state.solve(_interactive_schedule(), cancel=cancel)
        mask = self.state.source_side()
        return self.state.true_flow(), mask, {"incremental": incremental,
                                              "nlink_change": nlink_change, **counters}


__all__ = ["Segmenter"]
