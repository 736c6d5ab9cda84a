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


def assert_gpu_session_is_the_cpus(image, model, seed_states):
    """Run ``seed_states`` (seed images, one per update) through one GPU Segmenter and assert
    each answer is on the GPU and equals a fresh CPU ``graphcut.segment``'s (mask and max
    flow); returns the masks."""
    session = graphcut.Segmenter(image, model=model, device="cuda")
    masks = []
    for step, seeds in enumerate(seed_states):
        mask = session.update(seeds)
        cpu, result = graphcut.segment(image, seeds, model=model, device="cpu",
                                       return_result=True)
        assert session.last_result.backend == "cuda"
        np.testing.assert_array_equal(mask, cpu, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow, step
        masks.append(mask)
    return masks


def assert_box_updates_are_fresh_segments(image, box, seeds, margin, model="learned",
                                          device="cpu"):
    """One Segmenter through a box, the box ``margin`` pixels wider, seeds in it, background
    strokes without a box and the box again: each answer (mask and max flow) equals a fresh
    ``graphcut.segment``'s, and a box's outside stays background."""
    from graphcut.segmentation._regions import allowed_region
    wider = (box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin)
    strokes = seeds.copy()
    strokes[2:4, 2:40] = 2
    session = graphcut.Segmenter(image, model=model, device=device)
    for step, (s, where) in enumerate([(None, box), (None, wider), (seeds, wider),
                                       (strokes, None), (None, box)]):
        mask = session.update(s, box=where)
        fresh, result = graphcut.segment(image, s, box=where, model=model, device=device,
                                         return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow, step
        if where is not None:
            assert not mask[~allowed_region(image.shape, box=where)].any()
