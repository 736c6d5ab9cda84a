"""The app's solver (``gui/solve.py``, no Qt) with the app's options: clean-up, box, lasso and
seeds of several objects give what ``graphcut.segment`` gives, on the CPU and on the GPU."""

import numpy as np
import pytest

import graphcut
from graphcut.gui.options import APP_DEFAULTS, SegmentOptions
from graphcut.gui.sharing import SeedDelta
from graphcut.gui.solve import Job, Session, Solver
from graphcut.models import APPEARANCE_MODELS

# the astronaut and its sample seeds at half size (quick); around every object seed:
BOX = (10, 30, 256, 210)
LASSO = ((10, 30), (10, 210), (255, 220), (255, 20))


def _with(options, **changes):
    import dataclasses
    return dataclasses.replace(options, **changes)


@pytest.fixture(scope="module")
def astronaut():
    image = graphcut.read_image("samples/images/astronaut.png")
    seeds = graphcut.read_seeds("samples/seeds/astronaut.png", image.shape)[::2, ::2].copy()
    image = image[::2, ::2].copy()
    three = seeds.copy()
    band = three[20:25, 100:130]
    band[band == 0] = 3  # a second object
    return image, seeds, three


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("case", ["plain", "clean", "box", "lasso", "two objects", "gmm box",
                                  "learned clean", "learned lasso"])
def test_solver_answers_what_segment_gives(astronaut, device, case):
    image, seeds, three = astronaut
    options = {"plain": SegmentOptions(), "clean": APP_DEFAULTS,
               "box": APP_DEFAULTS.with_region(box=BOX),
               "lasso": APP_DEFAULTS.with_region(lasso=LASSO), "two objects": APP_DEFAULTS,
               "gmm box": SegmentOptions(model="gmm").with_region(box=BOX),
               # every model's mask is cleaned up on the solver's device (the GPU's flood
               # fills, with the lasso folded into the seeds)
               "learned clean": _with(APP_DEFAULTS, model="learned"),
               "learned lasso": _with(APP_DEFAULTS, model="learned").with_region(lasso=LASSO),
               }[case]
    chosen = three if case == "two objects" else seeds
    solver = Solver()
    assert solver.open(Session(1, image, 10.0, device)).error is None
    outcome = solver.run(Job(1, 1, 10.0, SeedDelta(None, chosen), options))
    assert outcome.error is None, outcome.error
    mask = np.zeros(image.shape[:2], bool)
    outcome.update.apply(mask)
    expected = graphcut.segment(image, chosen, **options.segment_kwargs(10.0), device=device)
    if case == "two objects":
        np.testing.assert_array_equal(outcome.labels, expected)
        np.testing.assert_array_equal(mask, expected != 0)
    else:
        assert outcome.labels is None
        np.testing.assert_array_equal(mask, expected)
    if options.has_region:
        from graphcut.segmentation import allowed_region
        assert not mask[~allowed_region(mask.shape, box=options.box, lasso=options.lasso)].any()


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("model", list(APPEARANCE_MODELS))
def test_no_lam_is_the_models_own_lam_also_after_a_typed_one(astronaut, device, model):
    """lam None (the app's λ following the model) answers what ``segment`` gives at the
    model's own lam (its default, except the histogram's automatic choice with a box, which
    the app does not use), before and after a typed lam on the same solver."""
    image, seeds, _ = astronaut
    options = SegmentOptions(model=model).with_region(box=BOX)
    solver = Solver()
    assert solver.open(Session(1, image, None, device)).error is None
    mask = np.zeros(image.shape[:2], bool)

    def answer(number, lam):
        outcome = solver.run(Job(number, 1, lam, SeedDelta(None, seeds), options))
        assert outcome.error is None, outcome.error
        outcome.update.apply(mask)  # the change since the previous answer
        return mask.copy()

    default = graphcut.segment(image, seeds, model=model, box=BOX, device=device,
                               lam=APPEARANCE_MODELS[model].lam)
    if model != "histogram":
        np.testing.assert_array_equal(
            default, graphcut.segment(image, seeds, model=model, box=BOX, device=device))
    np.testing.assert_array_equal(answer(1, None), default)
    typed = graphcut.segment(image, seeds, model=model, box=BOX, lam=3.0, device=device)
    assert (typed != default).any()
    np.testing.assert_array_equal(answer(2, 3.0), typed)
    np.testing.assert_array_equal(answer(3, None), default)


