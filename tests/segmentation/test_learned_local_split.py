"""The learned model's intensity prior split locally (graphcut/models/_local_split.py,
``Learned(split="local")``). Checked: the threshold map against the formula computed by hand
pixel by pixel (its Gaussian means and peaks from explicit sums and loops); the split never
above Otsu's and its object side the nuclei's for bright and dark nuclei alike; on a scene
of bright and dim nuclei under uneven light, the dim nuclei join the object's side and the
bright nuclei's halos do not, where Otsu's misses the dim ones; the knob's values and the
prior's split switched by it; incremental == fresh through a session; the CuPy stand-in splits
as NumPy does."""

import numpy as np
import pytest
from scipy import ndimage
from skimage.filters import threshold_otsu

import graphcut
from graphcut.models import Learned
from graphcut.models._features import pixel_features
from graphcut.models._guide import prior_sides
from graphcut.models import _local_split
from graphcut.models._local_split import local_bright_side, local_threshold
from graphcut.models._prior import bright_side
from session_oracle import assert_session_updates_are_fresh_segments

from test_learned_fake_cupy import cupy  # noqa: F401 - the stand-in CuPy fixture


def _gaussian_by_hand(grey, sigma, mode):
    """A separable Gaussian filter (truncated at 4 sigma, as SciPy's) by explicit sums, the
    border ``nearest`` (replicated) or ``reflect`` (mirrored with the edge pixel)."""
    radius = int(4.0 * sigma + 0.5)
    offsets = np.arange(-radius, radius + 1)
    kernel = np.exp(-0.5 * (offsets / sigma) ** 2)
    kernel /= kernel.sum()

    def index(i, n):
        if mode == "nearest":
            return min(max(i, 0), n - 1)
        while not 0 <= i < n:  # reflect: ... 1 0 | 0 1 2 ... n-1 | n-1 n-2 ...
            i = -i - 1 if i < 0 else 2 * n - 1 - i
        return i

    out = grey.astype(np.float64)
    for axis in (0, 1):
        moved = np.moveaxis(out, axis, 0)
        n = moved.shape[0]
        done = np.zeros_like(moved)
        for i in range(n):
            done[i] = sum(w * moved[index(i + o, n)] for o, w in zip(offsets, kernel))
        out = np.moveaxis(done, 0, axis)
    return out


def _threshold_by_hand(grey, block, radius, share):
    otsu = float(threshold_otsu(grey.reshape(-1)))
    median = float(np.median(grey))
    local = _gaussian_by_hand(grey, (block - 1) / 6.0, "nearest")
    smooth = _gaussian_by_hand(grey, 2.0, "reflect")
    rows, cols = grey.shape
    peak = np.empty_like(smooth)
    for r in range(rows):
        for c in range(cols):
            peak[r, c] = smooth[max(0, r - radius):r + radius + 1,
                                max(0, c - radius):c + radius + 1].max()
    expected = np.minimum(otsu, np.maximum.reduce(
        [local, np.full(grey.shape, 0.5 * (otsu + median)), median + share * (peak - median)]))
    return expected, otsu


def _scene(dark_nuclei=False, seed=0):
    """Bright nuclei (grey 0.9) and dim ones (0.35) with soft rims on a background lit
    unevenly (0.05 to 0.2 from left to right), a little noise: grey (H, W), the nuclei's truth
    and the dim nuclei's mask. ``dark_nuclei``: the grey turned over (stained tissue)."""
    rng = np.random.default_rng(seed)
    rows, cols = 96, 128
    yy, xx = np.mgrid[:rows, :cols]
    truth = np.zeros((rows, cols), bool)
    dim = np.zeros((rows, cols), bool)
    grey = 0.05 + 0.15 * xx / cols
    for k, (r, c) in enumerate([(20, 20), (20, 64), (24, 104), (70, 24), (72, 70), (66, 108)]):
        disk = (yy - r) ** 2 + (xx - c) ** 2 <= 8 ** 2
        truth |= disk
        if k % 2:
            dim |= disk
        grey = np.where(disk, 0.35 if k % 2 else 0.9, grey)
    grey = ndimage.gaussian_filter(grey, 1.0) + rng.normal(0, 0.01, grey.shape)
    return (1.0 - grey if dark_nuclei else grey), truth, dim


