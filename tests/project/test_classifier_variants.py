"""bench/classifier_variants.py's driver checked against the library: its training rows and
its ``logistic`` variant (the library's own Newton training, scored in float64) give the
library's costs, prior sample and weights included; scikit-learn's logistic regression with
the driver's penalty lands near them. Importing the script patches nothing."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import classifier_variants as variants  # noqa: E402

import graphcut.models._learned as learned_module  # noqa: E402
from graphcut.models import Learned  # noqa: E402


def _costs(prior):
    """The learned model's two cost maps on a noisy two-level image from two clicks."""
    rng = np.random.default_rng(3)
    image = np.full((48, 48), 0.2)
    image[8:30, 10:34] = 0.7
    image = (image + 0.15 * rng.standard_normal(image.shape))[..., None]
    obj, bg = np.zeros((48, 48), bool), np.zeros((48, 48), bool)
    obj[17:21, 20:24] = True
    bg[40:44, 4:8] = True
    model = Learned(prior=prior)
    features = model.features(image)
    model.fit(features, [obj, bg])
    return np.stack(model.costs(features))


def _patched(monkeypatch, variant):
    shared = learned_module._Shared
    monkeypatch.setattr(shared, "train", shared.train)  # undone after the test
    monkeypatch.setattr(shared, "_score", shared._score)
    variants.patch(variant)


@pytest.mark.parametrize("prior", [0.0, 0.75])
def test_logistic_variant_reproduces_library(monkeypatch, prior):
    expected = _costs(prior)
    _patched(monkeypatch, "logistic")
    got = _costs(prior)
    np.testing.assert_allclose(got, expected, atol=2e-4)


def test_prior_rows_change_the_costs():
    """The prior sample is among the training rows (else the test above could not fail)."""
    assert np.abs(_costs(0.75) - _costs(0.0)).max() > 0.1


def test_sklearn_logistic_matches_penalty(monkeypatch):
    pytest.importorskip("sklearn")
    expected = _costs(0.75)
    _patched(monkeypatch, "logistic-sk")
    got = _costs(0.75)
    assert np.abs(got - expected).max() < 0.05
