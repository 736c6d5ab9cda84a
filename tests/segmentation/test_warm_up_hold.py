"""warm_up (graphcut/segmentation/_warmup.py) for a model with a hold: besides the first
throwaway update it runs one at the gated hold's and at the plain hold's stroke counts, each
given the update before, so that the user's third and seventh strokes compile nothing.

On the CPU: a recording stand-in session (backend "cuda") sees those updates, the stroke counts
checked with the hold's own counter (on the coarse blocks of a large image too); on the GPU: in
a fresh process with an empty CuPy kernel cache, a learned session's first eight clicks after
warm_up make no compile request (the eleventh session measured a 4 s compile at the third)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from graphcut.models import GMM, Learned
from graphcut.segmentation import warm_up
from graphcut.segmentation._coarse import coarse_factor
from graphcut.segmentation._hold import stroke_count
from graphcut.segmentation._warmup import border_spots, hold_stroke_counts


class _RecordingSession:
    """A stand-in GPU Segmenter: records each update's seeds and previous, answers a mask."""

    backend = "cuda"

    def __init__(self, shape, model):
        self.shape, self.model, self.calls = shape, model, []

    def update(self, seeds, previous=None):
        self.calls.append((seeds.copy(), previous))
        return np.arange(seeds.size).reshape(seeds.shape) % 3 == len(self.calls) % 3


@pytest.mark.parametrize("shape", [(64, 80), (2048, 2048)])
def test_a_learned_session_is_warmed_at_the_holds_stroke_counts(shape):
    session = _RecordingSession(shape, Learned())
    warm_up(session)
    block = coarse_factor(shape)
    counts = [stroke_count(seeds, block) for seeds, _ in session.calls]
    assert counts == [2, 3, 7]
    assert session.calls[0][1] is None
    for (before, _), (seeds, previous), answer in zip(session.calls, session.calls[1:],
                                                      range(1, len(session.calls))):
        assert previous[0] is not seeds and np.array_equal(previous[0], before)
        expected = np.arange(seeds.size).reshape(shape) % 3 == answer % 3
        assert np.array_equal(previous[1], expected)  # the mask that update returned
        assert ((seeds != 0) >= (before != 0)).all()  # seeds are only added


@pytest.mark.parametrize("model, counts", [(GMM(), [2]), (Learned(hold=0), [2]),
                                           (Learned(confident_after=7), [2, 7]),
                                           (Learned(hold_after=30), [2, 3])])
def test_only_the_hold_stroke_counts_of_the_model_are_warmed(model, counts):
    session = _RecordingSession((40, 50), model)
    warm_up(session)
    assert [stroke_count(seeds) for seeds, _ in session.calls] == counts


def test_volumes_get_the_first_update_only():
    session = _RecordingSession((6, 20, 30), Learned())
    warm_up(session)
    assert len(session.calls) == 1


@pytest.mark.parametrize("shape", [(1, 2), (2, 2), (3, 3), (5, 4), (9, 9)])
def test_border_spots_stay_apart_on_small_images(shape):
    spots = border_spots(shape)
    taken = [(0, 0)] + spots
    assert len(set(taken)) == len(taken)
    for i, (r, c) in enumerate(taken):
        assert 0 <= r < shape[0] and 0 <= c < shape[1]
        for r2, c2 in taken[i + 1:]:
            assert max(abs(r - r2), abs(c - c2)) > 1


def test_tiny_images_are_warmed_without_error():
    session = _RecordingSession((3, 3), Learned())
    warm_up(session)
    assert len(session.calls) == 3 and all(s.shape == (3, 3) for s, _ in session.calls)


def test_hold_stroke_counts_stay_within_the_limit():
    assert hold_stroke_counts(Learned(hold_after=40, confident_after=30)) == []
    assert hold_stroke_counts(Learned(hold_after=2)) == []


CLICKS_AFTER_WARM_UP = """
import json, sys, traceback
import numpy as np
from scipy import ndimage
from cupy.cuda import compiler
import graphcut
from graphcut.models import Learned
from graphcut.segmentation import warm_up

rng = np.random.default_rng(5)
shape = (300, 360)
yy, xx = np.mgrid[:shape[0], :shape[1]]
truth = np.zeros(shape, bool)
for row, col in [(60, 70), (80, 250), (200, 120), (230, 300), (150, 190)]:
    truth |= (yy - row) ** 2 + (xx - col) ** 2 < 20 ** 2
image = np.clip(ndimage.gaussian_filter(30 + 120 * truth + 12 * rng.standard_normal(shape), 1),
                0, 255).astype(np.uint8)
session = graphcut.Segmenter(image, model=Learned(), device="cuda")
warm_up(session)
compiled = []
real_compile = compiler._compile_module_with_cache

def spy(*args, **kwargs):
    compiled.append([f"{f.filename}:{f.lineno} {f.name}" for f in traceback.extract_stack()
                     if "graphcut" in f.filename][-4:])
    return real_compile(*args, **kwargs)

compiler._compile_module_with_cache = spy
seeds, previous = np.zeros(shape, np.uint8), None
inside, outside = np.argwhere(truth), np.argwhere(~truth)
for k in range(9):
    pool = inside if k % 2 == 0 else outside
    row, col = pool[rng.integers(len(pool))]
    disk = (yy - row) ** 2 + (xx - col) ** 2 <= 9
    label = 1 if truth[row, col] else 2
    seeds = seeds.copy()
    seeds[disk & (truth == (label == 1))] = label
    if k == 0:
        continue  # one label only
    previous = (seeds, session.update(seeds, previous=previous))
print(json.dumps({"compiled": compiled}))
"""


@pytest.mark.gpu
def test_clicks_after_warm_up_compile_nothing(tmp_path):
    env = dict(os.environ, CUPY_CACHE_DIR=str(tmp_path / "kernel-cache"))
    done = subprocess.run([sys.executable, "-c", CLICKS_AFTER_WARM_UP], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["compiled"] == [], "compiled after warm_up:\n" + "\n".join(
        " <- ".join(reversed(frames)) for frames in report["compiled"])
