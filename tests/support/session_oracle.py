"""The session invariant the appearance-model tests share: a :class:`graphcut.Segmenter` that is
given each previous update (``previous=(seeds, mask)``) answers every update exactly as a fresh
:func:`graphcut.segment` with the same inputs does (mask and max flow), so it keeps no hidden
state."""

from __future__ import annotations

import numpy as np

import graphcut


def assert_session_updates_are_fresh_segments(image, model, seed_states, device="cpu"):
    """Run ``seed_states`` (seed images, one per update) through one Segmenter, each update
    given the one before, and assert each answer equals a fresh ``graphcut.segment``'s;
    returns the masks."""
    session = graphcut.Segmenter(image, model=model, device=device)
    previous, masks = None, []
    for seeds in seed_states:
        mask = session.update(seeds, previous=previous)
        fresh, result = graphcut.segment(image, seeds, model=model, device=device,
                                         previous=previous, return_result=True)
        np.testing.assert_array_equal(mask, fresh)
        assert session.last_result.flow == result.flow
        previous = (seeds, mask)
        masks.append(mask)
    return masks
