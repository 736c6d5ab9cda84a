"""The seventeenth, eighteenth and twentieth sessions' measured variants of the learned model
on real microscopy from clicks (bench/RESULTS.md, "seventeenth session, micro17",
"eighteenth session, micro18", "twentieth session, dense20"; docs/appearance-microscopy.md):
each patches :class:`graphcut.models.Learned` for one run of
``bench/bench_quality_real.py``'s ``main``. The ``local-split --method local-peak --value
101`` variant (its default radius and share) and ``split-base --method median`` are the
library's ``Learned(split="local")`` (graphcut/models/_local_split.py; the same split,
tests/project/test_quality_real_variants.py); the others were not kept.

Variants (``--variant NAME``, ``--value V``; every other argument goes to the bench):

- ``bias``: ``V`` nats added to the background's cost of the classifier (``V`` < 0: to the
  object's) wherever ``previous`` is given, before the rim's weights.
- ``bias-band``: the same only on the pixels of the rim's band at the previous outline
  (``Learned(rim_band=...)``), where the classifier's costs weigh ``rim`` times more.
  ``--band-from K``: only once the seeds hold K strokes (4-connected parts of each label's
  seeds, as the hold counts them).
- ``bias-band-prior``: the same only where, besides, the intensity prior gave the pixel the
  background's side (nothing without a prior).
- ``balance``: the same with ``V * (n_o - n_b) / (n_o + n_b)`` nats, ``n_o`` and ``n_b`` the
  corrective clicks of each label (its seeds' 8-connected parts but the first).
- ``temperature``: the classifier's log-odds times ``T``, estimated from the clicks: 4 folds
  of the clicks (round robin over each label's 8-connected parts; a label with one part is
  never held out), each fold's classifier (the model's fit without it) scoring the held-out
  clicks' pixels; ``T`` of 13 values from 0.5 to 2 (log-spaced) minimising their log loss,
  each click weighing alike. ``V`` unused.
- ``scale``: the classifier's costs times ``clip(V / r, 0.5, 2)``, ``r`` = 2 area /
  perimeter of the previous mask (pixels): the boundary term's lam relative to the
  classifier grows with the clicked objects' typical radius (``V``: the radius, pixels, at
  which nothing changes).
- ``sigma``: the contrast term's sigma is ``V`` times the image's estimate
  (:func:`graphcut.segmentation.estimate_sigma`; every model, the n-links of the whole run).
- ``prior-band``: the intensity prior's two samples lose the pixels within ``V`` of the way
  from the Otsu threshold to each side's mean grey (the ambiguous intensities).
- ``prior-edge``: the prior's two samples lose the pixels within ``V`` pixels of the Otsu
  split's edges (a pixel of the other side in their ``2 V + 1`` square).
- ``prior-edge-mask``: with ``previous``, those edge pixels join the side of the previous
  mask (object where it was object), the others keep Otsu's side.
- ``prior-split-mask``: with ``previous``, the prior's split is the global grey threshold
  whose side best matches the previous mask (IoU over 99 quantiles), not Otsu's.
- ``prior-split-seeds``: the prior's split is midway between the two labels' seeds' median
  grey, not Otsu's.
- ``threshold``: the prior's global threshold by ``skimage.filters.threshold_<M>`` for
  ``--method M`` (``li``, ``isodata``, ``yen``, ``triangle``, ...) or ``log-otsu`` (Otsu's on
  the logarithm of the grey scaled to [0.01, 1.01]) instead of Otsu's (the coordinator's runs
  of that session).
- ``local-split`` (eighteenth session): the prior's split by ``--method`` (with
  ``Learned.split = "otsu"``, whose function it replaces): ``local-mid``, each pixel's threshold
  ``min(t, max(local, (t + median) / 2))`` with ``t`` Otsu's, ``local`` the grey's Gaussian
  mean over a ``V``-pixel block (``skimage.filters.threshold_local``); ``local-peak``, the same
  and not below ``median + S (peak - median)``, ``peak`` the largest grey smoothed at 2 pixels
  within ``--radius`` pixels and ``S`` ``--share``; ``multiotsu-lo``, the lower of three-class
  Otsu's thresholds. The grey's or its negative's split, whichever's object side is smaller.
- ``soft-split``: the prior's samples as weights, ``1 - --mix`` times Otsu's sides plus
  ``--mix`` times the ``local-split`` method's; the prior's sides and strength Otsu's.
- ``split-base`` (twentieth session): the library's local split
  (graphcut/models/_local_split.py) with another base level in place of the image's median
  grey (in its floor ``(t + base) / 2`` and its peak guard ``base + S (peak - base)``):
  ``--method median`` (the library's), ``dark`` (the median of the grey below Otsu's
  threshold: the background's own level, which a dense tile's median, half in the nuclei,
  is not); the nearby peak's radius ``--radius`` and its share ``--share`` (the library's
  10 and 0.3 by default).
- ``--prior P``: ``Learned.prior`` for the run; ``--local V``: with another variant, the
  ``local-peak`` split (block ``V``) too.

    python bench/quality_real_variants.py --variant bias --value 0.5 --set dev \
        --protocols clicks --methods auto --per-image --falls --starts 3
"""

