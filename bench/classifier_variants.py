"""Which classifier inside the learned model (issue 24; twentieth session, clf20;
bench/RESULTS.md and docs/appearance-microscopy.md): for one run of
``bench/bench_quality_real.py``'s ``main``, the shared classifier of
:mod:`graphcut.models._learned` (``_Shared.train`` and ``_Shared._score``) is replaced by a
scikit-learn classifier; the rest of the pipeline (the intensity prior's sample and weight,
the seeds' weights, the hold and its confidence gate, the rim's weights, the cut) is the
library's.

The training rows are exactly the library's: each label's sample (at most ``max_samples``
pixels, fixed-seed) with its weights normalised to sum 1, each label's prior sample with
weights summing to ``prior_weight``, all times the labels' pixel count; they go to the
classifier as ``sample_weight``. The costs are ``min(-log p, MAX_COST)`` (p clipped at
``MIN_PROBABILITY``), float64 ``(labels, H, W)``, as the library's.

Variants (``--variant NAME``; every other argument goes to the bench):

- ``library``: nothing patched (the default's numbers).
- ``logistic``: the driver's rows and scoring with the library's own training
  (``fit_logistic`` on ``[1, x, x^2]``, one-against-the-rest beyond two labels), scored by
  the sigmoid in float64: must reproduce ``library`` to the digit.
- ``logistic-sk``: scikit-learn's ``LogisticRegression`` (lbfgs) on ``[x, x^2]`` with the
  library's penalty (``C = 1 / (l2 * sum(w))``).
- ``forest``: ``RandomForestClassifier(n_estimators=--trees, max_depth=--depth,
  min_samples_leaf=--leaf, max_features="sqrt", random_state=0)``.
- ``boosted``: ``HistGradientBoostingClassifier(max_iter=--trees, max_depth=--depth,
  learning_rate=--rate, early_stopping=False, random_state=0)``; ``--depth 1``: boosted
  stumps.
- ``mlp``: ``MLPClassifier(hidden_layer_sizes=(--hidden,), max_iter=--iterations,
  random_state=0)`` with ``sample_weight`` (scikit-learn >= 1.7 takes it; an older one is
  refused rather than resampled); features as they are (already standardised).

``--time``: instead of the bench, the seconds per training and per scoring of each
variant on a 512 x 512 dev image with the robot's first two clicks (median of 3).

    python bench/classifier_variants.py --variant forest --set dev --protocols clicks \
        --methods learned --starts 3
    python bench/classifier_variants.py --variant boosted --time

Needs scikit-learn (bench only; not a runtime dependency).
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import graphcut.models._learned as learned_module  # noqa: E402
from graphcut.models._logistic import _design, fit_logistic  # noqa: E402
from graphcut.models._logistic import training_rows as library_rows  # noqa: E402

VARIANTS = ("library", "logistic", "logistic-sk", "forest", "boosted", "mlp")
OPTIONS = {}


def training_rows(shared):
    """(x (n, F) float64, labels (n,) int, weights (n,)) of the library's training
    (:func:`graphcut.models._logistic.training_rows`, before the design), on the host."""
    missing = [i for i, s in enumerate(shared.samples) if s is None or not s[0].shape[0]]
    if missing:
        raise ValueError(f"every label needs sample pixels; {missing} have none")
    x, labels, w = library_rows(shared.samples, shared.prior, shared.prior_weight, np)
    return np.asarray(x, dtype=np.float64), labels, np.asarray(w, dtype=np.float64)


class _LibraryLogistic:
    """The library's Newton logistic regression behind scikit-learn's interface."""

    def __init__(self, l2):
        self.l2 = l2

    def fit(self, x, y, sample_weight):
        self.classes_ = np.unique(y)
        design = _design(x, np)
        targets = [self.classes_[0]] if len(self.classes_) == 2 else list(self.classes_)
        self.betas = [fit_logistic(design, (y == k).astype(np.float64), sample_weight,
                                   l2=self.l2) for k in targets]
        return self

    def predict_proba(self, x):
        design = _design(x.astype(np.float64), np)
        p = [1.0 / (1.0 + np.exp(-np.clip(design @ b, -30.0, 30.0))) for b in self.betas]
        if len(p) == 1:
            return np.stack([p[0], 1.0 - p[0]], axis=1)
        p = np.stack(p, axis=1)
        return p / p.sum(axis=1, keepdims=True)


class _Squares:
    """A classifier on ``[x, x^2]`` (the library's design without the column of ones)."""

    def __init__(self, inner):
        self.inner = inner

    def fit(self, x, y, sample_weight):
        self.inner.fit(np.concatenate([x, x * x], axis=1), y, sample_weight=sample_weight)
        self.classes_ = self.inner.classes_
        return self

    def predict_proba(self, x):
        return self.inner.predict_proba(np.concatenate([x, x * x], axis=1))


def make_classifier(variant, l2, total_weight):
    """A fresh classifier of ``variant`` (:data:`VARIANTS`; ``OPTIONS`` its settings)."""
    o = OPTIONS
    if variant == "logistic":
        return _LibraryLogistic(l2)
    if variant == "logistic-sk":
        from sklearn.linear_model import LogisticRegression
        return _Squares(LogisticRegression(C=1.0 / (l2 * total_weight), max_iter=500))
    if variant == "forest":
        from sklearn.ensemble import RandomForestClassifier
        return RandomForestClassifier(n_estimators=o["trees"], max_depth=o["depth"],
                                      min_samples_leaf=o["leaf"], max_features="sqrt",
                                      n_jobs=1, random_state=0)
    if variant == "boosted":
        from sklearn.ensemble import HistGradientBoostingClassifier
        return HistGradientBoostingClassifier(max_iter=o["trees"], max_depth=o["depth"],
                                              learning_rate=o["rate"], early_stopping=False,
                                              random_state=0)
    if variant == "mlp":
        from sklearn.neural_network import MLPClassifier
        if "sample_weight" not in inspect.signature(MLPClassifier.fit).parameters:
            raise SystemExit("mlp needs scikit-learn >= 1.7 (MLPClassifier sample_weight)")
        return MLPClassifier(hidden_layer_sizes=(o["hidden"],), max_iter=o["iterations"],
                             random_state=0)
    raise ValueError(variant)


def costs_from(classifier, values, count):
    """``min(-log p, MAX_COST)`` float64 (count, H, W) of every pixel of ``values``."""
    shape = values.shape[:-1]
    flat = np.asarray(values, dtype=np.float32).reshape(-1, values.shape[-1])
    p = np.zeros((flat.shape[0], count))
    p[:, classifier.classes_.astype(int)] = classifier.predict_proba(flat)
    costs = -np.log(np.maximum(p, learned_module.MIN_PROBABILITY))
    return np.minimum(costs, learned_module.MAX_COST).T.reshape((count,) + shape)


def patch(variant):
    """Replace ``_Shared.train`` and ``_Shared._score`` by ``variant``'s classifier."""
    if variant == "library":
        return
    TIMES.clear()

    def train(self):
        t = time.perf_counter()
        x, y, w = training_rows(self)
        self.params = make_classifier(variant, self.l2, float(w.sum())).fit(
            x, y, sample_weight=w)
        TIMES.setdefault("train", []).append(time.perf_counter() - t)
        self.stale = False
        self.scored = None

    def score(self, values):
        t = time.perf_counter()
        out = costs_from(self.params, values, len(self.samples))
        TIMES.setdefault("score", []).append(time.perf_counter() - t)
        return out

    learned_module._Shared.train = train
    learned_module._Shared._score = score


TIMES = {}


def time_variant(variant, repeats=3):
    """Seconds per training and per scoring (median of ``repeats``) on the first dev image
    tiled to 512 x 512, with an 11 x 11 square at the object's and the background's
    interior-most points as the seeds (and the library's prior sample)."""
    import bench_quality_real as bench
    from bench_quality import interior_point
    from graphcut.models import Learned
    item = bench.real_set("dev", "all", bench.SOURCES)[0]
    reps = [-(-512 // n) for n in item.truth.shape]  # the image tiled up to 512 x 512
    image = np.asarray(item.image, dtype=np.float32)
    image = image if image.ndim == 3 else image[..., None]
    image = np.tile(image, reps + [1])[:512, :512]
    truth = np.tile(item.truth, reps)[:512, :512]
    model = Learned()
    features = model.features(image)
    yx = [interior_point(truth), interior_point(~truth)]
    samples = []
    for y0, x0 in yx:
        s = np.zeros(truth.shape, bool)
        s[max(0, y0 - 5):y0 + 6, max(0, x0 - 5):x0 + 6] = True
        samples.append(s)
    train, score = [], []
    for _ in range(repeats):
        model = Learned()
        model.fit(features, samples)
        shared = model._views[0]._shared
        t = time.perf_counter()
        shared.train()
        train.append(time.perf_counter() - t)
        t = time.perf_counter()
        shared._score(features)
        score.append(time.perf_counter() - t)
    rows = training_rows(shared)[0].shape[0]
    print(f"{variant}: {item.name} {features.shape} features, {rows} training rows: "
          f"train {1e3 * np.median(train):.1f} ms, score {1e3 * np.median(score):.1f} ms "
          f"(median of {repeats}, one thread)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=VARIANTS, required=True)
    parser.add_argument("--trees", type=int, default=50, help="forest, boosted: trees")
    parser.add_argument("--depth", type=int, default=None,
                        help="forest, boosted: largest depth (default 10 / 3)")
    parser.add_argument("--leaf", type=int, default=5, help="forest: min_samples_leaf")
    parser.add_argument("--rate", type=float, default=0.1, help="boosted: learning rate")
    parser.add_argument("--hidden", type=int, default=24, help="mlp: hidden units")
    parser.add_argument("--iterations", type=int, default=200, help="mlp: max_iter")
    parser.add_argument("--time", action="store_true",
                        help="time training and scoring at 512 x 512 instead of the bench")
    args, rest = parser.parse_known_args(argv)
    depth = args.depth if args.depth is not None else (
        10 if args.variant == "forest" else 3)
    OPTIONS.update(trees=args.trees, depth=depth, leaf=args.leaf, rate=args.rate,
                   hidden=args.hidden, iterations=args.iterations)
    patch(args.variant)
    if args.time:
        time_variant(args.variant)
        return
    import bench_quality_real
    bench_quality_real.main(rest)
    if TIMES:
        print(f"{args.variant} {OPTIONS}: " + ", ".join(
            f"{k} {len(v)} calls, median {1e3 * np.median(v):.1f} ms"
            for k, v in TIMES.items()))


if __name__ == "__main__":
    main()
