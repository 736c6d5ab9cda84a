"""The box's object mixture without the Gaussians the background explains as well
(``GMM(prune=...)``, graphcut/segmentation/_prune.py; auto's colour model).

Oracles: ground truth of a drawn ring whose hole shows a background colour (the box's core
swallows the hole, GrabCut's iterations keep it: the scissors' handles of the photo
cut-outs), medians computed by ``statistics.median`` for the choice of Gaussians, and a fresh
``segment`` for the Segmenter's answers after strokes.
"""

import statistics

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, GMMModel
from graphcut.models._auto import COLOUR_MODEL
from graphcut.segmentation._coarse import coarse_factor
from graphcut.segmentation._prune import PRUNE_WEIGHT, shared_components, without_components

COLOUR_MODEL_GMM = GMM(**COLOUR_MODEL)
STRIPES = [(0.80, 0.62, 0.50), (0.25, 0.35, 0.60), (0.30, 0.55, 0.30), (0.55, 0.55, 0.55)]


def _ring(shape, seed, hole=True, inner=0.12):
    """Four background stripes and a pink ring (radii 0.25 and ``inner`` of the height)
    whose hole shows the first stripe's colour; noise 0.03. Returns (image uint8, truth,
    box)."""
    h, w = shape
    rng = np.random.default_rng(seed)
    values = np.zeros((h, w, 3))
    for i, colour in enumerate(STRIPES):
        values[:, i * w // 4:(i + 1) * w // 4] = colour
    yy, xx = np.mgrid[:h, :w]
    radius = np.hypot(yy - h // 2, xx - w // 2)
    outer, inner = 0.25 * h, inner * h
    values[radius < outer] = (0.90, 0.30, 0.60)
    truth = radius < outer
    if hole:
        values[radius < inner] = STRIPES[0]
        truth &= radius >= inner
    values = np.clip(values + rng.normal(0, 0.03, values.shape), 0, 1)
    margin = int(0.1 * h)
    box = (int(h // 2 - outer - margin), int(w // 2 - outer - margin),
           int(h // 2 + outer + margin + 1), int(w // 2 + outer + margin + 1))
    return (values * 255).astype(np.uint8), truth, box


def _iou(mask, truth):
    return float((mask & truth).sum() / (mask | truth).sum())


def _model(prune, texture=4):
    """Auto's colour model with ``prune``, and the local-contrast channel of radius
    ``texture`` (4, the GMM's default: the trap pruning was made for, GrabCut keeping the
    hole; auto's colour model reads the colours alone since the fourteenth session)."""
    return GMM(**{**COLOUR_MODEL, "prune": prune, "texture": texture})


def test_auto_prunes_and_plain_gmm_does_not():
    assert COLOUR_MODEL["prune"] == 1.0
    assert GMM().prune == 0.0
    assert "prune" not in GMM().settings()


@pytest.mark.parametrize("shape, inner", [((120, 160), 0.12), ((300, 400), 0.14)])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_hole_of_a_background_colour_leaves_the_object(shape, inner, seed):
    """The small image iterates at full size, the larger one on the coarse grid. A limit
    (not tested): on the small image a hole of 0.14 of the height gets so large a share of
    the object's mixture that the object explains it better (margin above 1 nat), and it
    stays."""
    image, truth, box = _ring(shape, seed, inner=inner)
    assert coarse_factor(shape) == (1 if shape == (120, 160) else 2)  # both paths
    before = np.asarray(graphcut.segment(image, box=box, model=_model(0.0), device="cpu"))
    after = np.asarray(graphcut.segment(image, box=box, model=_model(1.0), device="cpu"))
    hole = np.zeros_like(truth)
    h, w = shape
    yy, xx = np.mgrid[:h, :w]
    hole[np.hypot(yy - h // 2, xx - w // 2) < inner * h - 2] = True
    assert before[hole].mean() > 0.9          # GrabCut's iterations keep the hole
    assert _iou(before, truth) < 0.85
    assert not after[hole].any()               # dropped
    assert _iou(after, truth) > 0.97
    auto = np.asarray(graphcut.segment(image, box=box, model=COLOUR_MODEL_GMM, device="cpu"))
    assert not auto[hole].any() and _iou(auto, truth) > 0.97  # auto's colour model as it is


def test_nothing_is_shared_without_a_hole():
    """A solid ring (no background inside it): the mask is the one without pruning."""
    image, truth, box = _ring((120, 160), 3, hole=False)
    before = graphcut.segment(image, box=box, model=_model(0.0), device="cpu")
    after = graphcut.segment(image, box=box, model=_model(1.0), device="cpu")
    np.testing.assert_array_equal(before, after)
    assert _iou(after, truth) > 0.97


@pytest.mark.parametrize("seed", range(20))
def test_shared_components_against_medians_of_lists(seed):
    rng = np.random.default_rng(seed)
    n, k = 200, int(rng.integers(2, 6))
    responsible = rng.integers(0, k, n)
    centre = rng.choice([-1.0, 0.5, 3.0, 20.0], k)
    margins = centre[responsible] + rng.normal(0, 1, n)
    mask = rng.random(n) < 0.7
    weights = rng.dirichlet(np.ones(k))
    threshold = float(rng.choice([0.5, 1.0, 2.0]))
    shared = []
    for j in range(k):
        mine = [float(m) for m, r, inside in zip(margins, responsible, mask)
                if inside and r == j]
        if mine and statistics.median(mine) < threshold:
            shared.append(j)
    expected = [] if (len(shared) == k or sum(weights[shared]) < PRUNE_WEIGHT) else shared
    assert shared_components(margins, responsible, mask, weights, threshold) == expected


def test_without_components_keeps_the_others_renormalised():
    rng = np.random.default_rng(0)
    values = rng.random((20, 20, 3))
    mixture = GMMModel(4).fit(values, np.ones((20, 20), bool))
    weights, means = mixture.weights.copy(), mixture.means.copy()
    without_components(mixture, [1, 3])
    np.testing.assert_allclose(mixture.weights, weights[[0, 2]] / weights[[0, 2]].sum())
    np.testing.assert_array_equal(mixture.means, means[[0, 2]])
    assert mixture.costs(values).shape == (20, 20)


def test_segmenter_after_pruning_equals_fresh_segments():
    image, truth, box = _ring((300, 400), 4)
    model = _model(1.0)
    session = graphcut.Segmenter(image, model=model, device="cpu")
    mask = session.update(None, box=box)
    np.testing.assert_array_equal(mask, graphcut.segment(image, box=box, model=_model(1.0),
                                                         device="cpu"))
    seeds = np.zeros(truth.shape, np.uint8)
    h, w = truth.shape
    for step, (row, col, label) in enumerate([(h // 2, w // 2 + int(0.18 * h), 1),
                                              (h // 2, w // 2, 2),
                                              (h // 2 - int(0.18 * h), w // 2, 1)]):
        seeds[row - 3:row + 4, col - 3:col + 4] = label
        mask = session.update(seeds, box=box)
        fresh, result = graphcut.segment(image, seeds, box=box, model=_model(1.0),
                                         device="cpu", return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow
        assert mask[seeds == 1].all() and not mask[seeds == 2].any()


@pytest.mark.gpu
def test_the_gpu_prunes_as_the_cpu():
    """The box (coarse loop, the medians of the margins on the device) and a stroke after
    it on the GPU give the CPU's masks."""
    image, truth, box = _ring((300, 400), 0, inner=0.14)
    session = graphcut.Segmenter(image, model=_model(1.0), device="cuda")
    mask = session.update(None, box=box)
    cpu = graphcut.segment(image, box=box, model=_model(1.0), device="cpu")
    np.testing.assert_array_equal(mask, cpu)
    assert _iou(mask, truth) > 0.97
    seeds = np.zeros(truth.shape, np.uint8)
    h, w = truth.shape
    seeds[h // 2 - 3:h // 2 + 4, w // 2 + int(0.18 * h) - 3:w // 2 + int(0.18 * h) + 4] = 1
    np.testing.assert_array_equal(session.update(seeds, box=box),
                                  graphcut.segment(image, seeds, box=box,
                                                   model=_model(1.0), device="cpu"))
