"""The outline cost of a box or lasso (graphcut/segmentation/_outline.py, ``GMM(outline=...)``):
the closed form for a box equals the distance transform's cost, it is kept on the model for
the next strokes, and the GMM's knob is checked and round-trips through settings."""

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, Learned, model_from_settings
from graphcut.models._prior import outline_cost
from graphcut.segmentation._outline import box_outline_cost, outline_priors
from graphcut.segmentation._regions import box_mask


@pytest.mark.parametrize("box,reach,max_reach", [((0, 0, 40, 30), 0.35, None),
                                                 ((3, 5, 37, 29), 0.35, 10.0),
                                                 ((10, 2, 13, 30), 0.5, None),
                                                 ((1, 1, 39, 29), 1.0, 3.0)])
def test_the_closed_form_equals_the_distance_transform(box, reach, max_reach):
    shape = (40, 30)
    expected = outline_cost(box_mask(shape, box), 8.0, reach, max_reach=max_reach)
    got = box_outline_cost(shape, box, 8.0, reach, max_reach)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert got[box[0], box[1]] == pytest.approx(8.0 * max(0.0, 1 - 1 / min(
        reach * min(np.ceil((box[2] - box[0]) / 2), np.ceil((box[3] - box[1]) / 2)),
        max_reach or np.inf)))


def test_the_cost_is_kept_for_the_same_box_and_redone_for_another():
    model = GMM(core=0.4, outline=8)
    shape, box = (40, 30), (3, 5, 37, 29)
    region = box_mask(shape, box)
    first = outline_priors(model, region, box, np)
    again = outline_priors(model, box_mask(shape, box), box, np)
    assert again[0] is first[0] and first[1] is None
    other = outline_priors(model, box_mask(shape, (4, 5, 37, 29)), (4, 5, 37, 29), np)
    assert other[0] is not first[0]
    np.testing.assert_array_equal(first[0], outline_cost(region, 8.0, 0.35))
    # the learned model's box (its own reach and pixel limit): the same cost, kept too
    learned = Learned()
    kept = outline_priors(learned, region, box, np)
    np.testing.assert_array_equal(kept[0], learned.outline_costs(region))
    assert outline_priors(learned, region, box, np)[0] is kept[0]


def test_the_gmm_outline_knob_is_checked_and_round_trips():
    assert GMM().outline == 0.0
    model = GMM(core=0.4, outline=8)
    assert model.settings() == {"model": "gmm", "core": 0.4, "outline": 8.0}
    assert model_from_settings(model.settings()) == model
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="outline"):
            GMM(outline=bad)


def test_a_heavier_outline_cost_gives_nested_masks_that_leave_the_sides(monkeypatch):
    """One fit and one cut (no iterations, no tightness prior): the models are the same and
    the outline cost only raises the object's costs, so each heavier cost's mask lies inside
    the lighter one's (the minimum cut's monotonicity); an object cut by the box's sides
    loses its pixels there first."""
    from graphcut.segmentation import _tightness
    monkeypatch.setattr(_tightness, "ENABLED", False)
    rng = np.random.default_rng(0)
    image = np.clip(rng.normal(60, 10, (80, 100, 3)), 0, 255)
    image[30:50, :] = (200, 60, 60)          # a band that the box's sides cut through
    image = image.astype(np.uint8)
    box = (16, 20, 64, 80)
    masks = [graphcut.segment(image, box=box, device="cpu",
                              model=GMM(core=0.4, iterations=0, outline=s))
             for s in (0, 1, 2, 8)]
    for lighter, heavier in zip(masks, masks[1:]):
        assert not (heavier & ~lighter).any()
    assert masks[0][30:50, 20:80].all()                       # no cost: the whole band
    assert masks[2][30:50, 40:60].all() and not masks[2][30:50, 20:80].all()


def test_a_lasso_and_a_volume_box_take_the_transform_and_keep_their_constraints():
    rng = np.random.default_rng(1)
    image = np.clip(rng.normal(60, 10, (40, 50, 3)), 0, 255)
    image[12:28, 15:35] = (200, 60, 60)
    image = image.astype(np.uint8)
    lasso = [(8, 10), (8, 40), (32, 40), (32, 10)]
    model = GMM(core=0.4, outline=8)
    mask = graphcut.segment(image, lasso=lasso, model=model, device="cpu")
    assert mask[14:26, 17:33].all() and not mask[:7].any() and not mask[34:].any()
    volume = np.clip(rng.normal(0.2, 0.05, (6, 30, 30)), 0, 1)
    volume[1:5, 8:22, 8:22] = 0.8
    box = (0, 5, 5, 6, 25, 25)
    mask = graphcut.segment(volume, box=box, model=GMM(core=0.4, outline=8), device="cpu",
                            channel_axis=None)
    assert mask[2:4, 10:20, 10:20].all()
    assert not mask[:, :5].any() and not mask[:, 25:].any()
