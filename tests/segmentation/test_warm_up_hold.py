"""warm_up (graphcut/segmentation/_warmup.py) for a model with a hold: besides the first
throwaway update it runs one at the gated hold's and at the plain hold's stroke counts, each
given the update before, so that the user's third and seventh strokes compile nothing.

On the CPU: a recording stand-in session (backend "cuda") sees those updates, the stroke counts
checked with the hold's own counter (on the coarse blocks of a large image too); on the GPU: in
a fresh process with an empty CuPy kernel cache, a learned session's first eight clicks after
warm_up, of every size, make no compile request (the eleventh session measured a 4 s compile
at the third stroke; a stroke of a new size class paid 2.5-2.9 s in CuPy's CUB reduction
behind the comparison of its sample with the last fit's, graphcut/models/_samples.py)."""

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
from graphcut.models._samples import HOST_COMPARE, SPARSE_SHARE
from graphcut.segmentation._warmup import border_spots, hold_stroke_counts, seed_side


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


@pytest.mark.parametrize("shape", [(1, 2), (2, 2), (3, 3), (5, 4), (9, 9), (40, 300),
                                   (2048, 2048)])
def test_border_spots_stay_apart_from_each_other_and_the_first_seeds(shape):
    side = seed_side(shape)
    spots = border_spots(shape)
    assert len(set(spots)) == len(spots)
    for i, (r, c) in enumerate(spots):
        assert 0 <= r < shape[0] and 0 <= c < shape[1]
        assert max(r, c) > side  # not touching the background square [0, side)^2
        for r2, c2 in spots[i + 1:]:
            assert max(abs(r - r2), abs(c - c2)) > 1


@pytest.mark.parametrize("shape", [(2048, 2048), (512, 640), (100, 100), (40, 300), (3, 3)])
def test_the_first_seeds_are_recorded_and_exceed_the_host_comparison_where_they_fit(shape):
    """Each label's first seeds: a sample the learned model records (at most an eighth of
    the pixels), of more than HOST_COMPARE pixels where the image has room (the GPU
    comparison's one size class above it is then compiled by warm_up)."""
    session = _RecordingSession(shape, Learned())
    warm_up(session)
    seeds = session.calls[0][0]
    for label in (1, 2):
        count = int((seeds == label).sum())
        assert count <= SPARSE_SHARE * seeds.size or count == 1
        if SPARSE_SHARE * seeds.size > 2 * HOST_COMPARE and min(shape) >= 4 * 33:
            assert count > HOST_COMPARE
    assert stroke_count(seeds, coarse_factor(shape)) == 2


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
# disks of every size class of CuPy's CUB reduction (29 to about 2 800 pixels)
for k, radius in enumerate([3, 3, 12, 6, 30, 9, 4, 20, 16]):
    pool = inside if k % 2 == 0 else outside
    row, col = pool[rng.integers(len(pool))]
    disk = (yy - row) ** 2 + (xx - col) ** 2 <= radius ** 2
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


@pytest.mark.parametrize("count", [1, HOST_COMPARE, HOST_COMPARE + 1, 3000])
def test_same_sample_agrees_with_a_dense_comparison_on_both_sides_of_the_host_limit(count):
    from graphcut.models._samples import same_sample, sample_record
    rng = np.random.default_rng(count)
    sample = np.zeros((200, 200))
    sample.reshape(-1)[rng.choice(sample.size, count, replace=False)] = rng.random(count) + 0.5
    record = sample_record(sample)
    moved, rescaled = sample.copy(), sample.copy()
    index = np.flatnonzero(sample)[-1]
    moved.reshape(-1)[index], moved.reshape(-1)[(index + 1) % sample.size] = 0, 1.0
    rescaled.reshape(-1)[index] *= 2
    for other in (sample.copy(), moved, rescaled, sample.astype(np.float32)):
        expected = other.dtype == sample.dtype and np.array_equal(other, sample)
        assert same_sample(record, other) == expected
