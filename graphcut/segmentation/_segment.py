"""``segment``: image + seeds (and / or a box or lasso) -> object mask or label image, as
one update of a :class:`~graphcut.segmentation.Segmenter` (the same pipeline the app's strokes
run)."""

from __future__ import annotations

import logging

import numpy as np

from graphcut._arrays import to_host
from graphcut.solver import CutResult, resolve_device

from ._boykov_jolly import spatial_channel_axis
from ._memory import array_segmentation_backend
from ._options import resolve_options
from ._segmenter import Segmenter

log = logging.getLogger("graphcut")


def segment(image, seeds=None, *, box=None, lasso=None, model=None, lam=None, keep="all",
            fill_holes=0, channel_axis=-1, device="auto", return_result=False, **options):
    """Segment the object (or objects) marked by ``seeds`` and / or a box or lasso.

    One update of a :class:`~graphcut.Segmenter` made for this image: the same pipeline, with
    the same result as the app's incremental re-solves.

    Parameters
    ----------
    image
        grey (H, W) or colour (H, W, C) image, uint8 / uint16 / bool / float, RGB or RGBA
        (alpha ignored); or a volume, grey (D, H, W) or colour (D, H, W, C), segmented on the
        6-connected voxel grid through the same pipeline (every model, box and clean-up; no
        lasso, one object). A grey volume without seeds needs ``channel_axis=None``.
        NumPy or CuPy. Not modified.
    seeds
        (H, W) (or (D, H, W)) integer labels: 0 no seed, 1 object, 2 background; several
        objects are labelled 1, 3, 4, ... (2 is always the background). ``None``: no seeds
        (a box or lasso is then needed). Not modified.
    box
        ``(row0, col0, row1, col1)``, half-open: everything outside is background (hard); a
        volume's is ``(z0, y0, x0, z1, y1, x1)``.
        Without object seeds the object's appearance is first learnt from the inside, as in
        GrabCut.
    lasso
        a closed polygon of ``(row, col)`` vertices; outside is background (hard).
    model
        the appearance model with its knobs: a model object such as
        ``graphcut.models.GMM(components=5, texture=4)`` or
        ``graphcut.models.Histogram(bins=32)``; a name, ``"auto"`` (the default: the model
        measured best for the image, ``GMM(core=0.4, warm=True, outline=8, stroke_reach=0.2,
        locality=4, prune=1, texture=0, stroke_share=0.05)`` on colour photographs (without
        ``prune`` and ``stroke_share`` and with the texture channel on grey photographs),
        ``Learned()`` on grey and colour micrographs and volumes, see
        :class:`graphcut.models.Auto`), ``"histogram"`` (the Boykov-Jolly smoothed colour
        histograms), ``"gmm"`` (GrabCut's Gaussian mixtures with its iterations, local seeds
        and texture) or ``"learned"``; or a settings dict
        (:func:`graphcut.models.model_from_settings`). Never modified.
    lam
        weight of the boundary term against the appearance term; ``None``: the model's (10
        for the histogram, 35 for the GMM, 4 for the learned model); with a box or lasso the
        histogram then keeps lam 20's mask unless it holds under 0.8 of lam 10's object pixels
        (docs/appearance.md, "Smoothness").
    keep
        "all", or "connected": keep only the object parts that touch a seed of their object
        or the central part of the box or lasso (the largest part when none does).
    fill_holes
        fill holes of fewer than this many pixels inside an object (0: none). Holes with a
        background seed are never filled.
    channel_axis
        the channel axis of a 3-D image (scikit-image convention).
    device
        "auto", "cpu" or "cuda" (see :func:`graphcut.solver.min_cut`). With "cuda" (or
        "auto" choosing it) a NumPy image is copied to the GPU and the models, the networks
        and the cuts all run there.
    return_result
        also return a :class:`~graphcut.solver.CutResult`.
    **options
        the energy's options: ``sigma`` (colour-difference scale of the boundary weights;
        ``None`` estimates it, :func:`graphcut.segmentation.estimate_sigma`), ``spacing``
        (``(dy, dx)`` or ``(dz, dy, dx)`` pixel size; the n-links along an axis are weighed
        by ``min(spacing) / spacing[axis]``), ``scale`` (float capacities are multiplied by
        this and rounded; 1000), ``tol`` (an iteration lowering the energy by less than this
        many nats per pixel ends the iterations), ``connectivity`` (4, the default, or 8:
        diagonal n-links too, weighed 1/sqrt(2), sigma over the 8 neighbours, as
        ``cv2.grabCut``; one object in an image; see docs/appearance-photos.md; lam keeps
        its meaning per link, so 8 needs about lam / 2.4 for the same boundary cost).
        The model's knobs as keyword arguments
        still work and are folded into the model object: ``bins`` (histogram),
        ``components`` and ``texture`` (GMM), ``iterations``, ``seed_share``, ``locality``,
        ``far_cost`` (see :class:`graphcut.models.AppearanceModel`). ``previous=(seeds,
        mask)``: the seeds and the mask of the update before this one, for a model whose
        earlier mask *holds* far from a new stroke (``Learned(hold=...)``, on by default;
        one object from strokes alone in an image), as ``Segmenter.update(..., previous=)``
        takes it; without it, no hold. With seeds of several objects, ``previous=(seeds,
        labels)`` (the label image the update before returned) starts the alpha-expansion
        from those labels instead of from each pixel's cheapest one: fewer moves after a
        stroke, and the same answer for the same ``previous``.

    Returns
    -------
    numpy.ndarray or tuple
        One object labelled 1 (or none, with a box or lasso): a bool NumPy (H, W) mask, True
        = object. Otherwise a uint8 (H, W) label image: 0 background, each object its seed
        label. With ``return_result``, ``(output, result)``: ``result.flow`` is the last
        minimisation's integer energy (the max flow for one object), ``result.source_side``
        the object pixels, ``result.stats`` the solver's numbers plus "iterations", "model",
        "lam" (through the general pipeline also "energies": the energy after each
        minimisation, nats, never increasing), and ``stats["seconds"]["total"]``.

    Raises
    ------
    ValueError or TypeError
        bad image, seeds or options (the message says which).
    graphcut.solver.BackendUnavailableError
        ``device="cuda"`` without a usable GPU.
    MemoryError
        ``device="cuda"`` and the GPU ran out of memory (with ``device="auto"`` the image is
        segmented on the CPU instead, with a logged warning); ``HostMemoryError`` when the
        segmentation would not fit in the memory available, raised before it starts
        (:func:`graphcut.segmentation.segmentation_backend`).

    Examples
    --------
    One object from two seed pixels (1 = object, 2 = background):

    >>> import numpy as np
    >>> from graphcut import segment
    >>> image = np.zeros((6, 8), np.uint8)
    >>> image[1:5, 2:6] = 200
    >>> seeds = np.zeros((6, 8), np.uint8)
    >>> seeds[2, 3], seeds[0, 0] = 1, 2
    >>> mask = segment(image, seeds, device="cpu")
    >>> mask.dtype, mask.shape, int(mask.sum())
    (dtype('bool'), (6, 8), 16)

    GrabCut from a box alone (``(row0, col0, row1, col1)``, half-open), with the Gaussian
    mixture model:

    >>> from graphcut.models import GMM
    >>> segment(image, box=(1, 1, 5, 7), model=GMM(), device="cpu").astype(int)
    array([[0, 0, 0, 0, 0, 0, 0, 0],
           [0, 0, 1, 1, 1, 1, 0, 0],
           [0, 0, 1, 1, 1, 1, 0, 0],
           [0, 0, 1, 1, 1, 1, 0, 0],
           [0, 0, 1, 1, 1, 1, 0, 0],
           [0, 0, 0, 0, 0, 0, 0, 0]])

    Several objects are labelled 1, 3, 4, ...; the answer is then a label image:

    >>> seeds[2, 5] = 3
    >>> segment(image, seeds, device="cpu").dtype
    dtype('uint8')

    The solver's answer too: ``flow`` is the minimum energy, in capacity units:

    >>> seeds[2, 5] = 0
    >>> mask, result = segment(image, seeds, device="cpu", return_result=True)
    >>> result.backend, result.flow > 0, bool((result.source_side == mask).all())
    ('cpu', True, True)
    """
    previous = options.pop("previous", None)  # the hold's previous update (:mod:`._hold`)
    settings = dict(model=model, lam=lam, keep=keep, fill_holes=fill_holes, **options)
    o = resolve_options(channel_axis=channel_axis, box=box, lasso=lasso, **settings)
    axis = spatial_channel_axis(image, seeds, channel_axis)

    def once(image, seeds, device):
        session = Segmenter(image, channel_axis=axis, device=device, **settings)
        session._one_shot(region=box is not None or lasso is not None)
        output = session.update(seeds, box=box, lasso=lasso, previous=previous)
        result = session.last_result
        stats = {"iterations": 0, **result.stats, "model": o["model"],
                 "lam": result.stats.get("lam", o["lam"])}
        return output, CutResult(result.flow, result.source_side, result.backend, stats)

    output, result = _run_on_device(once, image, seeds, device, model=model,
                                    region=box is not None or lasso is not None)
    return (output, result) if return_result else output


