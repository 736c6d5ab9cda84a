"""The batch pipeline: every runner gives the serial run's masks and summary; on the GPU one
image solves at a time while others are read and written (checked with a stand-in GPU whose
solve stage records how many images are inside it at once)."""

from __future__ import annotations

import csv
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import graphcut
import graphcut.batch._image as image_stage
from graphcut.batch import (OK, ProcessRunner, ThreadRunner, default_runner, run_batch,
                            segment_file)
from synthetic import disc_image, disc_seeds


@pytest.fixture
def folders(tmp_path):
    images, seeds = tmp_path / "images", tmp_path / "seeds"
    images.mkdir()
    seeds.mkdir()
    for i in range(8):
        kind = "grey" if i % 2 else "colour"
        Image.fromarray(disc_image(kind, seed=i)).save(images / f"img{i}.png")
        Image.fromarray(disc_seeds()).save(seeds / f"img{i}.png")
    (images / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not a png")
    Image.fromarray(disc_seeds()).save(seeds / "broken.png")
    return images, seeds


def outputs(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*.png"))}


def rows(out: Path) -> list[dict]:
    with open(out / "summary.csv", newline="") as handle:
        found = list(csv.DictReader(handle))
    for row in found:
        row.pop("seconds")
        assert Path(row.pop("mask")).parent == out
    return found


@pytest.mark.parametrize("runner", [ThreadRunner(4), ProcessRunner(2)],
                         ids=["threads", "processes"])
def test_runners_give_the_serial_outputs(folders, tmp_path, runner):
    images, seeds = folders
    run_batch(images, seeds, tmp_path / "serial", device="cpu", overlay=True, jobs=1,
              progress=False)
    records = run_batch(images, seeds, tmp_path / "out", device="cpu", overlay=True,
                        progress=False, runner=runner)
    assert [r["status"] for r in records].count(OK) == 8
    assert outputs(tmp_path / "out") == outputs(tmp_path / "serial")  # byte-identical
    assert len(outputs(tmp_path / "out")) == 16
    assert rows(tmp_path / "out") == rows(tmp_path / "serial")


def test_default_runners():
    assert isinstance(default_runner("cuda"), ThreadRunner)
    assert default_runner("cuda").jobs == 8 and default_runner("cuda", jobs=3).jobs == 3
    assert isinstance(default_runner("cpu", jobs=2), ProcessRunner)
    assert isinstance(default_runner("cpu", jobs=1), ThreadRunner)
    with pytest.raises(ValueError, match="at least 1"):
        ThreadRunner(0)


class StandInGPU:
    """Replaces the solve stage's ``segment`` (and device resolution) so that the batch takes
    the GPU path; counts the images inside the solve stage and inside the read stage at once."""

    def __init__(self, monkeypatch):
        self.lock = threading.Lock()
        self.solving = self.reading = 0
        self.max_solving = self.max_reading = 0
        real_read = image_stage.read_image

        def segment(image, seeds, **kwargs):
            with self.lock:
                self.solving += 1
                self.max_solving = max(self.max_solving, self.solving)
            time.sleep(0.02)
            kwargs["device"] = "cpu"
            try:
                return graphcut.segment(image, seeds, **kwargs)
            finally:
                with self.lock:
                    self.solving -= 1

        def read_image(path, **kwargs):
            with self.lock:
                self.reading += 1
                self.max_reading = max(self.max_reading, self.reading)
            time.sleep(0.02)
            try:
                return real_read(path, **kwargs)
            finally:
                with self.lock:
                    self.reading -= 1

        monkeypatch.setattr(image_stage, "segment", segment)
        monkeypatch.setattr(image_stage, "read_image", read_image)
        monkeypatch.setattr(image_stage, "resolve_device", lambda device: "cuda")


def test_the_gpu_solves_one_image_at_a_time_while_others_are_read(folders, tmp_path,
                                                                  monkeypatch):
    images, seeds = folders
    expected = run_batch(images, seeds, tmp_path / "serial", device="cpu", jobs=1,
                         progress=False)
    gpu = StandInGPU(monkeypatch)
    records = run_batch(images, seeds, tmp_path / "out", device="cuda", progress=False,
                        runner=ThreadRunner(4))
    assert gpu.max_solving == 1  # the card: one image at a time
    assert gpu.max_reading >= 2  # decoding ahead in parallel
    assert [r["flow"] for r in records] == [r["flow"] for r in expected]
    assert outputs(tmp_path / "out") == outputs(tmp_path / "serial")
    waits = [r["wait_seconds"] for r in records if r["status"] == OK]
    assert max(waits) > 0.005  # some images waited for the card


def test_the_cpu_path_takes_no_lock(folders, tmp_path, monkeypatch):
    images, seeds = folders
    seen = []
    real = image_stage.segment

    def segment(*args, **kwargs):
        seen.append(image_stage.GPU_LOCK.locked())
        return real(*args, **kwargs)

    monkeypatch.setattr(image_stage, "segment", segment)
    run_batch(images, seeds, tmp_path / "out", device="cpu", progress=False,
              runner=ThreadRunner(2))
    assert seen and not any(seen)


@pytest.mark.gpu
def test_gpu_pipeline_gives_the_cpu_masks(folders, tmp_path):
    """On a real GPU: the threaded pipeline's masks equal the serial CPU run's, pixel for pixel
    and byte for byte (same flows, same PNG encoding), with the histogram (the same integers
    on both devices; the learned model's float scores may round apart)."""
    images, seeds = folders
    options = {"model": "histogram"}
    cpu = run_batch(images, seeds, tmp_path / "cpu", device="cpu", jobs=1, progress=False,
                    segment_options=options)
    gpu = run_batch(images, seeds, tmp_path / "gpu", device="cuda", jobs=4, progress=False,
                    segment_options=options)
    assert [r["backend"] for r in gpu if r["status"] == OK] == ["cuda"] * 8
    assert [r["flow"] for r in gpu] == [r["flow"] for r in cpu]
    assert outputs(tmp_path / "gpu") == outputs(tmp_path / "cpu")


def test_segment_file_on_an_image_it_cannot_read_in_time(tmp_path):
    """The stage times exist only for images that ran."""
    record = segment_file(tmp_path / "none.png", tmp_path / "none_seeds.png", tmp_path / "m.png")
    assert record["status"] == "failed" and "read_seconds" not in record
    assert np.isfinite(record["seconds"])


def _overlay_by_the_float_formula(image, mask, *, color=(255, 40, 0), opacity=0.45,
                                  outline=(255, 255, 0)):
    """The overlay as first written: float display values, float blend, rounded once."""
    from graphcut._arrays import image_as_float
    from graphcut.io._overlay import _inner_boundary
    values = image_as_float(image)
    low, high = float(values.min()), float(values.max())
    if low < 0.0 or high > 1.0:
        values = (values - low) / (high - low) if high > low else np.zeros_like(values)
    if values.shape[-1] == 1:
        values = np.repeat(values, 3, axis=-1)
    out = np.clip(np.rint(values * 255.0), 0, 255).astype(np.uint8).astype(np.float64)
    out[mask] = (1.0 - opacity) * out[mask] + opacity * np.asarray(color, dtype=np.float64)
    if outline is not None:
        out[_inner_boundary(mask)] = outline
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("shape,dtype", [
    ((40, 256), np.uint8), ((40, 256, 2), np.uint8), ((40, 256, 3), np.uint8),
    ((40, 256, 4), np.uint8), ((40, 256, 3), np.uint16), ((40, 256), np.float64),
    ((40, 256, 3), np.float32), ((40, 256), bool)])
def test_the_fast_overlay_equals_the_float_formula(shape, dtype):
    """The overlay (tabulated tint, uint8 shortcut) is the float formula's, pixel for pixel,
    for every uint8 level and random colours, opacities and masks."""
    from graphcut.io import overlay
    rng = np.random.default_rng(sum(shape))
    if dtype == np.uint8:
        image = rng.integers(0, 256, shape, dtype=np.uint8)
        image[0, :] = np.arange(256, dtype=np.uint8)[:, None] if len(shape) == 3 \
            else np.arange(256, dtype=np.uint8)  # every level in every channel
    elif dtype == bool:
        image = rng.random(shape) > 0.5
    elif np.issubdtype(dtype, np.integer):
        image = rng.integers(0, 65536, shape).astype(dtype)
    else:
        image = (rng.random(shape) * 1.4 - 0.2).astype(dtype)  # leaves [0, 1]: stretched
    for trial in range(4):
        mask = rng.random(shape[:2]) > 0.4
        style = dict(color=tuple(int(c) for c in rng.integers(0, 256, 3)),
                     opacity=float(rng.random()), outline=None if trial == 3 else (255, 255, 0))
        assert np.array_equal(overlay(image, mask, **style),
                              _overlay_by_the_float_formula(image, mask, **style))
