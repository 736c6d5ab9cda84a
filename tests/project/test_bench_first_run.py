"""bench/bench_first_run.py measures the default model's first session: check that its two
images get the models its table names (the default's choice on the CPU: no GPU needed) and
that its strokes are valid seeds of both labels."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import bench_first_run  # noqa: E402

import graphcut  # noqa: E402


@pytest.mark.parametrize("kind, model", [("micro", "learned"), ("photo", "gmm")])
def test_each_image_gets_the_model_the_table_names(kind, model):
    image = bench_first_run.bench_image(kind)
    session = graphcut.Segmenter(image, device="cpu")
    assert session.model.name == model
    for seeds in bench_first_run.user_strokes(image.shape):
        assert seeds.shape == image.shape[:2]
        assert set(np.unique(seeds)) == {0, 1, 2}
    mask = np.asarray(session.update(bench_first_run.user_strokes(image.shape)[0]))
    assert 0 < mask.sum() < mask.size


def test_the_micrograph_has_its_nuclei_bright_on_a_dim_ground():
    image = bench_first_run.synthetic_micrograph(128, nuclei=4)
    assert image.dtype == np.uint16
    ground, peak = np.percentile(image, [10, 99.9])
    assert 150 < ground < 250 and peak > 1000
