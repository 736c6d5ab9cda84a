"""Probe (development sets only): a product of experts of the learned model and the GMM,
registered as model "blend" for bench_quality.py / bench_quality_real.py methods, e.g.

    python bench/blend_probe.py quality --set dev --methods "learned:model={'model':'blend','weight':0.1},lam=6"
    python bench/blend_probe.py real --split dev ...

costs = learned costs + weight * GMM costs (nats); the GMM is GMM(components, core) on the
colours (and texture); both are fitted on the same samples, and both refit in the pipeline's
iterations.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from graphcut.models import GMM, AppearanceModel, Learned, register_model  # noqa: E402


@register_model
class Blend(AppearanceModel):
    name = "blend"
    lam = 6.0
    iterations = 0
    seed_share = 0.1
    locality = 0.0
    far_cost = 0.0
    texture = 4
    core = 0.5
    weight = 0.1
    components = 8
    knobs = ("weight", "components", "iterations", "seed_share", "locality", "far_cost",
             "texture", "core")

    def check_knob(self, key, value):
        if key in ("weight", "core"):
            return float(value)
        if key == "components":
            return int(value)
        return super().check_knob(key, value)

    def features(self, values):
        self._learned = Learned()
        self._gmm = GMM(components=self.components, texture=self.texture)
        learned = self._learned.features(values)
        colour = self._gmm.features(values)
        xp = np if isinstance(learned, np.ndarray) else __import__("cupy")
        self._split = learned.shape[-1]
        return xp.concatenate([learned, xp.asarray(colour, dtype=learned.dtype)], axis=-1)

    def _parts(self, features):
        return features[..., :self._split], features[..., self._split:]

    def fit(self, features, samples):
        learned, colour = self._parts(features)
        self._learned.fit(learned, samples)
        if self.weight > 0:
            self._gmm.fit(colour.astype(np.float64), samples)
        return self

    def refit(self, features, samples):
        learned, colour = self._parts(features)
        self._learned.refit(learned, samples)
        if self.weight > 0:
            self._gmm.refit(colour.astype(np.float64), samples)
        return self

    def costs(self, features):
        learned, colour = self._parts(features)
        costs = self._learned.costs(learned)
        if self.weight <= 0:
            return costs
        extra = self._gmm.costs(colour.astype(np.float64))
        return [a + self.weight * b for a, b in zip(costs, extra)]


if __name__ == "__main__":
    which = sys.argv.pop(1)
    if which == "quality":
        import bench_quality
        bench_quality.main()
    else:
        import bench_quality_real
        bench_quality_real.main()
