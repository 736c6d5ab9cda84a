"""The twelfth round's coarse-to-fine pieces (bench/stereo_coarse_fine.py) and the cubic
shift of the sub-pixel costs, each checked against an independent evaluation: the upsampled
planes against the fine plane they came from (through the library's own block-mean
reduction and a least-squares fit), the upsampled costs against direct indexing, the cubic
shift against a continuous texture; and the held-out pairs refused."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from graphcut.stereo import subpixel_census_costs
from graphcut.stereo.io import downscale_pair

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import stereo_coarse_fine as c2f  # noqa: E402


@pytest.mark.parametrize("a, b, c", [(0.3, -0.2, 7.0), (-0.8, 0.45, 30.0), (0.0, 0.0, 5.5)])
def test_upsampled_planes_give_back_the_fine_plane(a, b, c):
    h, w = 21, 30                                    # odd rows: the last row beyond the blocks
    ys, xs = np.indices((h, w))
    fine = a * xs + b * ys + c
    image = np.zeros((h, w, 3), np.uint8)
    coarse = downscale_pair(image, image, fine, 2)[2]   # the library's reduction of a map
    cy, cx = np.indices(coarse.shape)
    design = np.stack([cx.ravel(), cy.ravel(), np.ones(cx.size)], axis=1)
    fitted = np.linalg.lstsq(design, coarse.ravel(), rcond=None)[0]
    planes = np.broadcast_to(fitted[:, None, None], (3,) + coarse.shape)
    up = c2f.upsampled(planes, (h, w))
    assert np.allclose(up[0] * xs + up[1] * ys + up[2], fine, atol=1e-9)
    # the wrong centre convention (coarse x at fine 2 x) would miss by (a + b) / 2
    naive = fitted[0] * xs + fitted[1] * ys + 2 * fitted[2]
    assert np.allclose(naive - fine, (a + b) / 2)


def test_upsampled_costs_read_each_block_at_half_the_disparity():
    rng = np.random.default_rng(3)
    coarse = rng.integers(0, 100, (6, 4, 5)).astype(np.int32)
    levels, shape = 11, (9, 10)
    up = c2f.upsampled_costs(coarse, shape, levels)
    for d in range(levels):
        for y in range(shape[0]):
            for x in range(shape[1]):
                cy, cx = min(y // 2, 3), min(x // 2, 4)
                low, high = d // 2, min(d // 2 + 1, 5)
                want = coarse[low, cy, cx] if d % 2 == 0 else \
                    (coarse[low, cy, cx] + coarse[high, cy, cx]) / 2
                assert up[d, y, x] == pytest.approx(want)


def texture(x, y):
    """A smooth (band-limited) grey texture, any real x."""
    return 128 + 60 * np.sin(0.7 * x + 0.3 * y) + 40 * np.cos(1.1 * x - 0.5 * y + 1.0)


@pytest.mark.parametrize("kind, most", [("cubic", 0.05), ("keys", 0.3)])
def test_cubic_shifts_match_a_fractional_disparity_better_than_linear(kind, most):
    h, w, d = 20, 60, 3.5                            # right(x) = texture(x); left = right(x - d)
    ys, xs = np.indices((h, w)).astype(float)
    right = np.repeat(texture(xs, ys)[..., None], 3, axis=2)
    left = np.repeat(texture(xs - d, ys)[..., None], 3, axis=2)
    index = int(d * 4)
    costs = {k: subpixel_census_costs(left, right, 5, 4, interpolation=k)[
        index, 5:-5, 10:-5].astype(float) for k in ("linear", kind)}
    # a linear shift by half a pixel blurs the right image; the cubic ones barely do
    assert costs[kind].mean() < most * costs["linear"].mean()
    # at integer disparities nothing is interpolated: both kinds are the same volume
    both = [subpixel_census_costs(left, right, 5, 4, interpolation=k)[::4]
            for k in ("linear", kind)]
    assert np.array_equal(*both)


def test_keys_shift_follows_a_smooth_row():
    from graphcut.stereo._subpixel_costs import _keys_shift
    x = np.arange(40.0)
    row = np.sin(0.5 * x)[None, :, None]
    for f in (0.25, 0.5, 0.75):
        shifted = _keys_shift(row, f)[0, 3:-3, 0]
        assert np.abs(shifted - np.sin(0.5 * (x - f))[3:-3]).max() < 0.005
        linear = ((1 - f) * row[0, 1:, 0] + f * row[0, :-1, 0])[2:-3]
        assert np.abs(linear - np.sin(0.5 * (x[1:] - f))[2:-3]).max() > 0.01


def test_unknown_interpolation_is_refused():
    image = np.zeros((6, 8, 1))
    with pytest.raises(ValueError, match="interpolation"):
        subpixel_census_costs(image, image, 2, 2, interpolation="nearest")


@pytest.mark.parametrize("scene", ["cones", "motorcycle", "pillars"])
def test_held_out_pairs_are_refused(scene):
    from stereo_occlusion import variants_main
    with pytest.raises(SystemExit) as stop:
        variants_main(["--scenes", scene], "test", c2f.run_variant, ("defaults",))
    assert stop.value.code == 2
