"""The segmentation controller ends a running CPU solve that the next job cannot reuse: a
solve through the pipeline (several objects, a box, a lasso, the GMM) leaves no flow for the
next job, so undoing a multi-object stroke must not wait for it (issue #22)."""

import threading

import numpy as np

from graphcut import BACKGROUND, segment
from graphcut.gui.controller import PostQueue, SegmentationController
from graphcut.gui.options import SegmentOptions
from test_interactive import Recorder, colour_image, start_seeds, wait


def _controller_after_a_first_mask(image, seeds, model="auto"):
    post, recorder = PostQueue(), Recorder()
    controller = SegmentationController(recorder, post=post, device="cpu", preview=False)
    controller.set_options(SegmentOptions(model=model))
    controller.open_image(image)
    controller.set_seeds(seeds)
    controller.request()
    wait(controller, post)
    exact = controller._exact
    killed = threading.Event()
    kill = exact.client.kill
    exact.client.kill = lambda: (killed.set(), kill())
    return controller, post, recorder, exact, killed


def test_undo_after_a_multi_object_stroke_ends_the_running_cpu_solve():
    image, truth = colour_image(np.random.default_rng(21))
    seeds = start_seeds(truth.shape)
    controller, post, recorder, exact, killed = _controller_after_a_first_mask(image, seeds)
    try:
        several = seeds.copy()
        several[5, 5:15] = 3  # a second object: a solve through the pipeline
        controller.set_seeds(several)
        controller.request()
        exact.pipeline_seconds = 1e6  # "this solve takes long"
        assert not killed.is_set()
        controller.set_seeds(seeds)  # undo, same lambda
        controller.request()
        assert killed.is_set()
        wait(controller, post)
        np.testing.assert_array_equal(controller.mask(), segment(image, seeds, device="cpu"))
        assert recorder.errors == []
    finally:
        controller.close()


def test_a_plain_stroke_with_the_same_lambda_lets_the_solve_finish():
    image, truth = colour_image(np.random.default_rng(22))
    seeds = start_seeds(truth.shape)
    # the plain energy (one object, the histogram): the only one that re-solves incrementally
    controller, post, recorder, exact, killed = _controller_after_a_first_mask(
        image, seeds, model="histogram")
    try:
        seeds[-1, :] = BACKGROUND
        controller.set_seeds(seeds)
        controller.request()
        exact.incremental_seconds = exact.fresh_seconds = 1e6  # long, but reusable
        seeds[:, -1] = BACKGROUND
        controller.set_seeds(seeds)
        controller.request()
        assert not killed.is_set()
        wait(controller, post)
        np.testing.assert_array_equal(controller.mask(),
                                      segment(image, seeds, device="cpu", model="histogram"))
    finally:
        controller.close()


def test_a_short_pipeline_solve_is_left_to_finish():
    image, truth = colour_image(np.random.default_rng(23))
    seeds = start_seeds(truth.shape)
    controller, post, recorder, exact, killed = _controller_after_a_first_mask(image, seeds)
    try:
        several = seeds.copy()
        several[5, 5:15] = 3
        controller.set_seeds(several)
        controller.request()
        exact.pipeline_seconds = 0.0  # ends sooner than a new process starts
        controller.set_seeds(seeds)
        controller.request()
        assert not killed.is_set()
        wait(controller, post)
        np.testing.assert_array_equal(controller.mask(), segment(image, seeds, device="cpu"))
    finally:
        controller.close()
