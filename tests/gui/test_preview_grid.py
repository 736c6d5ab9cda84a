"""The preview's reduced grid for every request (no Qt): seeds of several objects, boxes and
lassos reduced to the coarse grid, and the preview solver's answers for them."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from graphcut import segment
from graphcut.gui.controller import PostQueue, SegmentationController
from graphcut.gui.options import SegmentOptions
from graphcut.gui.reduced_grid import Reducer
from graphcut.gui.sharing import SeedDelta
from graphcut.gui.solve import Job, Session, Solver

from test_interactive import Recorder, wait


def two_objects_image(rng, shape=(120, 160)):
    """A noisy three-colour image: a red disc (object 1), a green square (object 3) on blue;
    returns it with its true label image (0 background, 1, 3)."""
    h, w = shape
    yy, xx = np.mgrid[:h, :w]
    truth = np.zeros(shape, np.uint8)
    truth[(yy - h / 3) ** 2 + (xx - w / 3) ** 2 < (h / 5) ** 2] = 1
    truth[int(h * 0.55):int(h * 0.85), int(w * 0.6):int(w * 0.9)] = 3
    palette = np.array([[50, 70, 170], [200, 60, 50], [0, 0, 0], [60, 190, 70]], float)
    image = palette[truth] + rng.normal(0, 25, (h, w, 3))
    return np.clip(image, 0, 255).astype(np.uint8), truth


def object_seeds(truth):
    """A small square of seeds inside each object and a background frame."""
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[:3, :] = seeds[-3:, :] = 2
    for value in (1, 3):
        rows, cols = np.nonzero(truth == value)
        r, c = int(np.median(rows)), int(np.median(cols))
        seeds[r - 4:r + 4, c - 4:c + 4] = value
    return seeds


def test_reduced_seeds_take_each_blocks_majority_label_and_leave_ties_unseeded():
    rng = np.random.default_rng(3)
    seeds = rng.choice(np.array([0, 0, 1, 2, 3, 4], np.uint8), size=(23, 31))
    k = 4
    reducer = Reducer(seeds.shape, k)
    reduced, region = reducer.reduce_seeds(seeds, "all")
    assert reduced.shape == (6, 8) and region == (slice(0, 6), slice(0, 8))
    for i in range(6):
        for j in range(8):
            counts = Counter(int(v) for v in seeds[i * k:(i + 1) * k, j * k:(j + 1) * k].ravel()
                             if v)
            ranked = counts.most_common()
            if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
                expected = 0
            else:
                expected = ranked[0][0]
            assert reduced[i, j] == expected, (i, j, counts)
    # a later edit recomputes only the blocks it touches, with the same rule
    seeds[5:9, 0:8] = 3
    reduced, region = reducer.reduce_seeds(seeds, (5, 9, 0, 8))
    assert region == (slice(1, 3), slice(0, 2))
    np.testing.assert_array_equal(reduced, Reducer(seeds.shape, k).reduce_seeds(seeds, "all")[0])


def test_reduced_box_and_lasso_cover_the_blocks_of_the_full_ones():
    reducer = Reducer((100, 130), 4)
    options = SegmentOptions(keep="connected", fill_holes=100).with_region(box=(10, 21, 50, 99))
    reduced = reducer.reduce_options(options)
    assert reduced.box == (2, 5, 13, 25) and reduced.keep == "all" and reduced.fill_holes == 0
    lasso = reducer.reduce_options(options.with_region(lasso=[(1.5, 1.5), (41.5, 1.5),
                                                              (41.5, 81.5)])).lasso
    assert lasso == ((0.0, 0.0), (10.0, 0.0), (10.0, 20.0))  # block centres stay centres


@pytest.mark.parametrize("model", ["histogram", "gmm"])
@pytest.mark.parametrize("region", [None, "box"])
def test_preview_solver_segments_several_objects_on_the_reduced_grid(model, region):
    rng = np.random.default_rng(21)
    image, truth = two_objects_image(rng)
    seeds = object_seeds(truth)
    k = 4
    options = SegmentOptions(model=model)
    if region == "box":
        options = options.with_region(box=(6, 10, 115, 155))
    solver = Solver()
    assert solver.open(Session(1, image, 10.0, "cpu", preview_factor=k)).error is None
    outcome = solver.run(Job(1, 1, 10.0, SeedDelta(None, seeds), options))
    assert outcome.error is None and outcome.factor == k
    assert outcome.labels.shape == (30, 40) and set(np.unique(outcome.labels)) <= {0, 1, 3}
    # the same as a one-shot segmentation of the reduced image, seeds and box
    reducer = Reducer(truth.shape, k)
    reduced_options = reducer.reduce_options(options)
    expected = segment(reducer.reduce_image(image), reducer.reduce_seeds(seeds, "all")[0],
                       model=model, lam=10.0 / k, box=reduced_options.box, device="cpu")
    np.testing.assert_array_equal(outcome.labels, expected)
    upscaled = np.repeat(np.repeat(outcome.labels, k, 0), k, 1)[:120, :160]
    assert (upscaled == truth).mean() > 0.95  # against the truth
    if region == "box":
        assert not upscaled[:4].any() and not upscaled[:, :8].any()  # outside the box


def test_controller_shows_a_preview_for_several_objects_and_a_box():
    rng = np.random.default_rng(22)
    image, truth = two_objects_image(rng, (200, 260))
    post, recorder = PostQueue(), Recorder()
    controller = SegmentationController(recorder, post=post, device="cpu", use_process=False,
                                        preview=True, preview_pixels=5000)
    controller.set_options(SegmentOptions().with_region(box=(5, 5, 195, 255)))
    try:
        controller.open_image(image)
        seeds = object_seeds(truth)
        controller.set_seeds(seeds)
        number = controller.request()
        wait(controller, post)
        previews = [o for o in recorder.outcomes if o.number == number and o.factor > 1]
        assert previews and previews[-1].labels is not None  # a preview of the label image
        assert recorder.outcomes[-1].factor == 1 and recorder.errors == []
        np.testing.assert_array_equal(
            recorder.outcomes[-1].labels,
            segment(image, seeds, box=(5, 5, 195, 255), lam=controller.lam, device="cpu"))
    finally:
        controller.close()


def test_a_live_models_preview_iterates_less_and_its_exact_solver_does_not():
    """``auto`` on a colour image is the live GMM: the preview solver's copy runs at most
    PREVIEW_ITERATIONS GrabCut iterations (its other knobs unchanged), the exact solver the
    model's own; a model named by the user is left as it is."""
    from graphcut.gui import reduced_grid
    from graphcut.gui.options import APP_DEFAULTS
    from graphcut.models import GMM

    live = GMM(core=0.4, warm=True)
    fewer = reduced_grid.preview_model(live)
    assert fewer.iterations == reduced_grid.PREVIEW_ITERATIONS < live.iterations
    assert {k: getattr(fewer, k) for k in live.knobs if k != "iterations"} == \
        {k: getattr(live, k) for k in live.knobs if k != "iterations"}
    assert reduced_grid.preview_model("gmm") == "gmm"
    assert reduced_grid.preview_model(GMM()) == GMM()
    image, truth = two_objects_image(np.random.default_rng(5), shape=(240, 320))
    seeds = object_seeds(truth)
    seeds[seeds == 3] = 2
    iterations = {}
    for factor in (1, 2):
        solver = Solver()
        opened = solver.open(Session(1, image, None, "cpu", preview_factor=factor))
        assert opened.error is None
        options = APP_DEFAULTS if factor == 1 else APP_DEFAULTS.with_cleanup(False)
        outcome = solver.run(Job(1, 1, None, SeedDelta(None, seeds.copy()), options))
        assert outcome.error is None, outcome.details
        iterations[factor] = solver._segmenter._options["iterations"]
    assert iterations == {1: 5, 2: reduced_grid.PREVIEW_ITERATIONS}
