"""The outline cost of a box or lasso (graphcut/segmentation/_outline.py, ``GMM(outline=...)``):
the closed form for a box equals the distance transform's cost, it is kept on the model for
the next strokes, and the GMM's knob is checked and round-trips through settings."""

import numpy as np
import pytest

import graphcut
from graphcut.models import GMM, Learned, model_from_settings
from graphcut.models._prior import outline_cost
from graphcut.segmentation import _outline
from graphcut.segmentation._outline import box_outline_cost, outline_priors
from graphcut.segmentation._regions import box_mask


def open_border_cost(shape, box, strength, reach, max_reach):
    """The oracle of a box's outline cost when its sides on the image border count for
    nothing: a distance transform on a canvas where the box runs on past those sides, the
    cost's scale from the box's own transform (the image border counting)."""
    from scipy import ndimage
    h, w = shape
    pad = 2 * max(h, w)
    r0, c0, r1, c1 = box
    canvas = np.zeros((h + 2 * pad, w + 2 * pad), bool)
    canvas[pad + r0 - (pad - 1 if r0 == 0 else 0):pad + r1 + (pad - 1 if r1 == h else 0),
           pad + c0 - (pad - 1 if c0 == 0 else 0):pad + c1 + (pad - 1 if c1 == w else 0)] = True
    distance = ndimage.distance_transform_edt(canvas)[pad:pad + h, pad:pad + w]
    own = ndimage.distance_transform_edt(np.pad(box_mask(shape, box), 1))[1:-1, 1:-1]
    scale = min(reach * own.max(), max_reach or np.inf)
    return np.where(box_mask(shape, box), strength * np.clip(1 - distance / scale, 0, 1), 0.0)


BOXES = [((0, 0, 40, 30), 0.35, None), ((3, 5, 37, 29), 0.35, 10.0),
         ((10, 2, 13, 30), 0.5, None), ((1, 1, 39, 29), 1.0, 3.0), ((0, 4, 25, 30), 0.35, None),
         ((6, 0, 40, 17), 0.5, 6.0)]


@pytest.mark.parametrize("box,reach,max_reach", BOXES)
def test_the_closed_form_equals_the_distance_transform(box, reach, max_reach, monkeypatch):
    """With the image border counted as outside (``BORDER_SHARE`` 1), the closed form is the
    distance transform's cost of the box's region."""
    monkeypatch.setattr(_outline, "BORDER_SHARE", 1.0)
    shape = (40, 30)
    expected = outline_cost(box_mask(shape, box), 8.0, reach, max_reach=max_reach)
    got = box_outline_cost(shape, box, 8.0, reach, max_reach)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    assert got[box[0], box[1]] == pytest.approx(8.0 * max(0.0, 1 - 1 / min(
        reach * min(np.ceil((box[2] - box[0]) / 2), np.ceil((box[3] - box[1]) / 2)),
        max_reach or np.inf)))


@pytest.mark.parametrize("box,reach,max_reach", BOXES)
def test_a_side_on_the_image_border_costs_nothing(box, reach, max_reach):
    """The default (``BORDER_SHARE`` 0): the distance transform's cost on a canvas where the
    box runs on past its sides on the image border; a box inside the image is unchanged."""
    assert _outline.BORDER_SHARE == 0.0
    shape = (40, 30)
    got = box_outline_cost(shape, box, 8.0, reach, max_reach)
    np.testing.assert_allclose(got, open_border_cost(shape, box, 8.0, reach, max_reach),
                               rtol=0, atol=1e-12)
    if 0 not in box[:2] and box[2] < shape[0] and box[3] < shape[1]:
        np.testing.assert_array_equal(
            got, outline_cost(box_mask(shape, box), 8.0, reach, max_reach=max_reach))


def test_an_object_cut_by_the_image_border_keeps_its_pixels_there(monkeypatch):
    """A faint band (10 grey levels above the noise's mean, sd 10) running out of the image
    on both sides, a box reaching the border there: with the border's sides costed
    (``BORDER_SHARE`` 1) the 8 nats at the outline outweigh the colour and the band is lost;
    with the default it is kept. One fit and one cut, no tightness prior."""
    from graphcut.segmentation import _tightness
    monkeypatch.setattr(_tightness, "ENABLED", False)
    rng = np.random.default_rng(0)
    image = np.clip(rng.normal(60, 10, (80, 100, 3)), 0, 255)
    image[20:60, :] += 10
    image = image.astype(np.uint8)
    truth = np.zeros((80, 100), bool)
    truth[20:60] = True

    def iou():
        mask = graphcut.segment(image, box=(16, 0, 64, 100), device="cpu",
                                model=GMM(core=0.4, iterations=0, outline=8))
        return (mask & truth).sum() / (mask | truth).sum()
    assert iou() > 0.95
    monkeypatch.setattr(_outline, "BORDER_SHARE", 1.0)
    assert iou() < 0.5


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


@pytest.mark.gpu
def test_the_device_cost_equals_the_hosts_with_a_side_on_the_border():
    """The closed form made on the GPU (CuPy) equals NumPy's, for boxes inside the image and
    on its border (the border's sides open)."""
    cupy = pytest.importorskip("cupy")
    for box, reach, max_reach in BOXES:
        got = box_outline_cost((40, 30), box, 8.0, reach, max_reach, xp=cupy)
        np.testing.assert_array_equal(cupy.asnumpy(got),
                                      box_outline_cost((40, 30), box, 8.0, reach, max_reach))
