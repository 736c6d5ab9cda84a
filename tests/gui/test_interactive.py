"""The interactive path without Qt: incremental colour model, Segmenter edits, the transfer
formats, the solver server and the segmentation controller (threads and processes)."""

from __future__ import annotations

import os
import threading
import time

import numpy as np
import pytest

import graphcut
from graphcut import Segmenter, build_network, segment
from graphcut.segmentation import (SeedHistograms, capacities_from_tables, image_as_float, quantize,
                             regional_costs, seed_pins, terminal_capacities)
from graphcut.gui.controller import (SOLVER_NICENESS, SPARE_NICENESS, Listener, PostQueue,
                                     SegmentationController)
from graphcut.gui.sharing import AttachedArray, MaskUpdate, SeedDelta, SharedArray
from graphcut.gui.solve import Job, Opened, Outcome, Session, Solver, preview_factor
from graphcut.gui.solver_process import Server
from graphcut.solver import min_cut
from synthetic import colour_image


def random_stroke(rng, seeds, truth):
    """A stroke-like edit (a short thick segment of one label, or an erasure); returns the
    (rows, cols) slices it changed. Keeps one seed of each label."""
    h, w = seeds.shape
    y, x = int(rng.integers(0, h)), int(rng.integers(0, w))
    dy, dx = rng.integers(-8, 9, size=2)
    r = int(rng.integers(1, 4))
    action = rng.choice(["truth", "truth", "truth", "wrong", "erase"])
    rows = slice(max(0, min(y, y + dy) - r), min(h, max(y, y + dy) + r + 1))
    cols = slice(max(0, min(x, x + dx) - r), min(w, max(x, x + dx) + r + 1))
    if action == "truth":
        seeds[rows, cols] = np.where(truth[rows, cols], 1, 2)
    elif action == "wrong":
        seeds[rows, cols] = np.where(truth[rows, cols], 2, 1)
    else:
        seeds[rows, cols] = 0
    seeds[0, 0] = 2  # back to what they were, so these never change
    seeds[h // 2, w // 2] = 1
    return rows, cols


def start_seeds(shape):
    seeds = np.zeros(shape, np.uint8)
    seeds[0, 0] = 2
    seeds[shape[0] // 2, shape[1] // 2] = 1
    return seeds


# ----- the colour model and capacities ------------------------------------------------------
@pytest.mark.parametrize("kind", ["colour", "grey"])
def test_seed_histograms_follow_edits_exactly(kind):
    rng = np.random.default_rng(1)
    image, truth = colour_image(rng)
    if kind == "grey":
        image = image[..., 0]
    values = image_as_float(image)
    histograms = SeedHistograms(values)
    seeds = start_seeds(truth.shape)
    histograms.fit(seeds)
    right, down = build_network(image, seeds).right, build_network(image, seeds).down
    pins = seed_pins((right, down))
    for _ in range(40):
        before = seeds.copy()
        rows, cols = random_stroke(rng, seeds, truth)
        histograms.edit((rows, cols), before[rows, cols], seeds[rows, cols])
        fresh = SeedHistograms(values)
        fresh.fit(seeds)
        np.testing.assert_array_equal(histograms.counts, fresh.counts)
        tables = histograms.capacity_tables()
        source, sink = capacities_from_tables(histograms.index, seeds, pins, *tables)
        expected = terminal_capacities(*regional_costs(image, seeds), (right, down), seeds)
        np.testing.assert_array_equal(source, expected[0])
        np.testing.assert_array_equal(sink, expected[1])


def test_capacity_tables_need_both_labels_and_keep_the_int32_check():
    values = image_as_float(np.random.default_rng(2).integers(0, 256, (8, 9, 3), np.uint8))
    histograms = SeedHistograms(values)
    seeds = np.zeros((8, 9), np.uint8)
    seeds[2, 2] = 1
    histograms.fit(seeds)
    with pytest.raises(ValueError, match="background"):
        histograms.capacity_tables()
    seeds[5, 5] = 2
    histograms.fit(seeds)
    with pytest.raises(ValueError, match="int32 limit"):
        histograms.capacity_tables(scale=1e9)
    assert quantize(np.zeros(2)).dtype == np.int32


# ----- Segmenter ----------------------------------------------------------------------------
@pytest.mark.parametrize("use_region,reuse_trees", [(True, 0.1), (False, 0.1), (True, 1.0),
                                                    (True, 0.0)])
def test_segmenter_on_random_stroke_sequences_equals_fresh_segment(use_region, reuse_trees,
                                                                   monkeypatch):
    """With region hints or without, and with PyMaxflow's search trees reused after every
    stroke (1.0), never (0.0) or when few t-links changed (0.1, the default)."""
    import graphcut.solver.cpu_incremental as bk
    monkeypatch.setattr(bk, "REUSE_TREES_AT_MOST", reuse_trees)
    rng = np.random.default_rng(3 + use_region)
    image, truth = colour_image(rng)
    seeds = start_seeds(truth.shape)
    session = Segmenter(image, lam=6.0, device="cpu")
    session.update(seeds)
    for step in range(40):
        region = random_stroke(rng, seeds, truth)
        mask = session.update(seeds, region=region if use_region else None)
        fresh, result = segment(image, seeds, lam=6.0, device="cpu", return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow
        assert session.last_result.stats["incremental"]
        stats = session.last_result.stats
        if reuse_trees in (0.0, 1.0) and stats["changed_terminals"]:
            assert stats["reused_trees"] == (reuse_trees == 1.0)


def test_segmenter_lam_changes_keep_the_session_and_equal_fresh_solves():
    rng = np.random.default_rng(5)
    image, truth = colour_image(rng)
    seeds = start_seeds(truth.shape)
    session = Segmenter(image, device="cpu", model="histogram")  # build_network's energy
    for step, lam in enumerate([10.0, 2.0, 2.0, 35.0, 0.0, 10.0]):
        random_stroke(rng, seeds, truth)
        session.set_lam(lam)
        mask = session.update(seeds)
        fresh = min_cut(build_network(image, seeds, lam=lam), device="cpu")
        np.testing.assert_array_equal(mask, fresh.source_side, err_msg=f"lam {lam}")
        assert session.last_result.flow == fresh.flow
    with pytest.raises(ValueError, match="lam"):
        session.set_lam(-1)


def test_segmenter_rejects_bad_regions_and_labels():
    image = np.zeros((10, 12), np.uint8)
    session = Segmenter(image, device="cpu")
    seeds = np.zeros((10, 12), np.uint8)
    seeds[1, 1], seeds[8, 8] = 1, 2
    session.update(seeds)
    seeds[3, 3] = 255  # 3 .. 254 are further objects; 255 is no label
    with pytest.raises(ValueError, match="unknown label"):
        session.update(seeds, region=np.s_[2:5, 2:5])
    with pytest.raises(TypeError, match="tuple of 2 slices"):
        session.update(seeds, region=5)
    seeds[3, 3] = 0
    seeds[1, 1] = 0
    with pytest.raises(ValueError, match="no foreground"):
        session.update(seeds, region=np.s_[0:4, 0:4])
    seeds[1, 1] = 1
    session.update(seeds, region=np.s_[0:4, 0:4])  # usable again after the error
    with pytest.raises(ValueError, match="colour model"):
        Segmenter(image, device="cpu", model="nonsense")


def test_segmenter_takes_a_pair_of_models():
    """Any (object, background) pair with fit(values, mask) and costs(values) plugs in; the
    histogram costs given that way equal the built-in fast path."""
    from graphcut.models import bin_indices as _bin_indices, cost_table as _cost_table

    class Histogram:
        def fit(self, values, mask):
            self.index = _bin_indices(values, 16)
            counts = np.bincount(self.index[mask], minlength=16 ** 3).astype(float)
            self.table = _cost_table(counts, (16, 16, 16))
            return self

        def costs(self, values):
            return self.table[self.index]

    rng = np.random.default_rng(6)
    image, truth = colour_image(rng)
    seeds = start_seeds(truth.shape)
    plugged = Segmenter(image, device="cpu", model=(Histogram(), Histogram()))
    built_in = Segmenter(image, device="cpu", model="histogram")
    for _ in range(5):
        random_stroke(rng, seeds, truth)
        np.testing.assert_array_equal(plugged.update(seeds), built_in.update(seeds))


@pytest.mark.gpu
def test_cuda_segmenter_random_strokes_regions_lam_and_cancel():
    """GPU: region edits, lam changes and a cancelled solve all end in fresh-solve answers."""
    rng = np.random.default_rng(7)
    image, truth = colour_image(rng, (120, 160))
    seeds = start_seeds(truth.shape)
    session = Segmenter(image, device="cuda", model="histogram")  # build_network's
    session.update(seeds)
    for step in range(30):
        region = random_stroke(rng, seeds, truth)
        if step % 10 == 5:
            session.set_lam([3.0, 25.0][step // 10 % 2])
        if step % 7 == 3:  # cancelled before its first batch: the next update continues
            with pytest.raises(graphcut.solver.SolveCancelled):
                session.update(seeds, region=region, cancel=lambda: True)
            continue
        mask = session.update(seeds, region=region)
        fresh = min_cut(build_network(image, seeds, lam=session.lam), device="cpu")
        np.testing.assert_array_equal(mask, fresh.source_side, err_msg=f"step {step}")
        assert session.last_result.flow == fresh.flow


@pytest.mark.gpu
@pytest.mark.parametrize("ndim", [2, 3])
def test_cuda_segmenter_lam_changes_keep_the_flow_and_equal_fresh_segmentations(ndim):
    """GPU: set_lam keeps the solver's flow (GridState.change_nlinks) instead of restarting;
    lam changes (up, down, to zero and back) and strokes interleaved, every mask and flow equal
    to a fresh graphcut.segment on the CPU."""
    rng = np.random.default_rng(23 + ndim)
    if ndim == 2:
        image, truth = colour_image(rng, (90, 130))
        options = {}
    else:
        shape = (10, 24, 30)
        z, y, x = np.indices(shape)
        truth = ((z - 5) / 4) ** 2 + ((y - 12) / 7) ** 2 + ((x - 15) / 9) ** 2 < 1
        image = np.clip(np.where(truth, 0.65, 0.35) + rng.normal(0, 0.1, shape), 0, 1)
        options = {"channel_axis": None}
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[np.unravel_index(np.flatnonzero(truth)[::97], truth.shape)] = 1
    seeds[np.unravel_index(np.flatnonzero(~truth)[::89], truth.shape)] = 2
    options["model"] = "histogram"  # exact integers on both devices (learned: a tolerance)
    session = Segmenter(image, lam=10.0, device="cuda", **options)
    session.update(seeds)
    changes = []
    for step, lam in enumerate([30.0, 2.0, 2.0, 0.0, 10.0, 60.0, 5.0, 12.5]):
        if step % 3 == 1:
            edited = tuple(slice(int(i), int(i) + 3) for i in rng.integers(0, 7, size=ndim))
            seeds[edited] = np.where(truth[edited], 1, 2)
        session.set_lam(lam)
        mask = session.update(seeds)
        expected, result = segment(image, seeds, lam=lam, device="cpu", return_result=True,
                                   **options)
        np.testing.assert_array_equal(mask, expected, err_msg=f"step {step}, lam {lam}")
        assert session.last_result.flow == result.flow
        assert session.last_result.stats["incremental"]
        changes.append(session.last_result.stats["nlink_change"])
    assert changes[2] is None  # the same lam again: nothing to change
    assert changes.count("kept") >= 6


@pytest.mark.gpu
def test_cuda_capacity_kernel_equals_numpy():
    cupy = pytest.importorskip("cupy")
    rng = np.random.default_rng(8)
    image, truth = colour_image(rng)
    seeds = start_seeds(truth.shape)
    seeds[truth & (rng.random(truth.shape) < 0.1)] = 1
    seeds[~truth & (rng.random(truth.shape) < 0.1)] = 2
    histograms = SeedHistograms(image_as_float(image))
    histograms.fit(seeds)
    network = build_network(image, seeds)
    pins = seed_pins((network.right, network.down))
    tables = histograms.capacity_tables()
    on_host = capacities_from_tables(histograms.index, seeds, pins, *tables)
    gpu_histograms = SeedHistograms(image_as_float(cupy.asarray(image)))
    on_gpu = capacities_from_tables(gpu_histograms.index, cupy.asarray(seeds),
                                    cupy.asarray(pins), *(cupy.asarray(t) for t in tables))
    for a, b in zip(on_host, on_gpu):
        np.testing.assert_array_equal(a, b.get())


# ----- transfer formats -----------------------------------------------------------------------
def test_mask_updates_carry_only_the_changed_rectangle():
    rng = np.random.default_rng(9)
    old = rng.random((37, 53)) < 0.5
    new = old.copy()
    new[10:14, 20:31] ^= True
    update = MaskUpdate.between(old, new)
    assert update.region == (10, 14, 20, 31) and len(update.bits) == (4 * 11 + 7) // 8
    copy = old.copy()
    rows, cols = update.apply(copy)
    np.testing.assert_array_equal(copy, new)
    assert (rows, cols) == (slice(10, 14), slice(20, 31))
    assert MaskUpdate.between(new, new).region is None
    whole = MaskUpdate.between(None, new)
    target = np.zeros_like(new)
    whole.apply(target)
    np.testing.assert_array_equal(target, new)


def test_shared_array_is_seen_by_an_attached_view_and_freed_by_its_owner():
    image = np.arange(24, dtype=np.uint16).reshape(2, 3, 4)
    shared = SharedArray(image)
    attached = AttachedArray(shared.ref)
    np.testing.assert_array_equal(attached.array, image)
    assert not attached.array.flags.writeable
    attached.close()
    shared.close()
    with pytest.raises(FileNotFoundError):
        AttachedArray(shared.ref)


# ----- the solver and its server -------------------------------------------------------------
def test_solver_answers_deltas_with_mask_updates():
    rng = np.random.default_rng(10)
    image, truth = colour_image(rng)
    seeds = start_seeds(truth.shape)
    solver = Solver()
    assert solver.open(Session(1, image, 10.0, "cpu")).error is None
    mask = np.zeros(truth.shape, bool)
    job = Job(1, 1, 10.0, SeedDelta(None, seeds.copy()))
    for number in range(1, 12):
        outcome = solver.run(job)
        assert outcome.error is None and outcome.factor == 1
        outcome.update.apply(mask)
        np.testing.assert_array_equal(mask, segment(image, seeds, lam=10.0, device="cpu"))
        rows, cols = random_stroke(rng, seeds, truth)
        job = Job(number + 1, 1, 10.0, SeedDelta((rows.start, rows.stop, cols.start, cols.stop),
                                                 seeds[rows, cols].copy()))
    other = solver.run(Job(99, 2, 10.0, SeedDelta(None, seeds)))
    assert other.error and "image 2" in other.error
    empty = Solver()
    empty.open(Session(3, image, 10.0, "cpu"))
    failed = empty.run(Job(1, 3, 10.0, SeedDelta(None, np.zeros_like(seeds))))
    assert failed.mask is None and "foreground" in failed.error


def test_server_solves_only_the_newest_waiting_job():
    """Jobs queued behind a running one are taken (their seeds count) but only the newest is
    solved; the others come back cancelled."""
    rng = np.random.default_rng(11)
    image, truth = colour_image(rng)
    replies = []
    server = Server(replies.append)
    seeds = start_seeds(truth.shape)
    server.put(("open", Session(1, image, 10.0, "cpu")))
    server.put(("solve", Job(1, 1, 10.0, SeedDelta(None, seeds.copy()))))
    for number in range(2, 7):
        rows, cols = random_stroke(rng, seeds, truth)
        server.put(("solve", Job(number, 1, 10.0, SeedDelta(
            (rows.start, rows.stop, cols.start, cols.stop), seeds[rows, cols].copy()))))
    thread = threading.Thread(target=server.run)
    thread.start()  # everything is queued already
    deadline = time.monotonic() + 60
    while len(replies) < 7 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.put(None)
    thread.join()
    assert isinstance(replies[0], Opened) and replies[0].error is None
    outcomes = replies[1:]
    assert [o.number for o in outcomes] == [1, 2, 3, 4, 5, 6]
    assert [o.cancelled for o in outcomes] == [True] * 5 + [False]
    mask = np.zeros(truth.shape, bool)
    outcomes[-1].update.apply(mask)
    np.testing.assert_array_equal(mask, segment(image, seeds, device="cpu"))


def test_a_newer_job_raises_the_running_solves_cancel_flag():
    """The server hands each solve a cancel callable that turns True when a newer job
    arrives (what stops a GPU solve between launch batches)."""

    class SlowSolver(Solver):
        def solve(self, job, cancel=None):
            deadline = time.monotonic() + 30
            while job.number == 1 and not cancel():
                assert time.monotonic() < deadline, "the cancel flag never rose"
                time.sleep(0.005)
            cancelled = job.number == 1
            return Outcome(job.number, job.token, cancelled=cancelled)

    image = np.zeros((8, 8), np.uint8)
    replies = []
    server = Server(replies.append, SlowSolver())
    thread = threading.Thread(target=server.run)
    thread.start()
    server.put(("open", Session(1, image, 10.0, "cpu")))
    server.put(("solve", Job(1, 1, 10.0, SeedDelta(None, np.zeros((8, 8), np.uint8)))))
    time.sleep(0.2)  # job 1 is solving
    server.put(("ping", None))  # not a job: does not cancel (answered after the solve)
    time.sleep(0.2)
    assert len(replies) == 1  # only the Opened: job 1 still runs
    server.put(("solve", Job(2, 1, 10.0, SeedDelta((0, 0, 0, 0), np.zeros((0, 0), np.uint8)))))
    deadline = time.monotonic() + 30
    while len(replies) < 4 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.put(None)
    thread.join()
    assert [getattr(r, "number", r) for r in replies[1:]] == [1, "ready", 2]
    outcomes = [r for r in replies if isinstance(r, Outcome)]
    assert [(o.number, o.cancelled) for o in outcomes] == [(1, True), (2, False)]


def test_preview_solver_answers_on_a_reduced_grid():
    rng = np.random.default_rng(12)
    image, truth = colour_image(rng, (90, 130))
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[40:50, 60:70] = 1
    seeds[:4, :] = 2
    solver = Solver()
    assert solver.open(Session(1, image, 10.0, "cpu", preview_factor=4)).error is None
    outcome = solver.run(Job(1, 1, 10.0, SeedDelta(None, seeds)))
    assert outcome.factor == 4 and outcome.update.shape == (23, 33)
    coarse = np.zeros(outcome.update.shape, bool)
    outcome.update.apply(coarse)
    upscaled = np.repeat(np.repeat(coarse, 4, 0), 4, 1)[:90, :130]
    assert (upscaled == truth).mean() > 0.95
    assert preview_factor((3000, 4000)) == 7 and preview_factor((100, 100)) == 1


# ----- the controller --------------------------------------------------------------------------
class Recorder(Listener):
    def __init__(self):
        self.outcomes, self.errors, self.backends = [], [], []

    def on_outcome(self, outcome):
        self.outcomes.append(outcome)

    def on_error(self, message, details=""):
        self.errors.append(message)

    def on_backend(self, backend, device_name):
        self.backends.append(backend)


def wait(controller, post, timeout=180.0):
    """Run what the controller posts until it is idle; fail after ``timeout`` seconds (a
    hang). Generous: on a fresh GPU machine the first job compiles every kernel (CuPy's disk
    cache is empty), which took about a minute on the slower H200 machines."""
    deadline = time.monotonic() + timeout
    while controller.is_busy():
        assert time.monotonic() < deadline, "the controller is still busy"
        post.run_pending(0.05)
    post.run_pending(0.01)


@pytest.mark.parametrize("device,use_process", [
    ("cpu", False), ("cpu", True),
    pytest.param("cuda", True, marks=pytest.mark.gpu)])
def test_controller_random_strokes_end_in_fresh_solves(device, use_process):
    if device == "cuda" and not graphcut.solver.cuda_status()[0]:
        pytest.skip(graphcut.solver.cuda_status()[1])
    rng = np.random.default_rng(13)
    image, truth = colour_image(rng)
    post, recorder = PostQueue(), Recorder()
    controller = SegmentationController(recorder, post=post, device=device,
                                        use_process=use_process, preview=False)
    try:
        controller.open_image(image)
        seeds = np.zeros(truth.shape, np.uint8)
        controller.set_seeds(seeds)
        assert controller.request() is None  # no seeds yet
        seeds[:] = start_seeds(truth.shape)
        controller.set_seeds(seeds)
        for step in range(12):
            if step % 4 == 3:
                controller.set_lam([3.0, 20.0][step % 2])
            controller.set_seeds(seeds, random_stroke(rng, seeds, truth))
            number = controller.request()
            if step % 3:
                continue  # strokes in quick succession: only the last one must be answered
            wait(controller, post)
            assert recorder.outcomes[-1].number == number
            expected = segment(image, seeds, lam=controller.lam, device="cpu")
            np.testing.assert_array_equal(controller.mask(), expected, err_msg=f"step {step}")
        wait(controller, post)
        np.testing.assert_array_equal(controller.mask(),
                                      segment(image, seeds, lam=controller.lam, device="cpu"))
        assert recorder.errors == [] and set(recorder.backends) == {device}
    finally:
        controller.close()


def previewing_controller():
    """(controller, post queue, recorder): an in-process CPU controller with previews on a
    reduced grid of 5000 pixels, whose exact solver answers 0.3 s late, as on a large image."""
    post, recorder = PostQueue(), Recorder()
    controller = SegmentationController(recorder, post=post, device="cpu", use_process=False,
                                        preview=True, preview_pixels=5000)
    deliver = controller._exact.client._deliver
    controller._exact.client._deliver = lambda reply: (time.sleep(0.3), deliver(reply))
    return controller, post, recorder


def test_controller_preview_is_replaced_by_the_exact_mask():
    rng = np.random.default_rng(14)
    image, truth = colour_image(rng, (200, 260))
    controller, post, recorder = previewing_controller()
    try:
        controller.open_image(image)
        seeds = np.zeros(truth.shape, np.uint8)
        seeds[95:105, 120:140] = 1
        seeds[:5, :] = 2
        controller.set_seeds(seeds)
        number = controller.request()
        wait(controller, post)
        kinds = [(o.number, o.factor) for o in recorder.outcomes]
        assert (number, 1) == kinds[-1]  # the exact mask comes last and ends the request
        assert any(factor > 1 for _, factor in kinds)  # a preview was shown before it
        np.testing.assert_array_equal(controller.mask(), segment(image, seeds, device="cpu"))
    finally:
        controller.close()


def test_controller_previews_the_learned_model_with_a_box():
    """A box with the learned model is previewed too (on the CPU previews were the histogram's
    only), and the exact mask that follows is segment()'s with the same options."""
    from graphcut.gui.options import SegmentOptions
    rng = np.random.default_rng(16)
    image, truth = colour_image(rng, (200, 260))
    rows, cols = np.nonzero(truth)
    box = (int(rows.min()) - 8, int(cols.min()) - 8, int(rows.max()) + 9, int(cols.max()) + 9)
    controller, post, recorder = previewing_controller()
    try:
        controller.open_image(image)
        options = SegmentOptions(model="learned", box=box)
        controller.set_options(options)
        seeds = np.zeros(truth.shape, np.uint8)
        controller.set_seeds(seeds)
        number = controller.request()
        wait(controller, post)
        kinds = [(o.number, o.factor) for o in recorder.outcomes]
        assert (number, 1) == kinds[-1] and any(factor > 1 for _, factor in kinds)
        assert recorder.errors == []
        expected = segment(image, seeds, device="cpu", **options.segment_kwargs(controller.lam))
        np.testing.assert_array_equal(controller.mask(), expected)
    finally:
        controller.close()


def test_a_lambda_change_ends_a_long_cpu_solve_in_another_process():
    """A PyMaxflow solve cannot be interrupted: the controller ends its process when the new
    job cannot reuse the solve (lambda changed) and the solve has longer to run than a new
    process takes to start. Here the estimates say so, and the answer is still exact."""
    rng = np.random.default_rng(15)
    image, truth = colour_image(rng)
    post, recorder = PostQueue(), Recorder()
    controller = SegmentationController(recorder, post=post, device="cpu", preview=False)
    try:
        controller.open_image(image)
        seeds = start_seeds(truth.shape)
        controller.set_seeds(seeds)
        controller.request()
        wait(controller, post)
        exact = controller._exact
        killed = threading.Event()
        kill = exact.client.kill
        exact.client.kill = lambda: (killed.set(), kill())
        random_stroke(rng, seeds, truth)
        controller.set_seeds(seeds)
        controller.request()
        # "this solve takes long" (the histogram's incremental estimates, the pipeline's)
        exact.incremental_seconds = exact.fresh_seconds = exact.pipeline_seconds = 1e6
        controller.set_lam(4.0)
        controller.request()
        assert killed.is_set()
        wait(controller, post)
        np.testing.assert_array_equal(controller.mask(),
                                      segment(image, seeds, lam=4.0, device="cpu"))
        assert recorder.errors == []
    finally:
        controller.close()


def test_spare_cpu_solver_takes_strokes_made_while_the_other_is_busy():
    """With ``spare=True`` a second exact solver process holds the image; a request made while
    the first solves goes to it, the stale answer is dropped, and every shown mask is exact,
    through bursts and lambda changes."""
    rng = np.random.default_rng(16)
    image, truth = colour_image(rng)
    post, recorder = PostQueue(), Recorder()
    controller = SegmentationController(recorder, post=post, device="cpu", preview=False,
                                        spare=True)
    try:
        controller.open_image(image)
        seeds = start_seeds(truth.shape)
        controller.set_seeds(seeds)
        controller.request()
        wait(controller, post)
        deadline = time.monotonic() + 60
        while controller._spare is None or controller._spare.opened != controller._token \
                or controller._spare.outstanding:  # opened, then caught up in the background
            assert time.monotonic() < deadline, "the spare solver did not open"
            post.run_pending(0.05)
        to_spare = set()  # requests (not catch-ups) sent to the spare
        send = controller._send_job

        def record(channel, number, *rest):
            if channel is controller._spare and number not in channel.quiet:
                to_spare.add(number)
            send(channel, number, *rest)

        controller._send_job = record
        answered_by = []
        for step in range(8):
            if step % 4 == 3:
                controller.set_lam([3.0, 20.0][step % 2])
            for _ in range(1 + step % 3):  # bursts of 1 to 3 strokes
                controller.set_seeds(seeds, random_stroke(rng, seeds, truth))
                number = controller.request()
            wait(controller, post)
            final = recorder.outcomes[-1]
            assert final.number == number
            answered_by.append(number in to_spare)
            np.testing.assert_array_equal(
                controller.mask(), segment(image, seeds, lam=controller.lam, device="cpu"),
                err_msg=f"step {step}")
        assert any(answered_by) and not all(answered_by) and recorder.errors == []
        spare = controller._spare.client._process.pid
        assert os.getpriority(os.PRIO_PROCESS, spare) == \
            min(19, os.getpriority(os.PRIO_PROCESS, 0) + SOLVER_NICENESS + SPARE_NICENESS)
        exact = controller._exact.client._process.pid
        assert os.getpriority(os.PRIO_PROCESS, exact) == \
            min(19, os.getpriority(os.PRIO_PROCESS, 0) + SOLVER_NICENESS)
        assert [o.number for o in recorder.outcomes] == sorted(o.number for o in
                                                                recorder.outcomes)
    finally:
        controller.close()


def test_outcome_defaults_are_harmless():
    outcome = Outcome(1, 1)
    assert outcome.mask is None and not outcome.cancelled and outcome.factor == 1


def test_seed_canvas_edits_match_a_full_copy_model():
    """The canvas compares only what a stroke painted; its undo steps must still be exactly
    the changes (checked against snapshots of the whole array)."""
    from graphcut.gui.strokes import SeedCanvas
    rng = np.random.default_rng(16)
    canvas = SeedCanvas((40, 50))
    history = [canvas.labels.copy()]
    for step in range(60):
        action = rng.choice(["paint", "paint", "paint", "undo", "redo", "clear", "replace"])
        if action == "undo":
            if canvas.undo() is not None:
                history.pop()
            np.testing.assert_array_equal(canvas.labels, history[-1])
            continue
        if action == "redo":
            region = canvas.redo()
            if region is not None:
                history.append(canvas.labels.copy())
            continue
        canvas.begin_edit()
        if action == "paint":
            for _ in range(int(rng.integers(1, 4))):
                start, end = rng.uniform(-5, 55, 2), rng.uniform(-5, 55, 2)
                canvas.paint(start, end, int(rng.integers(0, 3)), float(rng.uniform(0, 4)))
        elif action == "clear":
            canvas.clear()
        else:
            canvas.replace(rng.integers(0, 3, (40, 50)).astype(np.uint8))
        changed = canvas.end_edit()
        assert changed == (not np.array_equal(canvas.labels, history[-1]))
        if changed:
            history.append(canvas.labels.copy())
    while canvas.undo() is not None:
        history.pop()
        np.testing.assert_array_equal(canvas.labels, history[-1])
    assert len(history) == 1 and not canvas.labels.any()


def test_segmenter_volume_edits_with_regions_equal_fresh_solves():
    """Volumes (6-connected, anisotropic spacing) take the same incremental path."""
    rng = np.random.default_rng(17)
    shape = (12, 20, 24)
    z, y, x = np.indices(shape)
    inside = ((z - 6) / 4) ** 2 + ((y - 10) / 6) ** 2 + ((x - 12) / 7) ** 2 < 1
    volume = np.clip(np.where(inside, 0.65, 0.35) + rng.normal(0, 0.1, shape), 0, 1)
    seeds = np.zeros(shape, np.uint8)
    seeds[6, 10, 10:14] = 1
    seeds[0] = 2
    session = Segmenter(volume, channel_axis=None, device="cpu", spacing=(2, 1, 1))
    session.update(seeds)
    for step in range(8):
        zc, yc, xc = (int(rng.integers(0, n - 3)) for n in shape)
        region = np.s_[zc:zc + 3, yc:yc + 2, xc:xc + 3]
        seeds[region] = int(rng.integers(0, 3))
        seeds[6, 10, 12] = 1
        mask = session.update(seeds, region=(slice(0, None),) * 3 if step % 2 else
                              (slice(zc, max(zc + 3, 7)), slice(min(yc, 10), max(yc + 2, 11)),
                               slice(min(xc, 12), max(xc + 3, 13))))
        fresh, result = segment(volume, seeds, device="cpu", spacing=(2, 1, 1),
                                return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow
    session.set_lam(3.0)
    np.testing.assert_array_equal(session.update(seeds), segment(
        volume, seeds, device="cpu", spacing=(2, 1, 1), lam=3.0))
