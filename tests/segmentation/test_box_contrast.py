"""The contrast term's sigma from the box (graphcut/segmentation/_box_contrast.py): with the
learned model and no sigma given, a box's n-links take half the RMS colour difference of the
box's own neighbour pairs (checked against a direct NumPy computation); the user's sigma
always wins; other models keep the image's; a Segmenter's updates with boxes that arrive,
change and go equal fresh segment()s (mask and flow), on the CPU and on the GPU."""

import numpy as np
import pytest
from scipy import ndimage

import graphcut
from graphcut.segmentation import _box_contrast, estimate_sigma
from graphcut.segmentation._box_contrast import box_sigma
from graphcut.segmentation._neighbours import estimate_sigma8


def _rms_of_box(image, box, diagonals=False):
    """The root mean square of the colour differences of the box's neighbour pairs
    (right and down; with ``diagonals`` both diagonals too), image scaled to 0..1."""
    r0, c0, r1, c1 = box
    part = image[r0:r1, c0:c1].astype(np.float64) / 255.0
    pairs = [part[:, 1:] - part[:, :-1], part[1:] - part[:-1]]
    if diagonals:
        pairs += [part[1:, 1:] - part[:-1, :-1], part[1:, :-1] - part[:-1, 1:]]
    squares = np.concatenate([(d ** 2).ravel() for d in pairs])
    return float(np.sqrt(squares.mean()))


