"""The learned appearance model (graphcut.models.LearnedModel) and segment(model="learned"):
the classifier against independent oracles (optimality conditions, scikit-learn), the
segmentation against the truth of synthetic images, constraints exact, the incremental
Segmenter equal to a fresh segment, CPU = GPU."""

import numpy as np
import pytest

import graphcut
from graphcut.models import Learned, LearnedModel, learned_models, model_from_settings
from graphcut.models._learned import MIN_PROBABILITY, fit_logistic
from synthetic import textured_disc as _textured_scene


def _strokes(truth):
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[38:42, 30:58] = 1
    seeds[2:5, :] = 2
    seeds[:, 90:93] = 2
    return seeds


def _iou(a, b):
    return (a & b).sum() / (a | b).sum()


# -- the classifier ---------------------------------------------------------------------------

def test_logistic_regression_reaches_its_optimum():
    """At the returned weights the penalised objective's gradient is ~0 (its optimality
    condition), computed here independently of the Newton steps."""
    rng = np.random.default_rng(1)
    x = np.c_[np.ones(300), rng.standard_normal((300, 4))]
    y = (x[:, 1] + 0.5 * x[:, 2] + 0.8 * rng.standard_normal(300) > 0).astype(float)
    w = rng.uniform(0.5, 2.0, 300)
    l2 = 0.05
    beta = fit_logistic(x, y, w, l2=l2)
    p = 1 / (1 + np.exp(-x @ beta))
    penalty = np.r_[0.0, np.full(4, l2 * w.sum())]
    gradient = x.T @ (w * (p - y)) + penalty * beta
    assert np.abs(gradient).max() < 1e-6 * w.sum()


def test_logistic_regression_equals_scikit_learn():
    sklearn = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(2)
    features = rng.standard_normal((400, 3))
    y = (features @ [1.0, -2.0, 0.5] + rng.standard_normal(400) > 0.3).astype(float)
    l2 = 0.01
    beta = fit_logistic(np.c_[np.ones(400), features], y, np.ones(400), l2=l2)
    reference = sklearn.LogisticRegression(C=1 / (l2 * 400), tol=1e-10, max_iter=10000)
    reference.fit(features, y)
    np.testing.assert_allclose(beta[1:], reference.coef_[0], atol=1e-4)
    np.testing.assert_allclose(beta[0], reference.intercept_[0], atol=1e-4)


@pytest.mark.parametrize("classifier", ["logistic", "gaussian"])
@pytest.mark.parametrize("count", [2, 3])
def test_costs_are_minus_log_probabilities(classifier, count):
    rng = np.random.default_rng(3)
    values = rng.standard_normal((30, 40, 5)).astype(np.float32)
    values[:, :13, 0] += 6
    values[:, 27:, 1] += 6
    models = learned_models(count, classifier=classifier)
    masks = [np.zeros((30, 40), bool) for _ in range(count)]
    masks[0][:, :5] = True
    masks[1][:, 35:] = True
    if count == 3:
        masks[2][:, 18:22] = True
    for model, mask in zip(models, masks):
        model.fit(values, mask)
    costs = np.stack([m.costs(values) for m in models])
    assert costs.shape == (count, 30, 40) and (costs >= 0).all()
    assert costs.max() <= -np.log(MIN_PROBABILITY) + 1e-6
    total = np.exp(-costs).sum(axis=0)
    assert np.all((total > 1 - 1e-6) | (costs.max(axis=0) >= -np.log(MIN_PROBABILITY) - 1e-6))
    # each label's own stripe is cheapest for that label
    assert (costs[:, :, :10].argmin(axis=0) == 0).mean() > 0.95
    assert (costs[:, :, 30:].argmin(axis=0) == 1).mean() > 0.95


def test_models_are_linked_views_and_check_their_input():
    first, second = learned_models(2)
    values = np.random.default_rng(0).standard_normal((6, 7, 3))
    mask = np.zeros((6, 7), bool)
    with pytest.raises(RuntimeError):
        first.costs(values)
    with pytest.raises(ValueError, match="empty"):
        first.fit(values, mask)
    mask[0, 0] = True
    first.fit(values, mask)
    with pytest.raises(ValueError, match="every label needs sample pixels"):
        first.costs(values)           # the background view has no sample yet
    with pytest.raises(ValueError, match="mask shape"):
        first.fit(values, mask[:-1])
    with pytest.raises(ValueError):
        learned_models(1)
    with pytest.raises(ValueError, match="classifier"):
        LearnedModel(classifier="forest")
    assert [type(v) for v in learned_models(3)] == [LearnedModel] * 3