@pytest.mark.parametrize("block,radius,share", [(21, 4, 0.3), (31, 6, 0.5)])
def test_threshold_equals_the_formula_by_hand(block, radius, share):
    grey = _scene(seed=block)[0][:40, :48]
    threshold, otsu = local_threshold(grey, block=block, radius=radius, share=share)
    expected, expected_otsu = _threshold_by_hand(grey, block, radius, share)
    assert otsu == pytest.approx(expected_otsu)
    # blocks this small are filtered whole (no shrinking): the formula to float32 rounding
    np.testing.assert_allclose(threshold, expected, rtol=0, atol=1e-6)
    assert (threshold <= otsu).all() and (threshold < otsu).any()


@pytest.mark.parametrize("dark_nuclei", [False, True])
def test_dim_nuclei_join_the_object_side_and_halos_do_not(dark_nuclei):
    grey, truth, dim = _scene(dark_nuclei)
    features = pixel_features(grey[..., None].astype(np.float32), scales=(1.0,))
    local = local_bright_side(features, 1)
    otsu = bright_side(features, 1)
    nuclei_local, nuclei_otsu = (~local, ~otsu) if dark_nuclei else (local, otsu)
    assert (nuclei_local | ~nuclei_otsu).all()      # only more pixels on the nuclei's side
    core = ndimage.binary_erosion(truth, iterations=2)
    far = ~ndimage.binary_dilation(truth, iterations=2)
    # Otsu's split misses the dim nuclei (its threshold lies between them and the bright)
    assert nuclei_otsu[core & dim].mean() < 0.2
    assert nuclei_local[core].mean() > 0.98          # all nuclei's cores, dim ones included
    assert nuclei_local[far].mean() < 0.01           # neither halos nor the lit background
    iou = (nuclei_local & truth).sum() / (nuclei_local | truth).sum()
    assert iou > 0.75 > 0.6 > (nuclei_otsu & truth).sum() / (nuclei_otsu | truth).sum()


def test_the_knob_switches_the_prior_split():
    default = Learned().split
    assert default in ("otsu", "local")
    for kind in ("otsu", "local"):     # a knob saved when not the default, and read back
        saved = Learned(split=kind).settings()
        assert saved == ({"model": "learned"} if kind == default else
                         {"model": "learned", "split": kind})
        assert graphcut.models.model_from_settings(saved).split == kind
    with pytest.raises(ValueError, match="split"):
        Learned(split="sauvola")
    grey, truth, dim = _scene()
    features = pixel_features(grey[..., None].astype(np.float32), scales=(1.0,))
    samples = (truth & ~ndimage.binary_dilation(~truth, iterations=3),
               ~ndimage.binary_dilation(truth, iterations=3))
    for kind, expected in (("otsu", bright_side(features, 1)),
                           ("local", local_bright_side(features, 1))):
        model = Learned(split=kind)
        model._channels = 1
        masks, strength, split = prior_sides(model, features, samples)
        assert strength == 1.0 and masks[0] is split[2]
        np.testing.assert_array_equal(split[2], expected)
        model.split = "otsu" if kind == "local" else "local"   # a changed knob: split again
        assert prior_sides(model, features, samples)[2][2] is not split[2]


def test_incremental_updates_are_fresh_segments():
    grey, truth, dim = _scene()
    image = (255 * np.clip(grey, 0, 1)).astype(np.uint8)
    states = []
    seeds = np.zeros(image.shape, np.uint8)
    for label, (r, c) in [(1, (20, 20)), (2, (45, 60)), (1, (20, 64)), (2, (5, 120)),
                          (1, (72, 70))]:
        seeds[r - 2:r + 3, c - 2:c + 3] = label
        states.append(seeds.copy())
    states = states[1:]                     # from the first background click
    assert_session_updates_are_fresh_segments(image, Learned(split="local"), states)
    mask = graphcut.segment(image, states[-1], model=Learned(split="local"))
    assert (mask & truth).sum() / (mask | truth).sum() > 0.8


