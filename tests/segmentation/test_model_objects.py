"""Model objects: knobs on the object, the old keyword arguments folded in, the settings round
trip, and a new model plugged into the pipeline without touching it."""

from __future__ import annotations

import numpy as np
import pytest

import graphcut
from graphcut.models import (APPEARANCE_MODELS, GMM, AppearanceModel, Histogram,
                             model_from_settings, register_model)
from synthetic import disc_image, disc_seeds, disc_truth, iou


def test_settings_round_trip():
    for model in (GMM(), GMM(components=3, texture=0), Histogram(bins=32, locality=1.5)):
        assert model_from_settings(model.settings()) == model
    assert GMM(components=3).settings() == {"model": "gmm", "components": 3}
    # a settings file holds more than the model's knobs: those are ignored here
    assert model_from_settings({"model": "gmm", "lam": 20, "keep": "all"}) == GMM()


def test_old_keyword_arguments_are_the_model_objects_knobs():
    image, seeds = disc_image("colour", seed=2), disc_seeds()
    old = graphcut.segment(image, seeds, model="gmm", components=3, iterations=1, texture=0,
                           device="cpu", return_result=True)
    new = graphcut.segment(image, seeds, model=GMM(components=3, iterations=1, texture=0),
                           device="cpu", return_result=True)
    np.testing.assert_array_equal(old[0], new[0])
    assert old[1].flow == new[1].flow and new[1].stats["model"] == "gmm"
    plain = graphcut.segment(image, seeds, model="histogram", bins=8, device="cpu")
    np.testing.assert_array_equal(plain, graphcut.segment(image, seeds, model=Histogram(bins=8),
                                                          device="cpu"))


def test_model_objects_are_not_changed_by_segmenting():
    model = GMM(components=2)
    graphcut.segment(disc_image(), disc_seeds(), model=model, iterations=1, device="cpu")
    assert model == GMM(components=2) and not hasattr(model, "_fitted")


@pytest.mark.parametrize("call,error,match", [
    (dict(model="histogram", components=3), ValueError, "components applies to model='gmm'"),
    (dict(model="gmm", bins=8), ValueError, "bins applies to model='histogram'"),
    (dict(model="svm"), ValueError, "unknown colour model 'svm'"),
    (dict(model=GMM(), iterations=float("nan")), ValueError, "iterations must be an integer"),
    (dict(model=3.5), TypeError, "model must be a model name"),
    (dict(model="gmm", colour=True), TypeError, "unknown segmentation option"),
])
def test_bad_models_and_knobs_are_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        graphcut.segment(disc_image(), disc_seeds(), device="cpu", **call)
    with pytest.raises(TypeError, match="GMM has no option"):
        GMM(bins=3)
    with pytest.raises(ValueError, match="seed_share must be a number from 0 to 1"):
        Histogram(seed_share=2)


class TruthModel(AppearanceModel):
    """A test model that knows the answer: cost 0 for the true label, ``penalty`` otherwise.
    It never looks at the image or the samples, so the cut must be the truth (strong costs)."""

    name = "truth-test"
    penalty = 5.0
    knobs = ("penalty",)

    def fit(self, features, samples):
        self.labels = len(samples)
        return self

    def costs(self, features):
        truth = disc_truth(*features.shape[:2])
        inside = np.where(truth, 0.0, self.penalty)
        outside = np.where(truth, self.penalty, 0.0)
        return [inside, outside]


def test_a_new_model_plugs_into_the_pipeline():
    register_model(TruthModel)
    try:
        image, seeds = disc_image(noise=0.3, seed=4), disc_seeds()
        mask = graphcut.segment(image, seeds, model="truth-test", lam=0.1, device="cpu")
        assert iou(mask, disc_truth()) > 0.99
        session = graphcut.Segmenter(image, model=TruthModel(penalty=4.0), lam=0.1,
                                     device="cpu")
        np.testing.assert_array_equal(session.update(seeds), mask)
        assert model_from_settings({"model": "truth-test", "penalty": 4.0}) == \
            TruthModel(penalty=4.0)
    finally:
        APPEARANCE_MODELS.pop("truth-test", None)