@pytest.mark.parametrize("model", list(APPEARANCE_MODELS))
def test_a_preview_without_lam_uses_the_models_lam_over_its_factor(astronaut, model):
    image, seeds, _ = astronaut
    options = SegmentOptions(model=model)
    masks = []
    for lam in (None, APPEARANCE_MODELS[model].lam):
        solver = Solver()
        assert solver.open(Session(1, image, lam, "cpu", preview_factor=2)).error is None
        outcome = solver.run(Job(1, 1, lam, SeedDelta(None, seeds), options))
        assert outcome.error is None and outcome.factor == 2, outcome.error
        mask = np.zeros((image.shape[0] // 2, image.shape[1] // 2), bool)
        outcome.update.apply(mask)
        masks.append(mask)
    np.testing.assert_array_equal(*masks)
    assert masks[0].any()


def test_auto_on_a_grey_image_cuts_at_the_learned_models_lam(astronaut):
    """"auto" stands for the learned model on a grey micrograph-like image (most pixels dark:
    the astronaut's intensity cubed): while λ follows the model, the app's solver cuts at the
    learned model's λ (4), not at the placeholder's (the GMM's 35)."""
    from graphcut.gui.model_choice import LamChoice, model_lam
    from graphcut.models import grey_statistics

    image, seeds, _ = astronaut
    photo = image.mean(axis=-1)
    grey = np.rint(photo ** 3 / 255.0 ** 2).astype(image.dtype)
    assert not grey_statistics(grey).photograph and grey_statistics(photo).photograph
    solver = Solver()
    assert solver.open(Session(1, grey, None, "cpu")).error is None
    outcome = solver.run(Job(1, 1, None, SeedDelta(None, seeds), SegmentOptions(model="auto")))
    assert outcome.error is None, outcome.error
    assert outcome.lam == model_lam("learned") == 4.0
    mask = np.zeros(grey.shape, bool)
    outcome.update.apply(mask)
    np.testing.assert_array_equal(mask, graphcut.segment(grey, seeds, model="auto"))
    np.testing.assert_array_equal(mask, graphcut.segment(grey, seeds, model="learned"))
    choice = LamChoice()
    choice.set_image(grey, None)
    assert choice.shown("auto") == 4.0
    choice.set_image(photo.astype(image.dtype), None)
    assert choice.shown("auto") == 35.0  # a grey photograph: the GMM's
    choice.set_image(image)
    assert choice.shown("auto") == 35.0  # the astronaut is a photograph: the GMM's


@pytest.mark.parametrize("factor", [1, 2])
def test_auto_on_a_stained_section_shows_and_cuts_at_the_learned_models_lam(factor):
    """A colour micrograph: "auto" stands for the learned model (not the colour images' GMM)
    in the λ the app shows and in the solver's cut, exact or preview (chosen on the full
    image), and the exact answer is ``graphcut.segment``'s."""
    from graphcut.gui.document import Document
    from graphcut.gui.model_choice import LamChoice, chosen_model, model_lam
    from graphcut.models import Learned
    from micrographs import stained_section

    section, nuclei = stained_section(seed=3, h=120, w=160)
    assert chosen_model("auto", section) == Learned() and model_lam("auto", section) == 4.0
    choice = LamChoice()
    choice.set_image(section)
    assert choice.shown("auto") == 4.0 and choice.shown("gmm") == 35.0
    document = Document()
    document.open(section, "section.png")
    assert document.lam.shown("auto") == 4.0
    seeds = np.zeros(nuclei.shape, np.uint8)
    y, x = np.argwhere(nuclei)[0]
    seeds[y, x:x + 3] = 1
    seeds[2:5, 2:40] = 2
    solver = Solver()
    assert solver.open(Session(1, section, None, "cpu", preview_factor=factor)).error is None
    outcome = solver.run(Job(1, 1, None, SeedDelta(None, seeds), SegmentOptions(model="auto")))
    assert outcome.error is None, outcome.error
    assert outcome.lam == 4.0 / factor
    if factor == 1:
        mask = np.zeros(nuclei.shape, bool)
        outcome.update.apply(mask)
        np.testing.assert_array_equal(mask, graphcut.segment(section, seeds, model="auto"))
