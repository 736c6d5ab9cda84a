"""Why an image of bench_quality.py's sets never reaches IoU 0.90: the robot's seeds, an
oracle's colour models, and the default pipeline with a higher cap.

For each chosen image, from strokes (the robot of bench_quality.py):

- ``seeds``: wrong-label seed pixels (object seeds outside the truth, background seeds
  inside; the robot keeps only the disk pixels whose truth agrees, so 0 is expected) and the
  disk pixels the robot dropped for disagreeing with the truth, over 20 interactions;
- ``oracle``: GMMs fitted to the *true* object and background (which no user has), their
  per-pixel IoU (each pixel to the cheaper model), the cut at ``lam`` 35 without seeds, with
  and without the texture channel, and the robot's IoU after 20 interactions when these
  oracle models (with the default stroke priors) replace the fitted ones: if even this stays
  below 0.90, the colour (and texture) term cannot separate the image and more clicks of
  81 pixels are what it takes;
- ``cap 60``: the interaction at which the default ``gmm-iter-clean`` reaches 0.90 when the
  robot may go on to 60.

    python bench/quality_diagnosis.py --set test --images 16,23
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_quality as bq  # noqa: E402
from quality_data import make_set  # noqa: E402


def oracle_segmenter(item, texture, lam=35.0):
    """A bench_quality segmenter whose colour models are GMMs fitted to the truth (fixed),
    with the GMM's default stroke priors, seeds hard, one cut."""
    from graphcut._arrays import image_as_float
    from graphcut.models import make_model
    from graphcut.segmentation import (DEFAULT_FAR_COSTS, DEFAULT_LOCALITY, binary_problem,
                                       quantize_weights, resolve_options, weights_of_values)
    from graphcut.segmentation._locality import _locality_priors
    from graphcut.models._texture import with_texture
    from graphcut.solver import min_cut

    colours = image_as_float(item.image)
    values = with_texture(colours, texture)
    costs = [make_model("gmm").fit(values, m).costs(values) for m in (item.truth, ~item.truth)]
    options = resolve_options("gmm", lam=lam)
    nlinks = tuple(quantize_weights(w, options["lam"], scale=options["scale"])
                   for w in weights_of_values(colours, None))

    def run(image, seeds, box):
        priors = _locality_priors(seeds, [1, 2], DEFAULT_LOCALITY["gmm"], np,
                                  far_cost=DEFAULT_FAR_COSTS["gmm"], objects=[1])
        total = [c if p is None else c + p for c, p in zip(costs, priors or (None, None))]
        network = binary_problem(*total, nlinks, seeds, scale=options["scale"]).network
        return np.asarray(min_cut(network, device="cpu").source_side, bool)
    run.costs = costs
    run.nlinks = nlinks
    run.scale = options["scale"]
    return run


def seed_check(item):
    """(wrong-label seed pixels, disk pixels dropped) over the default's 20 interactions."""
    truth = item.truth
    segmenter = bq.method("gmm-iter-clean", "cpu")
    seeds = np.zeros(truth.shape, np.uint8)
    bq.add_stroke(seeds, truth, bq.interior_point(truth), 1)
    bq.add_stroke(seeds, truth, bq.interior_point(~truth), 2)
    dropped = 0
    yy, xx = np.ogrid[:truth.shape[0], :truth.shape[1]]
    for _ in range(bq.MAX_INTERACTIONS - 2):
        mask = np.asarray(segmenter(item.image, seeds, None), bool)
        point, label = bq.next_click(mask, truth)
        disk = (yy - point[0]) ** 2 + (xx - point[1]) ** 2 <= bq.STROKE_RADIUS ** 2
        dropped += int((disk & (~truth if label == 1 else truth)).sum())
        bq.add_stroke(seeds, truth, point, label)
    wrong = int(((seeds == 1) & ~truth).sum() + ((seeds == 2) & truth).sum())
    return wrong, dropped


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=("dev", "test", "extra"), default="test")
    parser.add_argument("--images", default="16,23", help="comma-separated item indices")
    args = parser.parse_args(argv)
    items = make_set(args.set)
    from graphcut.segmentation import binary_problem
    from graphcut.solver import min_cut
    for index in map(int, args.images.split(",")):
        item = items[index]
        print(f"## {item.name}")
        wrong, dropped = seed_check(item)
        print(f"seeds: {wrong} wrong-label seed pixels, {dropped} disk pixels dropped")
        for texture in (0, 4):
            oracle = oracle_segmenter(item, texture)
            costs = oracle.costs
            pixelwise = bq.iou(costs[0] < costs[1], item.truth)
            free = np.zeros(item.truth.shape, np.uint8)
            network = binary_problem(*costs, oracle.nlinks, free, scale=oracle.scale).network
            cut = bq.iou(np.asarray(min_cut(network, device="cpu").source_side, bool),
                         item.truth)
            ious, _ = bq.robot(oracle, item, "strokes")
            print(f"oracle GMMs, texture {texture}: per pixel {pixelwise:.3f}, cut without "
                  f"seeds {cut:.3f}, robot after {len(ious)} interactions {ious[-1]:.3f} "
                  f"(best {max(ious):.3f})")
        bq.MAX_INTERACTIONS = 60
        try:
            ious, _ = bq.robot(bq.method("gmm-iter-clean", "cpu"), item, "strokes")
        finally:
            bq.MAX_INTERACTIONS = 20
        reached = next((n for n, v in enumerate(ious, 1) if v >= 0.9), None)
        print(f"cap 60: gmm-iter-clean reaches 0.90 at interaction {reached} "
              f"(IoU after 20: {ious[19]:.3f})")


if __name__ == "__main__":
    main()