def test_gpu_stand_in_splits_like_numpy(cupy, monkeypatch):  # noqa: F811
    """The stand-in's ``cupyx.scipy.ndimage`` (SciPy's filters, tests/support/fake_cupy.py),
    against NumPy's SciPy path (OpenCV's: tests/segmentation/test_local_split_fast.py)."""
    monkeypatch.setattr(_local_split, "_opencv", lambda xp, grey: None)
    for dark_nuclei in (False, True):
        grey = _scene(dark_nuclei)[0][..., None].astype(np.float32)
        on_device = local_bright_side(pixel_features(cupy.asarray(grey)), 1)
        assert type(on_device).__module__.split(".")[0] == "cupy"
        np.testing.assert_array_equal(np.asarray(on_device),
                                      local_bright_side(pixel_features(grey), 1))


@pytest.mark.gpu
def test_gpu_split_and_session_like_the_cpu():
    """On a GPU (CuPy's own filters) the split equals NumPy's but for pixels at the threshold
    (float rounding), and a session answers as a fresh GPU segment given the previous update."""
    real = pytest.importorskip("cupy")
    for dark_nuclei in (False, True):
        grey = _scene(dark_nuclei)[0][..., None].astype(np.float32)
        on_device = real.asnumpy(local_bright_side(pixel_features(real.asarray(grey)), 1))
        assert (on_device != local_bright_side(pixel_features(grey), 1)).mean() < 1e-3
    grey, truth, dim = _scene()
    image = (255 * np.clip(grey, 0, 1)).astype(np.uint8)
    seeds = np.zeros(image.shape, np.uint8)
    states = []
    for label, (r, c) in [(1, (20, 20)), (2, (45, 60)), (1, (20, 64)), (2, (5, 120))]:
        seeds[r - 2:r + 3, c - 2:c + 3] = label
        states.append(seeds.copy())
    assert_session_updates_are_fresh_segments(image, Learned(split="local"), states[1:],
                                              device="cuda")



def test_a_box_fits_with_the_box_knobs(monkeypatch):
    """With a box or lasso the prior's knobs are ``box_prior`` and ``box_split`` (0.6 and
    Otsu's: the local split and 0.75 cost the dev boxes' small nuclei), from strokes alone
    ``prior`` and ``split``: the pipeline flags each fit (``model.region``), through a
    session too, and each pair of knobs reaches only its own fits."""
    import graphcut.models._guide as guide_module
    import graphcut.models._learned as learned_module

    seen = []
    original = guide_module.prior_knobs

    def recorded(model):
        seen.append((model.region, original(model)))
        return seen[-1][1]
    monkeypatch.setattr(guide_module, "prior_knobs", recorded)
    monkeypatch.setattr(learned_module, "prior_knobs", recorded)
    grey, truth, dim = _scene()
    image = (255 * np.clip(grey, 0, 1)).astype(np.uint8)
    box = (6, 6, 34, 36)
    seeds = np.zeros(image.shape, np.uint8)
    seeds[18:23, 18:23], seeds[70:75, 68:73], seeds[43:48, 58:63] = 1, 1, 2

    def calls(run):
        seen.clear()
        out = run()
        return out, set(seen)
    for knobs, on_box, on_strokes in (({}, (0.6, "otsu"), (0.75, "local")),
                                      ({"box_prior": 0.9, "box_split": "local", "prior": 0.5,
                                        "split": "otsu"}, (0.9, "local"), (0.5, "otsu"))):
        model = Learned(**knobs)
        assert calls(lambda: graphcut.segment(image, box=box, model=model, device="cpu"))[1] \
            == {(True, on_box)}
        assert calls(lambda: graphcut.segment(image, seeds, model=model, device="cpu"))[1] \
            == {(False, on_strokes)}
        session = graphcut.Segmenter(image, model=Learned(**knobs), device="cpu")
        assert calls(lambda: session.update(None, box=box))[1] == {(True, on_box)}
        assert calls(lambda: session.update(seeds))[1] == {(False, on_strokes)}
    strokes = [graphcut.segment(image, seeds, model=Learned(**knobs), device="cpu")
               for knobs in ({}, {"box_prior": 0.9, "box_split": "local"},
                             {"prior": 0.6, "split": "otsu"})]
    np.testing.assert_array_equal(strokes[0], strokes[1])
    assert (strokes[0] != strokes[2]).any()
    assert Learned(box_split="local", box_prior=0.9).settings() == {
        "model": "learned", "box_prior": 0.9, "box_split": "local"}
    with pytest.raises(ValueError, match="split"):
        Learned(box_split="sauvola")
    with pytest.raises(ValueError, match="box_prior"):
        Learned(box_prior=-1)
