"""Several objects in the app (gui/previous_update.py): each exact job carries the label
image the user saw, the expansion starts from it, and the controller's labels equal
``graphcut.segment(image, seeds, previous=(seeds shown, labels shown))``'s whatever the
solver (thread or process); the first request, and one after a change to one object, carry
none (a fresh ``segment``'s answer). The scene's strokes make the start matter (the moves
from the labels shown change far fewer pixels than from the cheapest labels)."""

from __future__ import annotations

import numpy as np
import pytest

import graphcut
from graphcut import segment
from synthetic import two_objects
from test_app_hold import make_controller, record_jobs
from test_interactive import wait


def three_objects():
    """A 60 x 90 colour image with objects 1, 3 and 4, their truth and first seeds, and the
    seeds after each of three strokes of true labels."""
    image, truth, seeds = two_objects(seed=5, noise=0.3)
    truth[40:52, 30:42] = 4
    image[40:52, 30:42] = (230, 200, 40)
    seeds[44:47, 34:37] = 4
    rng = np.random.default_rng(7)
    states = [seeds.copy()]
    for _ in range(3):
        r, c = rng.integers(4, 56), rng.integers(4, 86)
        block = truth[r - 3:r + 3, c - 3:c + 3]
        seeds[r - 3:r + 3, c - 3:c + 3] = np.where(block == 0, 2, block)
        states.append(seeds.copy())
    return image, states


@pytest.mark.parametrize("device,use_process", [
    ("cpu", False), ("cpu", True),
    pytest.param("cuda", True, marks=pytest.mark.gpu)])
def test_strokes_of_several_objects_start_from_the_labels_shown(device, use_process):
    if device == "cuda" and not graphcut.solver.cuda_status()[0]:
        pytest.skip(graphcut.solver.cuda_status()[1])
    image, states = three_objects()
    controller, post, recorder = make_controller(device, use_process)
    try:
        controller.open_image(image)
        jobs = record_jobs(controller, controller._exact)
        shown = None
        for seeds in states:
            controller.set_seeds(seeds)
            controller.request()
            wait(controller, post)
            labels = recorder.outcomes[-1].labels
            np.testing.assert_array_equal(labels, segment(image, seeds, device=device,
                                                          previous=shown))
            np.testing.assert_array_equal(controller.mask(), labels != 0)
            shown = (seeds.copy(), labels)
        assert recorder.errors == []
        assert jobs[0][1] is None and all(p is not None for _, p in jobs[1:])
    finally:
        controller.close()


def test_one_object_in_between_starts_afresh():
    """Object 4's and 3's seeds erased (one object, the histogram: no hold) carries none,
    and the next request of several objects carries none either (the mask shown was one
    object's)."""
    image, states = three_objects()
    from graphcut.gui.options import SegmentOptions
    controller, post, recorder = make_controller()
    try:
        controller.set_options(SegmentOptions(model="histogram"))
        controller.open_image(image)
        jobs = record_jobs(controller, controller._exact)
        one = np.where(states[1] > 2, 0, states[1]).astype(np.uint8)
        for seeds in (states[0], one, states[1], states[2]):
            controller.set_seeds(seeds)
            controller.request()
            wait(controller, post)
        assert [p is None for _, p in jobs] == [True, True, True, False]
        np.testing.assert_array_equal(
            recorder.outcomes[-1].labels,
            segment(image, states[2], device="cpu", model="histogram",
                    previous=(states[1], recorder.outcomes[-2].labels)))
        assert recorder.errors == []
    finally:
        controller.close()
