"""A live GMM's strokes alone: the coarse loop settles (``COARSE_SETTLED``) and, with
``Segmenter.warm_strokes``, starts from the previous update's coarse labels and mixtures.
Off (the default) every answer equals a fresh segment()'s; on, every answer is still an exact
minimum cut of the network its model state gives (checked against a fresh PyMaxflow cut), obeys
the seeds, and stays close to the fresh answer."""

import copy
import types

import numpy as np
import pytest

import graphcut
from graphcut._arrays import to_host
from graphcut.models import GMM, GMMModel
from graphcut.segmentation import _coarse
from graphcut.segmentation._coarse import CoarseStart, coarse_factor
from graphcut.segmentation._grabcut import iterate_binary
from graphcut.segmentation._problems import binary_problem
from graphcut.solver import GridNetwork, cut_capacity, min_cut

WARM = GMM(core=0.4, warm=True)
SHAPE = (200, 400)  # strokes alone run on a coarse grid: f = 2


def _scene(shape=SHAPE, seed=0):
    """A two-coloured object (orange left, green right) on a noisy background with blobs of
    both of the object's colours (background too: colour alone does not tell them apart)."""
    rng = np.random.default_rng(seed)
    h, w = shape
    image = np.clip(rng.normal([0.3, 0.35, 0.5], 0.12, (h, w, 3)), 0, 1)
    truth = np.zeros((h, w), bool)
    truth[h // 4:3 * h // 4, w // 8:w // 2] = True
    green = np.zeros_like(truth)
    green[h // 4:3 * h // 4, w // 3:w // 2] = True
    blobs = [np.zeros_like(truth), np.zeros_like(truth)]
    blobs[0][h // 3:2 * h // 3, 3 * w // 4:7 * w // 8] = True
    blobs[1][h // 10:h // 5, 5 * w // 8:3 * w // 4] = True
    for where, colour in ((truth, [0.8, 0.5, 0.2]), (green, [0.3, 0.7, 0.3]),
                          (blobs[0], [0.75, 0.5, 0.25]), (blobs[1], [0.3, 0.65, 0.35])):
        image[where] = np.clip(rng.normal(colour, 0.12, (int(where.sum()), 3)), 0, 1)
    return (image * 255).astype(np.uint8), truth


def _correcting_strokes(image, truth, count):
    """The first two strokes, then ``count`` strokes each on a pixel the fresh answer gets
    wrong (the most interior one), labelled by the truth: seeds after each stroke."""
    from scipy import ndimage

    h, w = truth.shape
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[h // 2 - 2:h // 2 + 3, w // 4 - 2:w // 4 + 3] = 1
    seeds[5:10, 5:60] = 2
    out = [seeds.copy()]
    for _ in range(count):
        mask = graphcut.segment(image, seeds, model=WARM, device="cpu")
        wrong = mask != truth
        if not wrong.any():
            break
        depth = ndimage.distance_transform_edt(wrong)
        r, c = np.unravel_index(int(np.argmax(depth)), wrong.shape)
        seeds[max(r - 2, 0):r + 3, max(c - 2, 0):c + 3] = 1 if truth[r, c] else 2
        out.append(seeds.copy())
    return out


@pytest.fixture(scope="module")
def scene():
    image, truth = _scene()
    return image, truth, _correcting_strokes(image, truth, 4)


def _recording(session):
    """Record the terminal capacities of the session's last full-size cut."""
    session.prepare()
    solver = session._solver
    solve = solver.solve
    seen = {}

    def recorded(source, sink, **kwargs):
        seen["network"] = (to_host(source), to_host(sink))
        return solve(source, sink, **kwargs)
    solver.solve = recorded
    return seen


def test_the_coarse_grid_is_used_here():
    assert coarse_factor(SHAPE) == 2


def test_off_by_default_every_answer_equals_a_fresh_segment(scene):
    image, _, steps = scene
    session = graphcut.Segmenter(image, model=WARM, device="cpu")
    assert session.warm_strokes is False
    for step, seeds in enumerate(steps):
        mask = session.update(seeds)
        fresh, result = graphcut.segment(image, seeds, model=WARM, device="cpu",
                                         return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_warm_strokes_start_from_the_last_update_and_cut_exactly(scene, monkeypatch, device):
    """On: the first answer is the fresh one (nothing to start from); each later one is the
    exact minimum cut of its own network (a fresh PyMaxflow cut of the recorded capacities
    gives the same flow, and the mask's cut capacity is that flow) and obeys the seeds. (It
    may end far from the fresh answer, and need more iterations: a start whose object is
    missing keeps it missing; why the app leaves it off.)"""
    image, truth, steps = scene
    runs = []
    iterate = _coarse.iterate_binary

    def counted(*args, **kwargs):
        run = iterate(*args, **kwargs)
        runs.append((kwargs["start_mask"] is not None, run.iterations))
        return run
    monkeypatch.setattr(_coarse, "iterate_binary", counted)
    session = graphcut.Segmenter(image, model=WARM, device=device)
    session.warm_strokes = True
    seen = _recording(session)
    for step, seeds in enumerate(steps):
        mask = to_host(session.update(seeds))
        runs_before = len(runs)
        fresh = graphcut.segment(image, seeds, model=WARM, device="cpu")
        del runs[runs_before:]  # the fresh segment's loop
        warm_start = runs[-1][0]
        assert warm_start == (step > 0)
        if step == 0 and device == "cpu":
            np.testing.assert_array_equal(mask, fresh)
        source, sink = seen["network"]
        network = GridNetwork(source, sink, forward=tuple(to_host(n)
                                                          for n in session._nlinks[::-1]))
        reference = min_cut(network, device="cpu")
        assert session.last_result.flow == reference.flow, f"step {step}"
        assert cut_capacity(network, mask) == reference.flow
        assert mask[seeds == 1].all() and not mask[seeds == 2].any()


def test_a_new_lam_starts_over(scene):
    """The kept start belongs to the n-links it was cut with: after set_lam the next answer
    is a fresh segment's at the new lam."""
    image, _, steps = scene
    session = graphcut.Segmenter(image, model=WARM, device="cpu")
    session.warm_strokes = True
    session.update(steps[0])
    session.set_lam(20)
    mask = session.update(steps[1])
    fresh = graphcut.segment(image, steps[1], model=WARM, lam=20, device="cpu")
    np.testing.assert_array_equal(mask, fresh)


def test_the_start_pins_the_new_seeds_and_needs_both_labels():
    start = CoarseStart()
    nlinks = (np.zeros((3, 2), np.int32), np.zeros((2, 3), np.int32))
    binary = np.array([[0, 1, 0], [2, 0, 0], [0, 0, 0]], np.uint8)
    assert start.mask_for(nlinks, binary, np) is None  # nothing kept yet
    model = types.SimpleNamespace(_fitted=[GMMModel(1), GMMModel(1)])
    start.keep(nlinks, np.array([[1, 0, 0], [1, 1, 0], [0, 0, 0]], bool), model)
    mask = start.mask_for(nlinks, binary, np)
    np.testing.assert_array_equal(mask, [[1, 1, 0], [0, 1, 0], [0, 0, 0]])
    other = (nlinks[0].copy(), nlinks[1])
    assert start.mask_for(other, binary, np) is None  # other n-links: another lam
    start.keep(nlinks, np.ones((3, 3), bool), model)
    assert start.mask_for(nlinks, np.zeros((3, 3), np.uint8), np) is None  # no background


def _small_problem():
    image, truth = _scene((30, 40), seed=5)
    model = copy.deepcopy(WARM)
    values = model.features(image.astype(float) / 255)
    constraints = np.zeros(truth.shape, np.uint8)
    constraints[14:17, 8:11], constraints[0:2, :] = 1, 2
    nlinks = (np.full((30, 39), 40, np.int32), np.full((29, 40), 40, np.int32))
    model.fit(values, [constraints == 1, constraints == 2])
    return values, nlinks, constraints, model, truth


def _fresh_cut(network):
    return min_cut(network, device="cpu")


def test_a_warm_start_is_one_refit_on_the_start_then_a_cut():
    values, nlinks, constraints, model, truth = _small_problem()
    reference_model = copy.deepcopy(model)
    start = truth | (constraints == 1)
    run = iterate_binary(values, nlinks, constraints, model, None, iterations=0, tol=0,
                         scale=100, cut=_fresh_cut, start_mask=start)
    reference_model.refit(values, [start, ~start])
    costs = reference_model.costs(values)
    problem = binary_problem(costs[0], costs[1], nlinks, constraints, scale=100)
    reference = min_cut(problem.network, device="cpu")
    np.testing.assert_array_equal(run.labels, reference.source_side)
    assert run.flow == reference.flow and run.iterations == 0


def test_settled_ends_the_iterations_after_a_small_change():
    values, nlinks, constraints, model, _ = _small_problem()
    samples = (constraints == 1, constraints == 2)
    kept = copy.deepcopy(model)
    every = iterate_binary(values, nlinks, constraints, model, samples, iterations=5, tol=0,
                           scale=100, cut=_fresh_cut)
    settled = iterate_binary(values, nlinks, constraints, kept, samples, iterations=5, tol=0,
                             scale=100, cut=_fresh_cut, settled=1.0)
    assert every.iterations >= 2  # else this test shows nothing
    assert settled.iterations == 1
    assert settled.history == every.history[:2]
