"""Temporary: synchronised per-stage times of Segmenter.update for a model (not committed)."""
import os, sys, time, statistics, collections, functools
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_quality import add_stroke, interior_point, iou, next_click
from quality_data import scaled_item
import cupy
import graphcut
from graphcut.models import _learned
from graphcut.segmentation import _pipeline, _grabcut, _segmenter
import graphcut.models._prior as prior_mod

times = collections.defaultdict(list)
def wrap(mod, name, label):
    f = getattr(mod, name)
    @functools.wraps(f)
    def g(*a, **k):
        cupy.cuda.Device().synchronize(); t = time.perf_counter()
        r = f(*a, **k)
        cupy.cuda.Device().synchronize(); times[label].append(time.perf_counter() - t)
        return r
    setattr(mod, name, g)

wrap(_learned._Shared, "train", "train")
wrap(_learned._Shared, "_score", "score")
wrap(_learned._Shared, "set_sample", "set_sample")
wrap(_learned._Shared, "set_prior", "set_prior")
wrap(_pipeline, "_seed_weights", "seed_weights")
wrap(_pipeline, "_locality_priors", "locality_priors")
wrap(_grabcut, "binary_problem", "binary_problem")
wrap(_pipeline, "iterate_binary", "iterate_binary")
wrap(_segmenter, "segment_values", "segment_values")
wrap(_pipeline, "clean_labels", "clean_labels")
wrap(graphcut.Segmenter, "update", "update")
from graphcut.segmentation import _solving
wrap(_solving.GridCuts, "solve", "cut")
wrap(_learned, "intensity_prior", "intensity_prior")
wrap(_learned.Learned, "fit", "Learned.fit")
wrap(_learned.Learned, "costs", "Learned.costs")
wrap(_pipeline, "to_host", "to_host")
wrap(_pipeline, "region_core", "region_core")

mp = float(sys.argv[1]); model = sys.argv[2] if len(sys.argv) > 2 else "learned"
item = scaled_item(mp); truth = item.truth
seeds = np.zeros(truth.shape, np.uint8)
add_stroke(seeds, truth, interior_point(truth), 1)
add_stroke(seeds, truth, interior_point(~truth), 2)
session = graphcut.Segmenter(item.image, model=model, device="cuda")
mask = np.asarray(session.update(seeds.copy()), dtype=bool)
times.clear()
for _ in range(10):
    point, label = next_click(mask, truth)
    add_stroke(seeds, truth, point, label)
    mask = np.asarray(session.update(seeds.copy()), dtype=bool)
print(f"{model} {mp} MP, per stroke medians (ms), synchronised stages:")
for k, v in sorted(times.items(), key=lambda kv: -statistics.median(kv[1])):
    print(f"  {k:16s} n={len(v):3d} median {statistics.median(v)*1e3:7.2f}")
