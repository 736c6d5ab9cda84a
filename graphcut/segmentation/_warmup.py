"""Preparing a segmentation session ahead of its first real update.

The first GPU update of a :class:`~graphcut.Segmenter` pays for what later ones reuse: CuPy's
kernels for the energy (compiled by NVRTC on a machine's first run, else loaded from CuPy's
cache), the solver's kernels (a shipped fatbin, else NVRTC), the solver state for the image's
shape, the page-locked upload buffers and the captured CUDA graphs. :func:`warm_up` pays all of
that with one throwaway update (one object and one background seed), for example while the app
shows a newly opened image, so that the user's first stroke costs what later strokes do. The
next update re-solves incrementally from the throwaway preflow, with the exact answer of a fresh
solve (the Segmenter's guarantee).
"""

from __future__ import annotations

import time

import numpy as np

from graphcut._labels import BACKGROUND, FOREGROUND


def warm_up(session) -> float:
    """Run one throwaway update on a GPU ``session`` (a Segmenter); returns the seconds spent.

    Does nothing for CPU sessions (there is nothing to compile, and a full CPU solve would delay
    the user's first stroke) or for single-pixel images (no room for two seeds).
    """
    started = time.perf_counter()
    shape = tuple(session.shape)  # (H, W) or a volume's (D, H, W)
    if session.backend != "cuda" or int(np.prod(shape)) < 2:
        return 0.0
    seeds = np.zeros(shape, dtype=np.uint8)
    seeds[tuple(n // 2 for n in shape)] = FOREGROUND  # never the corner with two pixels or more
    seeds[(0,) * len(shape)] = BACKGROUND
    session.update(seeds)
    return time.perf_counter() - started


__all__ = ["warm_up"]
