"""``Segmenter``: one image, many seed edits, each answered by an incremental re-solve.

For interactive use. What depends only on the image is computed once: the n-link weights (kept
as floats: a new lam only rescales them; again for each new box of the learned model,
:mod:`._box_contrast`), the model's features or the histogram cell of every pixel, the
hard-constraint capacities and the solver's n-links. Each update then costs:

- appearance: every update refits the model on the seeds (and the box's inside / outside),
  computes every label's costs and turns them into t-links (:mod:`._pipeline`); for the
  histogram model with one cut the seed histograms are kept up to date from the pixels whose
  label changed (:class:`~graphcut.segmentation.SeedHistograms`): two small per-cell cost
  tables and one lookup per pixel (one kernel on the GPU);
- solve: the t-links go to the solver's incremental interface (:class:`._solving.GridCuts` over
  :func:`graphcut.solver.open_grid_solver`), which keeps its flow (GPU: the preflow, Kohli-Torr;
  CPU: PyMaxflow's graph and search trees), through a new lam too where the backend can.

:func:`graphcut.segment` is one update of a new Segmenter: every update's mask and flow equal a
fresh one's with the same seeds, options and ``previous`` (a model's ``hold``, :mod:`._hold`),
for every model, box, lasso, iterations, clean-up and several objects (unless
:attr:`Segmenter.warm_objects` or ``warm_strokes``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from graphcut._arrays import array_module, energy_kernels, image_as_float, to_host
from graphcut._labels import BACKGROUND, FOREGROUND
from graphcut.io import check_seeds
from graphcut.solver import CutResult, resolve_device
from graphcut.solver.incremental import check_region

from ._boundary import check_positive
from ._box_contrast import BoxContrast
from ._capacities import quantize_weights, seed_pins
from ._coarse import CoarseStart
from ._device_seeds import DeviceSeeds
from ._options import resolve_options
from ._neighbours import cut_eight, diagonal_capacities, eight_connected_sigma
from ._pipeline import result_of, segment_values
from ._routes import only_binary_labels, tabled
from ._seed_histograms import SeedHistograms, capacities_from_tables
from ._smoothness import keep_heavier
from ._solving import GridCuts

CPU_DEVICE_NAME = "CPU (PyMaxflow, Boykov-Kolmogorov)"


class Segmenter(BoxContrast):
    """Segment one image (or volume) again and again as its seeds change.

    Parameters
    ----------
    image
        grey or colour image, or volume, as for :func:`graphcut.segment`. Not modified.
        A grey (D, H, W) volume needs ``channel_axis=None`` (a 3-D array is otherwise read
        as an (H, W, C) colour image).
    model
        the appearance model, as for :func:`graphcut.segment`: a model object such as
        ``graphcut.models.GMM(components=5)``, a name (``"auto"``, the default: the model
        measured best for the image, chosen by its pixels, :class:`graphcut.models.Auto`;
        ``"histogram"``, ``"gmm"``, ``"learned"``), a settings dict, or a
        pair ``(object_model, background_model)`` of objects with ``fit(values, mask)`` and
        ``costs(values)``; refitted on every update (the caller's object is never changed).
    lam
        smoothness weight; ``None``: the model's (the histogram's box / lasso updates then
        choose 10 or 20, see :mod:`graphcut.segmentation._smoothness`). Change it later
        with :meth:`set_lam` (the image's weights are kept; on the GPU the solver's flow
        too, on the CPU its graph restarts).
    keep, fill_holes, channel_axis
        as for :func:`graphcut.segment`.
    device
        "auto", "cpu" or "cuda"; the choice made is in :attr:`backend`.
    **options
        as for :func:`graphcut.segment`: the energy's ``sigma``, ``spacing``, ``scale``,
        ``tol``, and the model's knobs as keyword arguments (``bins``, ``components``,
        ``iterations``, ...); fixed for the session.

    Examples
    --------
    >>> import numpy as np
    >>> from graphcut import Segmenter
    >>> image = np.zeros((6, 10), np.uint8)
    >>> image[1:5, 1:4] = 200                 # a bright square
    >>> image[1:5, 6:9] = 100                 # a grey one
    >>> seeds = np.zeros_like(image)
    >>> seeds[2, 2], seeds[0, 0] = 1, 2
    >>> session = Segmenter(image, model="histogram", device="cpu")
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
    >>> _, fresh = segment(image, seeds, model="histogram", device="cpu", return_result=True)
    >>> session.last_result.flow == fresh.flow
    True

    Any model re-solves incrementally, e.g. GrabCut's mixtures:

    >>> from graphcut.models import GMM
    >>> gmm = Segmenter(image, model=GMM(components=2), device="cpu")
    >>> int(gmm.update(seeds).sum())
    24

    On a GPU the solver's state stays in GPU memory between updates:

    >>> int(Segmenter(image, model="histogram", device="cuda").update(seeds).sum())  # doctest: +GPU
    24
    """

    #: several objects: start each update's expansion from the last labels (fewer moves; a
    #: local minimum that may differ from a fresh segment's). Off: exact.
    warm_objects = False
    #: a live model's strokes alone: start each update's coarse iterations from the last
    #: update's (:class:`~._coarse.CoarseStart`; may differ from a fresh segment's). Off: exact.
    warm_strokes = False

    def __init__(self, image, *, model=None, lam=None, keep="all", fill_holes=0,
                 channel_axis=-1, device="auto", **options):
        self.backend = resolve_device(device)
        self._image, self._channel_axis, self._features = image, channel_axis, None
        self._seeds_stale = False  # a pipeline update left the incremental seed state behind
        if self.backend == "cuda":
            import cupy
            image = cupy.asarray(image) if array_module(image) is np else image
        self._values = image_as_float(image, channel_axis=channel_axis)
        o = resolve_options(model, lam=lam, keep=keep, fill_holes=fill_holes,
                            channel_axis=channel_axis, image=self._values, **options)
        self._options = o
        #: the appearance model object (fitted on every update; the caller's is never changed)
        self.model, self._tabled = o["appearance"], tabled(o)
        self.sigma, self.bins = o["sigma"], getattr(self.model, "bins", None)
        self.scale = check_positive("scale", o["scale"])
        self.shape = tuple(self._values.shape[:-1])
        self._xp = array_module(self._values)
        self._on_gpu = self._xp is not np  # the image's arrays live on the GPU
        # connectivity 8: the diagonal pairs' (down-right, down-left) weights and capacities
        self._diagonal_weights = self._diagonals = None
        if o["connectivity"] == 8:
            self.sigma = eight_connected_sigma(to_host(self._values), o)
        self._contrast_weights(self.sigma)  # the float n-link weights (:mod:`._box_contrast`)
        self._histograms = SeedHistograms(self._values, bins=self.bins) if self._tabled else None
        if self._tabled:
            self._values = None      # the bins and weights hold all the image's part now
        self._seeds = None           # host uint8 copy of the seeds last given to update()
        self._seeds_device = None    # the same on the GPU (cuda backend)
        self._pipeline_seeds = DeviceSeeds(self.shape)  # the pipeline's, on the GPU
        self._last_seeds = None      # the seeds of the last update, on the solver's device
        self._solver = None          # GridCuts (the incremental solver), made by prepare()
        self._coarse_start = CoarseStart()  # warm_strokes: the last coarse loop's end
        self.last_result: CutResult | None = None
        self.lam = None
        self._set_lam(o["lam"])
        self._auto_lam = o["auto_lam"]  # the collapse guard's weights (box / lasso), or None

    def _one_shot(self, region=False) -> None:
        """Free what only a later :meth:`set_lam` needs (:func:`graphcut.segment` makes one
        update): the n-link weights (16 bytes a pixel; on the table route also the seed
        histograms, pins and n-link capacities once used), so the peak is about a fresh
        solve's; with a box or lasso (``region``) and the automatic lam the weights stay (the
        guard cuts at two)."""
        if not (region and self._auto_lam):
            self._weights = None

    @property
    def device_name(self) -> str:
        if self.backend == "cuda":
            from graphcut.solver import cuda_device_name
            return cuda_device_name()
        return CPU_DEVICE_NAME

    @property
    def device_seeds(self):
        """The seeds of the last :meth:`update` ((H, W) labels) on the solver's device: a CuPy
        array on the GPU (kept there between updates), else NumPy. Read-only by convention,
        valid until the next update; None before the first update (and after one with a box
        or lasso alone)."""
        return self._last_seeds

    def set_lam(self, lam) -> None:
        """Use another smoothness weight from the next :meth:`update` on. The image's weights,
        the colour model and the seeds are kept. On the GPU the solver keeps its flow too: the
        new n-link capacities are applied to the kept preflow with the Kohli-Torr
        reparameterisation (``GridState.change_nlinks``), and the next update resumes from it
        like a stroke does. On the CPU PyMaxflow's graph starts over (it cannot lower an arc's
        capacity while keeping its flow). A lam set here turns the automatic choice off."""
        self._auto_lam = None
        self._set_lam(lam)

    def _set_lam(self, lam, keep=False) -> None:  # keep: the guard's, see GridCuts.set_nlinks
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
        self._diagonals = None  # re-quantised at the next 8-connected cut
        if self._solver is not None:
            self._solver.set_nlinks(nlinks, key=lam if keep else None)

    def prepare(self) -> float:
        """Build the solver's seed-independent part now (PyMaxflow's graph with its n-links, or
        the GPU state) and the appearance model's per-image features (the learned model's
        filter bank; the GMM's texture channel), so that the first :meth:`update` does not
        wait for them. Returns the seconds it took (0 when already built)."""
        if self._solver is not None:
            return 0.0
        started = time.perf_counter()
        self._solver = GridCuts(self.shape, self._nlinks, self.backend)
        self._solver.open()
        if self._on_gpu:  # compile the capacity kernel now, not at the first stroke
            one = self._xp.zeros((1, 1), dtype=self._xp.int32)
            capacities_from_tables(one, self._xp.zeros((1, 1), dtype=self._xp.uint8), one,
                                   one[0], one[0])
        if not self._tabled:
            self._image_features()  # the model's features now, not at the first box or stroke
        return time.perf_counter() - started

    def update(self, seeds, *, region=None, cancel=None, device_mask=False, box=None,
               lasso=None, previous=None):
        """Segment with these seeds; returns the bool mask, True = object (or, for seeds of
        several objects, the label image).

        Parameters
        ----------
        seeds
            (H, W) (or (D, H, W)) labels: 0 none, 1 object, 2 background; at least one
            of each. NumPy or CuPy; not modified.
        region
            optional tuple of slices, one per axis (``(rows, cols)`` for an image), that
            contains every pixel whose label changed since the last update (e.g. a stroke's
            bounding box); only that part is read and checked. ``None``: the whole array.
        cancel
            optional callable polled during a GPU solve (between launch batches); when it
            returns True the solve stops with :class:`~graphcut.solver.SolveCancelled`. The
            session stays usable: the next update continues from where the solve stopped.
            (PyMaxflow cannot be interrupted: on the CPU this is ignored.)
        device_mask
            return the mask on the solver's device (a CuPy array on the GPU).
        box, lasso
            as for :func:`graphcut.segment` (seeds may then be None).
        previous
            ``(seeds, mask)`` of the update before, for ``Learned(hold=...)`` (:mod:`._hold`);
            with several objects ``(seeds, labels)``: the expansion starts from its labels.

        Returns
        -------
        numpy.ndarray
            The bool (H, W) mask, a NumPy array unless ``device_mask``.
        """
        started = time.perf_counter()
        if region is not None:
            region = check_region(region, self.shape)
        if self._needs_pipeline(seeds, box, lasso):
            return self._update_pipeline(seeds, box, lasso, cancel, device_mask, started,
                                         region, previous)
        self._pipeline_seeds.reset()  # the pipeline's copy no longer follows the edits
        if self._seeds_stale:
            region, self._seeds_stale = None, False  # compare the whole array once
        self._take_seeds(seeds, region)
        source, sink = self._terminal_capacities()
        if self._weights is None:  # one shot: free what only later updates need, pre-graph
            self._pins = self._histograms = self._seeds = self._last_seeds = None
        if self._on_gpu:  # so that the energy's time is its own, not the solve's
            self._xp.cuda.get_current_stream().synchronize()
        built = time.perf_counter()
        self.prepare()
        if self._weights is None:  # one shot: the solver has the n-links
            self._nlinks = self._solver._nlinks = None
        built_solver = time.perf_counter()
        solved = self._solver.solve(source, sink, cancel=cancel)
        mask = solved.source_side
        mask = mask if device_mask else to_host(mask)
        done = time.perf_counter()
        stats = {**solved.stats,
                 "seconds": {"energy": built - started, "prepare": built_solver - built,
                             "solve": done - built_solver, "total": done - started}}
        self.last_result = CutResult(solved.flow, mask, self.backend, stats)
        return mask

    # -- the segmentation pipeline (colour models, iterations, boxes, several objects) -----

    def _image_features(self):
        """The appearance model's per-pixel features of the image, computed once per image."""
        if self._features is None:
            values = self._values
            if values is None:
                image = self._image
                if self.backend == "cuda" and array_module(image) is np:
                    import cupy
                    image = cupy.asarray(image)
                values = image_as_float(image, channel_axis=self._channel_axis)
            self._features = self.model.features(values)
        return self._features

    def _needs_pipeline(self, seeds, box, lasso) -> bool:
        if (not self._tabled or box is not None or lasso is not None or seeds is None
                or self._options["connectivity"] == 8):
            return True
        return (getattr(seeds, "ndim", 0) == len(self.shape) and seeds.size > 0
                and getattr(seeds.dtype, "kind", "") in "iu" and not only_binary_labels(seeds))

    def _update_pipeline(self, seeds, box, lasso, cancel, device_mask, started, region,
                         previous=None):
        self._check_seed_axes(seeds)
        values = self._image_features()
        seeds = seeds if seeds is None or array_module(seeds) is not np else np.asarray(seeds)
        if self._on_gpu and seeds is not None and array_module(seeds) is np:
            seeds = self._pipeline_seeds.take(seeds, region)  # only the edit is uploaded
        else:
            self._pipeline_seeds.reset()
        self._last_seeds = seeds
        self._contrast_for(box)  # a box's own n-links (:mod:`._box_contrast`)
        self.prepare()
        kept = {"moves": self._solver.moves,  # several objects
                "starts": self._solver.starts if self.warm_objects else None,
                "coarse_start": self._coarse_start if self.warm_strokes else None,
                "previous": previous}  # checked by segment_values

        def cut(network):
            return self._solver.solve(network.source, network.sink, cancel=cancel)

        if self._options["connectivity"] == 8:
            if seeds is not None and seeds.size and not only_binary_labels(seeds):
                raise ValueError("connectivity=8 segments one object: seeds of further "
                                 "objects (labels 3, 4, ...) use 4-connected moves")

            def cut(network):  # noqa: F811 - the 8-connected grid's cut, at today's lam
                if self._diagonals is None:
                    self._diagonals = diagonal_capacities(self._diagonal_weights, self.lam,
                                                          scale=self.scale)
                return cut_eight(network, self._diagonals, device=self.backend)

        options = {**self._options, "lam": self.lam, "box": box, "lasso": lasso}
        kept["device_output"] = device_mask and self.backend == "cuda"  # no copy to the host
        if self._auto_lam and (box is not None or lasso is not None) and \
                self._weights is not None:
            output, run, options = self._guarded(values, seeds, options, cut, kept)
        else:
            output, run = segment_values(values, self._nlinks, seeds, options, **kept,
                                         device=self.backend, cut=cut, shape=self.shape)
        self._seeds_stale = True
        objects = output if output.dtype == bool else output != 0  # as the table route: shared
        self.last_result = result_of(run, objects, options, started)
        if device_mask and self.backend == "cuda":
            return self._xp.asarray(output)
        return output

    def _guarded(self, values, seeds, options, cut, kept):
        """The collapse guard (:mod:`._smoothness`): cut at the lighter and the heavier
        automatic lam, keep the heavier one's result unless its object shrank below the
        guard's share; the session's lam is the lighter one again afterwards."""
        results = []
        for lam in self._auto_lam:
            self._set_lam(lam, keep=True)
            chosen = {**options, "lam": lam}
            results.append((*segment_values(values, self._nlinks, seeds, chosen, **kept,
                                            device=self.backend, cut=cut, shape=self.shape),
                            chosen))
        self._set_lam(self._auto_lam[0], keep=True)
        light, heavy = results
        return heavy if keep_heavier(light[0], heavy[0]) else light

    # -- seeds and capacities ---------------------------------------------------------------

    def _take_seeds(self, seeds, region) -> None:
        """Copy the new seeds (or their ``region``) and count the edit in the colour model."""
        on_gpu = array_module(seeds) is not np
        if not on_gpu:
            seeds = np.asarray(seeds)
        self._check_seed_axes(seeds)
        if region is None or self._seeds is None:
            after = check_seeds(seeds.get() if on_gpu else np.asarray(seeds), self.shape,
                                require_both=False)
            region = tuple(slice(0, n) for n in self.shape)
            if self._seeds is None:
                self._seeds = np.zeros(self.shape, np.uint8)
        else:
            region = check_region(region, self.shape)
            after = seeds[region]
            after = check_seeds(after.get() if on_gpu else np.asarray(after),
                                name="seeds in the edited region", require_both=False)
        before = self._seeds[region]
        if self._histograms is not None:
            self._histograms.edit(region, before, after)
        self._seeds[region] = after
        self._last_seeds = self._seeds
        if self._on_gpu:
            import cupy
            if self._seeds_device is None:
                self._seeds_device = cupy.asarray(self._seeds)
            else:  # copies only: no CuPy kernel to compile
                energy_kernels().upload_region(self._seeds_device, self._seeds, region)
            self._last_seeds = self._seeds_device
        object_seeds, background_seeds = self._seed_counts()
        if not object_seeds:
            raise ValueError("seeds contain no foreground seed (label 1 / red stroke); mark at "
                             "least one pixel of the object")
        if not background_seeds:
            raise ValueError("seeds contain no background seed (label 2 / blue stroke); mark "
                             "at least one background pixel")

    def _check_seed_axes(self, seeds) -> None:
        if seeds is not None and seeds.ndim != (n := len(self.shape)):
            raise ValueError(f"seeds have shape {tuple(seeds.shape)} but this Segmenter's image "
                             f"is {'x'.join(map(str, self.shape))}: a {n}-D image needs {n}-D "
                             "seeds (a grey volume needs channel_axis=None)")

    def _seed_counts(self) -> tuple[int, int]:
        if self._histograms is not None:
            return self._histograms.seed_counts
        return (int(np.count_nonzero(self._seeds == FOREGROUND)),
                int(np.count_nonzero(self._seeds == BACKGROUND)))

    def _terminal_capacities(self):
        seeds = self._seeds_device if self._on_gpu else self._seeds
        source_table, sink_table = self._histograms.capacity_tables(self.scale)
        if self._on_gpu:
            import cupy
            source_table, sink_table = cupy.asarray(source_table), cupy.asarray(sink_table)
        return capacities_from_tables(self._histograms.index, seeds, self._pins, source_table,
                                      sink_table)


__all__ = ["Segmenter", "only_binary_labels", "tabled"]
