"""Auto (model="auto"): GMM(core=0.4, warm=True, outline=8, stroke_reach=0.2, locality=4,
prune=1, texture=0, stroke_share=0.05) on colour photographs, the same without prune and
stroke_share and with the texture channel on grey photographs, Learned() on grey
micrographs (colour micrographs and grey rules: tests/segmentation/test_image_kind.py); the
default model;
settings files reproduce their model."""

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, Auto, Histogram, Learned, as_model, model_from_settings

from synthetic import disc_image, disc_seeds

COLOUR = GMM(core=0.4, warm=True, outline=8, stroke_reach=0.2, locality=4,  # auto's colours
             prune=1, texture=0, stroke_share=0.05)
GREY_PHOTO = GMM(core=0.4, warm=True, outline=8, stroke_reach=0.2, locality=4)  # no prune


def test_auto_stands_for_a_model_per_image():
    assert as_model(None) == Auto() and as_model("auto") == Auto()
    assert Auto().for_channels(3) == COLOUR
    assert Auto().for_channels(4) == COLOUR
    assert Auto().for_channels(1) == Learned()
    given = Auto(seed_share=0.2, locality=1.0)
    assert given.for_channels(3) == GMM(core=0.4, warm=True, outline=8, stroke_reach=0.2,
                                        seed_share=0.2, locality=1.0, prune=1, texture=0)
    # (a given seed_share weighs the seeds in strokes alone too: no stroke_share)
    assert given.for_channels(1) == Learned(seed_share=0.2, locality=1.0)
    assert model_from_settings(given.settings()) == given
    assert Auto().settings() == {"model": "auto"}
    with pytest.raises(RuntimeError, match="for_image"):
        Auto().fit(np.zeros((2, 2, 1)), [])


def _grey_photograph():
    """scikit-image's camera, 60 x 80 (a grey photograph: the GMM's), the disc's size."""
    from skimage import data, transform
    small = transform.resize(data.camera(), (60, 80), anti_aliasing=True, preserve_range=True)
    return np.rint(small).astype(np.uint8)


@pytest.mark.parametrize("kind,chosen", [("colour", COLOUR),
                                         ("grey", Learned()),
                                         ("grey photograph", GREY_PHOTO)])
def test_segment_with_auto_is_the_chosen_models(kind, chosen):
    seeds = disc_seeds()
    image = _grey_photograph() if kind == "grey photograph" else disc_image(kind, np.uint8,
                                                                           seed=1)
    session = graphcut.Segmenter(image, model="auto", device="cpu")
    assert session.model == chosen and session.lam == chosen.lam
    default, result = graphcut.segment(image, seeds, model="auto", device="cpu",
                                       return_result=True)
    named, named_result = graphcut.segment(image, seeds, model=chosen, device="cpu",
                                           return_result=True)
    np.testing.assert_array_equal(default, named)
    assert result.flow == named_result.flow and result.stats["model"] == "auto"
    np.testing.assert_array_equal(session.update(seeds), default)


def test_a_lam_given_with_auto_wins():
    image, seeds = disc_image("colour", np.uint8, seed=2), disc_seeds()
    assert graphcut.Segmenter(image, model="auto", lam=7.0, device="cpu").lam == 7.0
    np.testing.assert_array_equal(
        graphcut.segment(image, seeds, lam=7.0, model="auto", device="cpu"),
        graphcut.segment(image, seeds, lam=7.0, model=COLOUR,
                         device="cpu"))


@pytest.mark.parametrize("name,model", [("histogram", Histogram()), ("gmm", GMM()),
                                        ("auto", Auto()), (None, Auto())])
def test_settings_files_reproduce_their_model_through_the_cli(tmp_path, name, model):
    """A settings file next to the seeds that names a model (as the app writes them) gives
    that model's mask; one without a model gives the default's (auto)."""
    from click.testing import CliRunner
    from PIL import Image

    from graphcut.cli import main
    from graphcut.segmentation import settings_path, write_settings
    image = disc_image("colour", np.uint8, noise=0.2, seed=3)
    seeds = np.zeros(image.shape[:2], np.uint8)
    seeds[28:32, 38:42] = 1
    seeds[2:5, 5:20] = seeds[30:33, 12:18] = 2
    Image.fromarray(image).save(tmp_path / "disc.png")
    Image.fromarray(seeds).save(tmp_path / "seeds.png")
    write_settings(settings_path(tmp_path / "seeds.png"), {} if name is None else
                   {"model": name})
    result = CliRunner().invoke(main, ["segment", str(tmp_path / "disc.png"), "--seeds",
                                       str(tmp_path / "seeds.png"), "-o",
                                       str(tmp_path / "mask.png"), "--device", "cpu"])
    assert result.exit_code == 0, result.output
    mask = np.asarray(Image.open(tmp_path / "mask.png")) == 255
    expected = graphcut.segment(image, seeds, model=model, device="cpu")
    np.testing.assert_array_equal(mask, expected)
    if name == "auto":  # its mask differs from the histogram's here
        assert (expected != graphcut.segment(image, seeds, model="histogram",
                                             device="cpu")).any()