from __future__ import annotations

import argparse
import copy
import os
import sys

import numpy as np
from scipy import ndimage

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import graphcut.models._guide as guide_module  # noqa: E402
import graphcut.models._learned as learned_module  # noqa: E402
from graphcut._arrays import to_host  # noqa: E402

VARIANTS = ("bias", "bias-band", "bias-band-prior", "balance", "temperature", "scale", "sigma",
            "prior-band", "prior-edge", "prior-edge-mask", "prior-split-mask",
            "prior-split-seeds", "threshold", "local-split", "soft-split", "split-base")
#: ``bias-band``: from this many strokes (4-connected parts of each label's seeds, as the
#: hold counts them; ``--band-from``)
BAND_FROM = 0
#: ``local-split --method local-peak``: the nearby peak's radius (pixels) and the share of
#: the way from the median grey to it below which a pixel is dark (``--radius``, ``--share``)
PEAK_RADIUS, PEAK_SHARE = 10, 0.3
#: the temperature's candidates and folds
TEMPERATURES, FOLDS = np.exp(np.linspace(np.log(0.5), np.log(2.0), 13)), 4
_EIGHT = np.ones((3, 3))


def _grey(model, features):
    """The grey intensity the prior splits (float64 (H, W), host)."""
    channels = getattr(model, "_channels", 1)
    return np.asarray(to_host(features[..., channels:2 * channels].mean(axis=-1)),
                      dtype=np.float64)


