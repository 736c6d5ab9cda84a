"""The GMM's costs alone on the CPU (graphcut/models/_gmm_costs_cpu.py): equal bit for bit to
the full evaluation's (the one that keeps the responsibilities), within 1e-9 nats of
-log sum_k pi_k N(x; mu_k, Sigma_k) written out here, and the live GMM's strokes give the
masks and flows they gave with the full evaluation."""

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, GMMModel
from graphcut.models import _gmm
from graphcut.models._gmm_costs_cpu import mixture_costs


def _image(shape=(50, 70), channels=4, seed=0):
    rng = np.random.default_rng(seed)
    values = rng.random((*shape, channels))
    values[: shape[0] // 2] = values[: shape[0] // 2] * 0.3 + 0.6  # two colour regions
    return values


def _fitted(values, components=5, seed=0):
    mask = np.zeros(values.shape[:2], bool)
    mask[::3, ::2] = True
    return GMMModel(components).fit(values, mask)


def _reference_costs(model, values):
    """-log p(x) from the mixture's parameters: log-sum-exp of the Gaussians' log densities."""
    x = values.reshape(-1, values.shape[-1])
    logs = []
    for weight, mean, covariance in zip(model.weights, model.means, model.covariances):
        d = x - mean
        solved = np.linalg.solve(covariance, d.T).T
        _, logdet = np.linalg.slogdet(covariance)
        logs.append(np.log(weight) - 0.5 * (np.einsum("nc,nc->n", d, solved) + logdet
                                            + x.shape[1] * np.log(2 * np.pi)))
    logs = np.stack(logs, axis=1)
    top = logs.max(axis=1)
    return -(top + np.log(np.exp(logs - top[:, None]).sum(axis=1)))


@pytest.mark.parametrize("components", [1, 3, 5, 9])
@pytest.mark.parametrize("chunk", [7, 64, 1 << 15])
def test_costs_alone_equal_the_full_evaluation(components, chunk):
    values = _image(seed=components)
    model = _fitted(values, components)
    features = model._features_of(values)
    linear, constant = model._linear_form(values.shape[-1])
    full = _gmm._log_densities_in_chunks(features, linear, constant)[0] if chunk == \
        _gmm.CHUNK_ROWS else None
    alone = mixture_costs(features, linear, constant, chunk)
    np.testing.assert_allclose(alone, _reference_costs(model, values), rtol=0, atol=1e-9)
    if full is not None:  # the same chunks: the same numbers, bit for bit
        np.testing.assert_array_equal(alone, full)


def test_costs_alone_of_no_rows():
    values = _image()
    model = _fitted(values)
    linear, constant = model._linear_form(values.shape[-1])
    assert mixture_costs(np.zeros((0, linear.shape[0])), linear, constant, 128).shape == (0,)


def test_the_model_takes_the_costs_alone_for_an_image_it_did_not_learn_from(monkeypatch):
    """costs() of another image: the costs alone (no responsibilities kept), equal to the
    full evaluation's; an EM step on that image afterwards evaluates it in full, and gives
    the parameters it gave when the costs had kept the responsibilities."""
    values, sample = _image(seed=3), _image(seed=4)[::2, ::2]
    mask = np.ones(sample.shape[:2], bool)
    fast, slow = GMMModel(4).fit(sample, mask), GMMModel(4).fit(sample, mask)
    costs = fast.costs(values)
    assert fast._evaluated[2] is None                  # the responsibilities were not kept
    slow._features_of(values)                          # the old path: the full evaluation
    np.testing.assert_array_equal(costs, slow.costs(values))
    assert slow._evaluated[2] is not None
    assert fast.costs(values) is not None and fast._evaluated[2] is None   # cached
    refit = np.zeros(values.shape[:2], bool)
    refit[5:30, 10:50] = True
    fast.refit(values, refit)
    slow.refit(values, refit)
    for a, b in ((fast.weights, slow.weights), (fast.means, slow.means),
                 (fast.covariances, slow.covariances)):
        np.testing.assert_array_equal(a, b)


def test_an_image_the_model_learned_from_keeps_its_responsibilities():
    values = _image(seed=5)
    model = _fitted(values)
    model.costs(values)
    assert model._evaluated[2] is not None             # GrabCut's next EM step reuses them


def _scene(shape, seed):
    rng = np.random.default_rng(seed)
    h, w = shape
    image = np.clip(rng.normal([0.3, 0.35, 0.5], 0.07, (h, w, 3)), 0, 1)
    image[h // 4:3 * h // 4, w // 4:3 * w // 4] = np.clip(
        rng.normal([0.8, 0.5, 0.2], 0.09, (h // 2, w // 2, 3)), 0, 1)
    return (image * 255).astype(np.uint8)


@pytest.mark.parametrize("model", ["auto", GMM(core=0.4, warm=True)])
def test_live_strokes_give_the_masks_of_the_full_evaluation(monkeypatch, model):
    """The live GMM's strokes (strokes alone, 200 x 400: a coarse grid) with the costs alone
    against the same strokes with every cost from the full evaluation (the path before)."""
    image = _scene((200, 400), 7)
    strokes = [((100, 200), 1), ((5, 5), 2), ((60, 120), 1), ((190, 390), 2),
               ((150, 280), 2), ((80, 260), 1)]

    def run():
        session = graphcut.Segmenter(image, model=model, device="cpu")
        seeds = np.zeros(image.shape[:2], np.uint8)
        out = []
        for step, ((r, c), label) in enumerate(strokes):
            seeds[r - 1:r + 2, c - 1:c + 2] = label
            if step == 0:  # the first update has both labels
                continue
            mask = session.update(seeds)
            out.append((np.asarray(mask).copy(), session.last_result.flow))
        return out

    calls = []

    def counted(*args):
        calls.append(args[0].shape[0])
        return mixture_costs(*args)

    monkeypatch.setattr(_gmm, "mixture_costs", counted)
    now = run()
    assert max(calls) == image.shape[0] * image.shape[1]   # the full-size costs took it
    original = GMMModel.costs

    def full(self, values):  # the full evaluation for every image, as before
        if not self.fitted:
            raise RuntimeError("GMMModel.costs() called before fit()")
        return self._evaluate(values)[0].reshape(values.shape[:-1])

    monkeypatch.setattr(GMMModel, "costs", full)
    before = run()
    monkeypatch.setattr(GMMModel, "costs", original)
    for step, ((mask, flow), (old_mask, old_flow)) in enumerate(zip(now, before)):
        np.testing.assert_array_equal(mask, old_mask, err_msg=f"stroke {step}")
        assert flow == old_flow