def _scene(seed=0):
    """A soft nucleus in the box; sharp bright nuclei and noise elsewhere (the image's
    contrast is not the box's)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[:70, :90]
    image = 30 + 25 * rng.standard_normal((70, 90))
    for row, col in [(10, 12), (58, 75), (12, 70), (55, 15)]:
        image[(yy - row) ** 2 + (xx - col) ** 2 < 7 ** 2] += 200
    truth = (yy - 35) ** 2 + ((xx - 45) / 1.3) ** 2 < 6 ** 2
    soft = ndimage.gaussian_filter(truth * 110.0, 1.5)
    image[25:46, 31:60] = 40 + soft[25:46, 31:60] + 4 * rng.standard_normal((21, 29))
    return np.clip(image, 0, 255).astype(np.uint8), truth, (27, 34, 44, 57)


@pytest.mark.parametrize("seed", range(4))
def test_the_box_sigma_is_half_the_rms_of_its_pairs(seed):
    rng = np.random.default_rng(seed)
    image = rng.integers(0, 256, (30, 40)).astype(np.uint8)
    r0, c0 = int(rng.integers(0, 15)), int(rng.integers(0, 20))
    box = (r0, c0, r0 + int(rng.integers(2, 15)), c0 + int(rng.integers(2, 20)))
    values = image[..., None] / 255.0
    assert box_sigma(values, box) == pytest.approx(0.5 * _rms_of_box(image, box), rel=1e-12)
    assert box_sigma(values, box, connectivity=8) == pytest.approx(
        0.5 * _rms_of_box(image, box, diagonals=True), rel=1e-12)
    with pytest.raises(ValueError, match="box"):
        box_sigma(values, (0, 0, 31, 5))


@pytest.mark.parametrize("connectivity", [4, 8])
def test_a_box_takes_its_own_sigma_with_the_learned_model(connectivity):
    image, _, box = _scene()
    r0, c0, r1, c1 = box
    own = 0.5 * _rms_of_box(image, box, diagonals=connectivity == 8)
    whole = estimate_sigma(image) if connectivity == 4 else estimate_sigma8(image[..., None]
                                                                            / 255.0)
    assert own < 0.5 * whole  # the scene's point: the box's contrast is not the image's
    options = dict(box=box, model="learned", device="cpu", return_result=True,
                   connectivity=connectivity)
    mask, result = graphcut.segment(image, **options)
    given, given_result = graphcut.segment(image, sigma=own, **options)
    np.testing.assert_array_equal(mask, given)
    assert result.flow == given_result.flow
    _, image_sigma = graphcut.segment(image, sigma=whole, **options)
    assert image_sigma.flow != result.flow  # the image's sigma is another energy


def test_the_users_sigma_wins_and_other_models_keep_the_images(monkeypatch):
    image, _, box = _scene(1)
    runs = [dict(model="learned", sigma=0.2), dict(model="histogram"), dict(model="gmm")]
    before = [graphcut.segment(image, box=box, device="cpu", return_result=True, **run)
              for run in runs]
    monkeypatch.setattr(_box_contrast, "BOX_SIGMA_SHARE", None)  # off
    for run, (mask, result) in zip(runs, before):
        off, off_result = graphcut.segment(image, box=box, device="cpu", return_result=True,
                                           **run)
        np.testing.assert_array_equal(mask, off, err_msg=str(run))
        assert result.flow == off_result.flow, run


def test_a_volumes_box_keeps_the_volumes_sigma(monkeypatch):
    rng = np.random.default_rng(4)
    volume = (rng.random((6, 20, 24)) * 60).astype(np.uint8)
    volume[2:5, 6:14, 8:16] += 150
    box = (1, 4, 6, 6, 16, 18)
    options = dict(box=box, model="learned", device="cpu", channel_axis=None,
                   return_result=True)
    mask, result = graphcut.segment(volume, **options)
    monkeypatch.setattr(_box_contrast, "BOX_SIGMA_SHARE", None)
    off, off_result = graphcut.segment(volume, **options)
    np.testing.assert_array_equal(mask, off)
    assert result.flow == off_result.flow


def _boxes_and_strokes(truth, box):
    """Updates (seeds, box): a box, another box, the box with strokes, strokes alone, the
    first box again."""
    seeds = np.zeros(truth.shape, np.uint8)
    seeds[35, 44:47] = 1
    seeds[30, 35] = 2
    wider = (box[0] - 3, box[1] - 3, box[2] + 3, box[3] + 3)
    strokes = seeds.copy()
    strokes[2:4, 2:40] = 2
    return [(None, box), (None, wider), (seeds, wider), (strokes, None), (None, box)]


@pytest.mark.parametrize("connectivity", [4, 8])
def test_segmenter_updates_with_boxes_equal_fresh_segments(connectivity):
    image, truth, box = _scene(2)
    session = graphcut.Segmenter(image, model="learned", device="cpu",
                                 connectivity=connectivity)
    for step, (seeds, where) in enumerate(_boxes_and_strokes(truth, box)):
        mask = session.update(seeds, box=where)
        fresh, result = graphcut.segment(image, seeds, box=where, model="learned",
                                         device="cpu", return_result=True,
                                         connectivity=connectivity)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow, step


def test_the_box_sigma_finds_the_soft_nucleus():
    """Ground truth: the soft nucleus's mask from its box."""
    image, truth, box = _scene(3)
    mask = graphcut.segment(image, box=box, model="learned", device="cpu")
    assert (mask & truth).sum() / (mask | truth).sum() > 0.7


@pytest.mark.gpu
def test_the_gpu_rebuilds_the_boxes_nlinks():
    """On the GPU: the box's sigma equals the CPU's, a session's updates equal fresh GPU
    segment()s (mask and flow) and the default equals the box's sigma given explicitly."""
    cupy = pytest.importorskip("cupy")
    image, truth, box = _scene(2)
    values = cupy.asarray(image[..., None] / 255.0)
    assert box_sigma(values, box) == pytest.approx(box_sigma(cupy.asnumpy(values), box),
                                                   rel=1e-12)
    session = graphcut.Segmenter(image, model="learned", device="cuda")
    for step, (seeds, where) in enumerate(_boxes_and_strokes(truth, box)):
        mask = session.update(seeds, box=where)
        fresh, result = graphcut.segment(image, seeds, box=where, model="learned",
                                         device="cuda", return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow, step
    own = 0.5 * _rms_of_box(image, box)
    _, default = graphcut.segment(image, box=box, model="learned", device="cuda",
                                  return_result=True)
    _, given = graphcut.segment(image, box=box, model="learned", device="cuda", sigma=own,
                                return_result=True)
    assert default.flow == given.flow