def _run_on_device(run, image, seeds, device, *, model=None, region=False):
    """``run(image, seeds, device)`` on the GPU or the CPU, falling back to the CPU with
    device "auto" when the image is too large for the GPU or the GPU runs out of memory
    (logged); ``model``, ``region``: what the memory check counts
    (:func:`~graphcut.segmentation.segmentation_bytes`)."""
    shape_of = seeds if seeds is not None else np.broadcast_to(np.uint8(0), _image_plane(image))
    if array_segmentation_backend(image, shape_of, device, model=model,
                                  region=region) == "cpu" and device == "auto":
        image, seeds, device = to_host(image), _seeds_to_host(seeds), "cpu"  # too large
    if resolve_device(device) == "cuda":
        try:
            return run(image, seeds, device)
        except MemoryError as error:  # GPUMemoryError, or CuPy's OutOfMemoryError while building
            if device != "auto":
                raise
            log.warning("the GPU ran out of memory (%s); falling back to the CPU: segmenting "
                        "on the CPU instead", error)
            image, seeds = to_host(image), _seeds_to_host(seeds)
            device = "cpu"
    return run(image, seeds, device)


def _image_plane(image):
    shape = tuple(getattr(image, "shape", np.shape(image)))
    return shape[:2] if len(shape) >= 2 else shape


def _seeds_to_host(seeds):
    """The seeds in host memory; None (a box or lasso alone) stays None."""
    return None if seeds is None else to_host(seeds)


__all__ = ["segment"]
