"""GMM(warm=True) with a box on an image larger than the coarse grid: the box's iterations
run on the coarse grid (graphcut/segmentation/_warm.py, ``COARSE_BOX``), then one refit and
one full-size cut. The box's mask obeys the box and finds the object (ground truth), and the
Segmenter's answers (box alone, then strokes) equal fresh segment()s, flows included."""

import numpy as np
import pytest

import graphcut
from graphcut.segmentation import _warm
from graphcut.segmentation._coarse import coarse_factor
from test_live_gmm import WARM, _scene, _strokes


def test_the_box_alone_iterates_on_the_coarse_grid_and_finds_the_object(monkeypatch):
    image, truth, box = _scene((300, 400), seed=3)
    assert coarse_factor(truth.shape) == 2
    mask, result = graphcut.segment(image, box=box, model=WARM, device="cpu",
                                    return_result=True)
    r0, c0, r1, c1 = box
    assert not mask[:r0].any() and not mask[r1:].any()
    assert not mask[:, :c0].any() and not mask[:, c1:].any()
    assert (mask & truth).sum() / (mask | truth).sum() > 0.95
    assert result.stats["iterations"] == 0  # one full-size refit and cut after the coarse loop
    monkeypatch.setattr(_warm, "COARSE_BOX", False)  # the iterations at full size
    full = graphcut.segment(image, box=box, model=WARM, device="cpu")
    assert (full & truth).sum() / (full | truth).sum() > 0.95


def test_segmenter_with_a_box_equals_fresh_segments():
    image, truth, box = _scene((300, 400), seed=4)
    seeds = np.zeros(truth.shape, np.uint8)
    session = graphcut.Segmenter(image, model=WARM, device="cpu")
    mask = session.update(None, box=box)
    np.testing.assert_array_equal(mask, graphcut.segment(image, box=box, model=WARM,
                                                         device="cpu"))
    r0, c0, r1, c1 = box
    inside = np.zeros(truth.shape, bool)
    inside[r0:r1, c0:c1] = True
    for step, (where, label) in enumerate(_strokes(truth, np.random.default_rng(5), 4)):
        if label == 1 and not inside[where].all():
            continue
        seeds[where] = label
        mask = session.update(seeds, box=box)
        fresh, result = graphcut.segment(image, seeds, box=box, model=WARM, device="cpu",
                                         return_result=True)
        np.testing.assert_array_equal(mask, fresh, err_msg=f"step {step}")
        assert session.last_result.flow == result.flow
        assert (mask[seeds == 1]).all() and not mask[seeds == 2].any()


@pytest.mark.gpu
def test_the_gpu_box_and_strokes_give_the_cpus_masks():
    """The coarse box iterations and the strokes after them on the GPU (the split of the
    coarse sample on the host) against a fresh CPU segment()."""
    image, truth, box = _scene((300, 400), seed=6)
    seeds = np.zeros(truth.shape, np.uint8)
    session = graphcut.Segmenter(image, model=WARM, device="cuda")
    mask = session.update(None, box=box)
    np.testing.assert_array_equal(mask, graphcut.segment(image, box=box, model=WARM,
                                                         device="cpu"))
    for step, (where, label) in enumerate(_strokes(truth, np.random.default_rng(7), 4)):
        if label == 1 and not truth[where].all():
            continue
        seeds[where] = label
        mask = session.update(seeds, box=box)
        expected = graphcut.segment(image, seeds, box=box, model=WARM, device="cpu")
        np.testing.assert_array_equal(mask, expected, err_msg=f"step {step}")