# -- segmentation -----------------------------------------------------------------------------

def test_segment_learned_finds_the_textured_object():
    image, truth = _textured_scene()
    seeds = _strokes(truth)
    mask = graphcut.segment(image, seeds, model="learned", device="cpu")
    histogram = graphcut.segment(image, seeds, model="histogram", device="cpu")
    assert _iou(mask, truth) > 0.9
    assert _iou(mask, truth) > _iou(histogram, truth) + 0.05
    assert mask[seeds == 1].all() and not mask[seeds == 2].any()   # seeds are hard


def test_box_and_lasso_constraints_are_exact():
    image, truth = _textured_scene(seed=4)
    box = (14, 18, 66, 70)
    mask = graphcut.segment(image, box=box, model="learned", device="cpu")
    outside = np.ones(truth.shape, bool)
    outside[box[0]:box[2], box[1]:box[3]] = False
    assert not mask[outside].any() and _iou(mask, truth) > 0.85
    lasso = [(10, 40), (40, 75), (70, 44), (40, 12)]
    mask = graphcut.segment(image, lasso=lasso, model="learned", device="cpu")
    region = graphcut.segmentation.lasso_mask(truth.shape, lasso)
    assert not mask[~region].any() and mask.any()


def test_seeds_of_one_label_only_give_a_clear_message():
    image, truth = _textured_scene()
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[38:42, 30:58] = 1
    with pytest.raises(ValueError, match="background"):
        graphcut.segment(image, seeds, model="learned", device="cpu")
    # with a box the outside is the background's sample: object seeds alone are enough
    mask = graphcut.segment(image, seeds, box=(14, 18, 66, 70), model="learned", device="cpu")
    assert mask[seeds == 1].all()


def test_several_objects():
    image, truth = _textured_scene()
    seeds = _strokes(truth)
    seeds[60:63, 5:15] = 3       # a second "object" in the background's smooth area
    labels = graphcut.segment(image, seeds, model="learned", device="cpu")
    assert labels.dtype == np.uint8 and set(np.unique(labels)) <= {0, 1, 3}
    assert (labels[seeds == 1] == 1).all() and (labels[seeds == 3] == 3).all()
    assert (labels[seeds == 2] == 0).all()


def test_incremental_segmenter_equals_fresh_segment():
    image, truth = _textured_scene(seed=5)
    session = graphcut.Segmenter(image, model="learned", device="cpu")
    seeds = _strokes(truth)
    for stroke in (None, np.s_[10:13, 60:70], np.s_[60:64, 30:40]):
        if stroke is not None:
            seeds[stroke] = 1 if truth[stroke].mean() > 0.5 else 2
        incremental = np.asarray(session.update(seeds.copy()))
        fresh = graphcut.segment(image, seeds, model="learned", device="cpu")
        np.testing.assert_array_equal(incremental, fresh)


@pytest.mark.gpu
def test_gpu_segment_equals_cpu():
    """Features, classifier and cut on the GPU give the CPU's mask (to a few pixels, where
    float32 filters on the two devices round differently near a cost tie)."""
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001
        pytest.skip("no GPU")
    image, truth = _textured_scene()
    seeds = _strokes(truth)
    cpu = graphcut.segment(image, seeds, model="learned", device="cpu")
    gpu = graphcut.segment(image, seeds, model="learned", device="cuda")
    assert (cpu != gpu).sum() <= 0.001 * cpu.size
    values = cupy.asarray(np.random.default_rng(0).standard_normal((30, 40, 6)))
    mask = cupy.zeros((30, 40), bool)
    mask[:, :8] = True
    host = [m for m in learned_models(2)]
    device = [m for m in learned_models(2)]
    for models, v, m in ((host, values.get(), mask.get()), (device, values, mask)):
        models[0].fit(v, m)
        models[1].fit(v, ~m)
    np.testing.assert_allclose(device[0].costs(values).get(), host[0].costs(values.get()),
                               atol=1e-4)


def test_settings_round_trip_and_knob_checks():
    model = Learned(l2=0.5, core=0.3)
    assert model_from_settings(model.settings()) == model
    assert graphcut.models.as_model("learned") == Learned()
    with pytest.raises(ValueError, match="l2"):
        Learned(l2=0)
    with pytest.raises(ValueError, match="core"):
        Learned(core=2)
    with pytest.raises(ValueError, match="classifier"):
        Learned(classifier="forest")