def _otsu(grey):
    from skimage.filters import threshold_otsu
    flat = grey.reshape(-1)
    return float(threshold_otsu(flat[::max(1, flat.size // (1 << 16))]))


def _parts(sample):
    """(labels, count) of a sample's 8-connected parts (host)."""
    return ndimage.label(np.asarray(to_host(sample)) > 0, structure=_EIGHT)


def _temperature(model, features, samples):
    """The clicks' cross-validated temperature (see the module's notes)."""
    samples = [np.asarray(to_host(s), dtype=np.float64) for s in samples]
    parts = [_parts(s) for s in samples]
    units = [(label, j) for label in (0, 1) if parts[label][1] > 1
             for j in range(1, parts[label][1] + 1)]
    scored, truth, weight = [], [], []
    for fold in (units[i::FOLDS] for i in range(min(FOLDS, len(units)))):
        held = [np.zeros(samples[0].shape, bool) for _ in (0, 1)]
        for label, j in fold:
            held[label] |= parts[label][0] == j
        inner = copy.copy(model)
        inner._inner = True
        inner.fit(features, [np.where(h, 0.0, s) for h, s in zip(held, samples)])
        costs = [view.costs(features) for view in inner._views]
        z = np.asarray(to_host(costs[1] - costs[0]))
        for label, j in fold:
            pixels = parts[label][0] == j
            scored.append(z[pixels])
            truth.append(np.full(int(pixels.sum()), 1.0 if label == 0 else -1.0))
            weight.append(np.full(int(pixels.sum()), 1.0 / pixels.sum()))
    if not scored:
        return 1.0
    z, y, w = map(np.concatenate, (scored, truth, weight))
    losses = [float((w * np.logaddexp(0.0, -y * t * z)).sum()) for t in TEMPERATURES]
    return float(TEMPERATURES[int(np.argmin(losses))])


def _patch_costs(variant, value):
    """Learned.costs with the variant's change to the classifier's costs."""
    fit = learned_module.Learned.fit

    def fit_kept(self, features, samples):
        result = fit(self, features, samples)
        if len(samples) == 2 and not getattr(self, "_inner", False):
            self._variant_samples = samples
        return result

    def costs(self, features):
        c = [view.costs(features) for view in self._views]
        if len(c) == 2 and self.guide is not None and not getattr(self, "_inner", False):
            c = _changed(self, features, c, variant, value)
        weights = self.rim_weights() if len(c) == 2 else None
        return c if weights is None else [x * weights for x in c]

    learned_module.Learned.fit, learned_module.Learned.costs = fit_kept, costs


def _changed(model, features, c, variant, value):
    """The two costs (object, background) after the variant's change."""
    if variant in ("bias-band", "bias-band-prior"):  # only in the rim's band
        weights = model.rim_weights()
        strokes = sum(ndimage.label(np.asarray(to_host(s)) > 0)[1]
                      for s in model._variant_samples)
        if weights is None or strokes < BAND_FROM:
            return c
        band = np.asarray(to_host(weights)) > 1.0
        decision = model._fitted_on[-1] if len(model._fitted_on) > 2 else (True,)
        if variant == "bias-band-prior":  # and where the prior gave the background's side
            if decision[0]:
                return c
            bright = np.asarray(to_host(model._split[2]), dtype=bool)
            band &= ~bright if decision[1] else bright
        return [c[0] + np.where(band, max(0.0, -value), 0.0),
                c[1] + np.where(band, max(0.0, value), 0.0)]
    if variant in ("bias", "balance"):
        bias = value
        if variant == "balance":
            o, b = (max(0, _parts(s)[1] - 1) for s in model._variant_samples)
            bias = value * (o - b) / (o + b) if o + b else 0.0
        return [c[0] + max(0.0, -bias), c[1] + max(0.0, bias)]
    if variant == "temperature":
        t = _temperature(model, features, model._variant_samples)
        z = c[1] - c[0]
        cap = learned_module.MAX_COST
        return [np.minimum(np.logaddexp(0.0, -t * z), cap),
                np.minimum(np.logaddexp(0.0, t * z), cap)]
    mask = np.asarray(to_host(model.guide), dtype=bool)  # "scale"
    perimeter = int((mask & ~ndimage.binary_erosion(mask, border_value=1)).sum())
    if not perimeter:
        return c
    factor = float(np.clip(value * perimeter / (2.0 * mask.sum()), 0.5, 2.0))
    return [x * factor for x in c]


def _patch_prior(variant, value):
    """graphcut.models._learned.prior_sides with the variant's split (or band)."""
    original = guide_module.prior_sides

    def prior_sides(model, features, samples):
        masks, strength, split = original(model, features, samples)
        if variant in ("prior-band", "prior-edge", "prior-edge-mask"):
            if masks[0] is None or (variant == "prior-edge-mask" and model.guide is None):
                return masks, strength, split
            if variant == "prior-band":
                grey = _grey(model, features)
                t = _otsu(grey)
                sure = (grey > t + value * (grey[grey > t].mean() - t),
                        grey <= t - value * (t - grey[grey <= t].mean()))
            else:
                bright = np.asarray(to_host(split[2]), dtype=bool)
                size = 2 * int(value) + 1
                edge = ndimage.maximum_filter(bright, size=size, mode="nearest") & \
                    ~ndimage.minimum_filter(bright, size=size, mode="nearest")
                sure = (~edge, ~edge)  # (the CPU's arrays: the bench runs on NumPy)
                if variant == "prior-edge-mask":  # the edge's pixels: the previous mask's side
                    held = np.asarray(to_host(model.guide), dtype=bool)
                    masks = (masks[0] & ~edge | edge & held, masks[1] & ~edge | edge & ~held)
                    return masks, strength, (split[0], split[1], masks[0], {})
            masks = tuple(None if m is None else m & sure[0 if m is split[2] else 1]
                          for m in masks)
            # the model caches the drawn prior samples by "is the split's [2]": a cache of
            # their own, the object's mask in that place
            return masks, strength, (split[0], split[1], masks[0], {})
        grey = _grey(model, features)
        if variant == "prior-split-mask":
            if model.guide is None:
                return masks, strength, split
            threshold = _mask_threshold(grey, np.asarray(to_host(model.guide), dtype=bool))
        else:
            medians = [np.median(grey[np.asarray(to_host(s)) > 0]) for s in samples]
            threshold = 0.5 * (medians[0] + medians[1])
        channels = getattr(model, "_channels", 1)
        split = (features, channels, grey > threshold, {})
        sides, difference = guide_module.graded_prior(features, samples, channels,
                                                      bright=split[2])
        sides, difference, _ = guide_module.guided_prior(sides, difference, split[2],
                                                         model.guide)
        return sides, min(1.0, difference / guide_module.FULL_AT), split

    learned_module.prior_sides = prior_sides


def _patch_sigma(factor):
    """The estimated contrast sigma times ``factor`` (graphcut.segmentation._boundary)."""
    import graphcut.segmentation._boundary as boundary
    differences, sums = boundary._sigma_from_differences, boundary._sigma_from_sums
    boundary._sigma_from_differences = lambda *a, **k: factor * differences(*a, **k)
    boundary._sigma_from_sums = lambda *a, **k: factor * sums(*a, **k)


def _mask_threshold(grey, mask):
    """The grey threshold whose side (the mask's brighter or darker) best matches ``mask``."""
    bright = grey[mask].mean() > grey[~mask].mean()
    best, chosen = -1.0, None
    for q in np.quantile(grey, np.linspace(0.01, 0.99, 99)):
        side = grey > q if bright else grey <= q
        score = (side & mask).sum() / max(1, (side | mask).sum())
        if score > best:
            best, chosen = score, q
    return chosen


def _patch_threshold(method):
    """The intensity prior's threshold by another method (``threshold``; the prior imports
    ``skimage.filters.threshold_otsu`` at each call, so the name is replaced there)."""
    import skimage.filters as filters
    otsu = filters.threshold_otsu
    if method == "log-otsu":
        def chosen(values):
            low = float(np.min(values))
            span = float(np.max(values)) - low or 1.0
            logged = np.log((np.asarray(values, dtype=np.float64) - low) / span + 0.01)
            return low + span * (float(np.exp(otsu(logged))) - 0.01)
    else:
        chosen = getattr(filters, f"threshold_{method}")
    filters.threshold_otsu = chosen


def local_split(grey, method, block):
    """The bright side (bool, host) of a local split of ``grey`` (float64 (H, W)): the
    ``local-split`` variant (see the module's notes)."""
    from skimage.filters import threshold_local, threshold_multiotsu
    flat = grey.reshape(-1)[::max(1, grey.size // (1 << 16))]
    t = _otsu(grey)
    if method == "multiotsu-lo":
        return grey > float(threshold_multiotsu(flat, 3)[0])
    size = int(block) | 1
    local = threshold_local(grey, size, method="gaussian", mode="nearest")
    if method == "local-mid":  # dim regions' threshold down to halfway to the median
        floor = 0.5 * (t + float(np.median(flat)))
        return grey > np.minimum(t, np.maximum(local, floor))
    if method == "local-peak":  # and not below `share` of the way to the nearby peak
        median = float(np.median(flat))
        floor = np.maximum(local, 0.5 * (t + median))
        peak = ndimage.maximum_filter(ndimage.gaussian_filter(grey, 2.0),
                                      size=2 * PEAK_RADIUS + 1, mode="nearest")
        return grey > np.minimum(t, np.maximum(floor, median + PEAK_SHARE * (peak - median)))
    raise ValueError(f"unknown local split {method!r}")


def _patch_local_split(method, block):
    """graphcut.models._guide.bright_side replaced by :func:`local_split`, for the image's
    polarity the object's brighter side... both polarities: the split of the grey and of
    its negative, each pixel's side from the one whose object side is the smaller (the
    nuclei's side: fewer pixels than the background on microscopy)."""
    def bright_side(features, channels):
        grey = np.asarray(to_host(features[..., channels:2 * channels].mean(axis=-1)),
                          dtype=np.float64)
        up, down = local_split(grey, method, block), local_split(-grey, method, block)
        return up if up.sum() <= down.sum() else ~down

    guide_module.bright_side = bright_side


def _patch_soft_split(method, block, mix):
    """The prior's samples as weights: ``1 - mix`` times Otsu's side plus ``mix`` times
    :func:`local_split`'s (the object's side of each; the background's the rest), the
    prior's sides and strength still Otsu's (``soft-split``)."""
    original = guide_module.prior_sides

    def prior_sides(model, features, samples):
        masks, strength, split = original(model, features, samples)
        if masks[0] is None:
            return masks, strength, split
        up = masks[0] is split[2]
        kept = getattr(model, "_soft", None)
        if kept is None or kept[0] is not features:
            grey = np.asarray(to_host(split[2]), dtype=bool)  # Otsu's bright side
            values = _grey(model, features)
            local = local_split(values, method, block)
            down = ~local_split(-values, method, block)
            local = local if local.sum() <= (~down).sum() else down
            model._soft = kept = (features, {})
            for side in (True, False):
                obj = (1.0 - mix) * (grey if side else ~grey) + mix * (local if side else ~local)
                kept[1][side] = (obj, 1.0 - obj, {})
        obj, bg, cache = kept[1][up]
        return (obj, bg), strength, (split[0], split[1], obj, cache)

    learned_module.prior_sides = prior_sides


def base_threshold(grey, method, radius, *, block, share, sample=None):
    """:func:`graphcut.models._local_split.local_threshold` with the base level ``method``
    (``"median"``: the image's median grey, the library's; ``"dark"``: the median of the
    sample's values at most Otsu's threshold) and the nearby peak's ``radius`` (pixels):
    ``(threshold map float32, otsu)``, the ``split-base`` variant."""
    from skimage.filters import threshold_otsu

    import graphcut.models._local_split as split
    from graphcut._arrays import array_module
    from graphcut.models._prior import grey_sample

    xp = array_module(grey)
    grey = xp.ascontiguousarray(grey, dtype=xp.float32)
    sample = grey_sample(grey) if sample is None else sample
    otsu = float(threshold_otsu(sample))
    if method not in ("median", "dark"):
        raise ValueError(f"unknown split base {method!r}")
    base = float(np.median(sample if method == "median" else sample[sample <= otsu]))
    threshold = split.nearby_peak(grey, radius, xp)     # base + share (peak - base)
    threshold *= np.float32(share)
    threshold += np.float32((1.0 - share) * base)
    xp.maximum(threshold, split.local_mean(grey, block, xp), out=threshold)
    xp.clip(threshold, np.float32(0.5 * (otsu + base)), np.float32(otsu), out=threshold)
    return threshold, otsu


def _patch_split_base(method):
    """graphcut.models._local_split.local_threshold replaced by :func:`base_threshold`
    (``split-base``; the radius and share :data:`PEAK_RADIUS`, :data:`PEAK_SHARE`: ``--radius``,
    ``--share``, by default the library's)."""
    import graphcut.models._local_split as split

    def local_threshold(grey, *, block=split.BLOCK, radius=None, share=None, sample=None):
        return base_threshold(grey, method, PEAK_RADIUS, block=block, share=PEAK_SHARE,
                              sample=sample)

    split.local_threshold = local_threshold


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", choices=VARIANTS, required=True)
    parser.add_argument("--value", type=float, default=0.0)
    parser.add_argument("--method", default="otsu",
                        help="threshold: the skimage threshold method, or log-otsu")
    parser.add_argument("--band-from", type=int, default=0,
                        help="bias-band, bias-band-prior: from this many strokes on")
    parser.add_argument("--radius", type=int, default=10,
                        help="local-split local-peak, split-base: the nearby peak's radius "
                             "(pixels)")
    parser.add_argument("--share", type=float, default=0.3,
                        help="local-split local-peak, split-base: the share of the way to "
                             "the peak")
    parser.add_argument("--mix", type=float, default=0.5,
                        help="soft-split: the local split's share of the prior's weights")
    parser.add_argument("--prior", type=float, default=None,
                        help="Learned.prior for this run (default: the library's)")
    parser.add_argument("--local", type=float, default=None,
                        help="with another variant, the local-peak split too, of this block")
    args, rest = parser.parse_known_args(argv)
    if args.local is not None:
        _patch_local_split("local-peak", args.local)
    if args.prior is not None:
        learned_module.Learned.prior = args.prior
    global BAND_FROM, PEAK_RADIUS, PEAK_SHARE
    BAND_FROM, PEAK_RADIUS, PEAK_SHARE = args.band_from, args.radius, args.share
    if args.variant == "sigma":
        _patch_sigma(args.value)
    elif args.variant == "soft-split":
        _patch_soft_split(args.method, args.value, args.mix)
    elif args.variant == "local-split":
        _patch_local_split(args.method, args.value)
    elif args.variant == "split-base":
        _patch_split_base(args.method)
    elif args.variant == "threshold":
        _patch_threshold(args.method)
    elif args.variant.startswith("prior"):
        _patch_prior(args.variant, args.value)
    else:
        _patch_costs(args.variant, args.value)
    import bench_quality_real
    bench_quality_real.main(rest)


if __name__ == "__main__":
    main()
