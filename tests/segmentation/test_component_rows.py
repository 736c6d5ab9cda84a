"""GMM(component_rows=...) / GMMModel(min_rows=...): a first fit on few sample rows gets
fewer Gaussians, so a small first stroke's mixture learns the object's colours, not its
pixels' noise; off in GMM() and in auto (opt-in: measured mixed on the dev sets)."""

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, GMMModel, model_from_settings
from graphcut.models._auto import COLOUR_MODEL
from session_oracle import assert_gpu_session_is_the_cpus
from synthetic import colour_image


def _distinct_colours(rows, seed=0):
    values = np.random.default_rng(seed).random((1, rows, 3))
    return values, np.ones((1, rows), bool)


@pytest.mark.parametrize("rows,min_rows,expected", [
    (50, 20, 2), (19, 20, 1), (99, 20, 4), (100, 20, 5), (400, 20, 5), (50, 0, 5)])
def test_a_first_fit_has_one_component_per_min_rows_sample_rows(rows, min_rows, expected):
    values, mask = _distinct_colours(rows)
    model = GMMModel(components=5, min_rows=min_rows, em_steps=0).fit(values, mask)
    assert len(model.weights) == expected == model.components_for(rows)


def test_a_refit_keeps_the_first_fits_components():
    values, mask = _distinct_colours(30)
    model = GMMModel(components=5, min_rows=20).fit(values, mask)
    bigger, everywhere = _distinct_colours(400, seed=1)
    assert len(model.refit(bigger, everywhere).weights) == 1


def test_min_rows_is_checked():
    for bad in (-1, 2.5, True, "20"):
        with pytest.raises(ValueError, match="min_rows"):
            GMMModel(min_rows=bad)
    with pytest.raises(ValueError, match="component_rows"):
        GMM(component_rows=-3)


def test_component_rows_round_trips_and_is_off_in_gmm():
    assert GMM().component_rows == 0 and GMM().settings() == {"model": "gmm"}
    model = GMM(component_rows=20)
    assert model.settings() == {"model": "gmm", "component_rows": 20}
    assert model_from_settings(model.settings()) == model
    assert model.label_model().min_rows == 20 and GMM().label_model().min_rows == 0
    assert "component_rows" not in COLOUR_MODEL  # auto's colour model: off


def test_a_small_first_stroke_keeps_the_object():
    """A noisy disc (noise 30 grey levels), one 11 x 11 object stroke and a background band:
    five Gaussians fitted on the stroke's 36 coarse blocks lose most of the disc (auto's
    colour model today); one Gaussian per 20 rows keeps it."""
    image, truth = colour_image(np.random.default_rng(12), (360, 520))
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[175:186, 255:266] = 1
    seeds[:4, :] = 2
    fewer = GMM(**COLOUR_MODEL, component_rows=20)
    assert (graphcut.segment(image, seeds, model=fewer, device="cpu") == truth).mean() > 0.99
    five = GMM(**COLOUR_MODEL)
    assert (graphcut.segment(image, seeds, model=five, device="cpu") == truth).mean() < 0.9


@pytest.mark.gpu
def test_the_gpu_gives_the_cpus_masks_and_flows():
    if not graphcut.solver.cuda_status()[0]:
        pytest.skip(graphcut.solver.cuda_status()[1])
    image, truth = colour_image(np.random.default_rng(13), (180, 260))
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[:3, :] = 2
    states = []
    for r, c in [(90, 130), (60, 100), (150, 20)]:
        seeds[r - 2:r + 3, c - 2:c + 3] = 1 if truth[r, c] else 2
        states.append(seeds.copy())
    assert_gpu_session_is_the_cpus(image, GMM(**COLOUR_MODEL, component_rows=20), states)
