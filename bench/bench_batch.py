"""Benchmark: `graphcut batch` throughput, images/s and seconds per stage, on the GPU pipeline
and on the CPU worker processes, on a folder of generated 4-megapixel PNGs.

Images: six scikit-image pictures (astronaut, camera, coffee, coins, chelsea, rocket) resized
to ``--size`` x ``--size`` (2048: 4.2 MP; bicubic), ``--images`` in all, every one distinct
(image i: picture i mod 6 in the (i // 6 mod 8)-th of the eight flips and quarter turns of the
square, zoomed in by 4 % more for every further round of 48; the script checks that no two
images are equal), saved as PNG (zlib level 6, Pillow's default, as most tools write). Seeds: the
bundled label files of the first four (``samples/seeds``), and scripted strokes for chelsea and
rocket, resized and flipped alike (nearest neighbour). Everything lives in a temporary folder.

Every configuration (``--jobs`` values x overlay off / on, plus the reference row "before":
one image after another with Pillow's default PNG encoding, as the batch ran before its
pipeline) first segments two images (CUDA module load, graph capture, worker start: not
timed), then the whole folder (outputs overwritten). Reported per configuration:

- wall s: from the call of ``run_batch`` to its return (planning, all images, the summary);
- images/s: images / wall; steady images/s: (images - jobs) / (time from the jobs-th to the
  last completion), the rate once the pipeline is full;
- read / wait / solve / write ms: medians per image of the stages ``segment_file`` times:
  decode image and seeds; wait for the GPU (the solve stage holds a lock per process); energy
  + minimum cut (uploads and the mask's download included); overlay (if any) + mask encoded and
  written (fsync included);
- GPU stage busy: sum of the solve stages / wall (the share of the time the card had an image);
  GPU util: mean of ``nvidia-smi`` utilization.gpu sampled every 100 ms during the run, when
  nvidia-smi exists;
- same masks: every run's masks decode to the same pixels as the first run's.

On the CPU the table also gives, per jobs value, the rate over cores x the one-job rate.

    python bench/bench_batch.py --device cuda                       # 48 distinct images of 4 MP, jobs 1-12
    python bench/bench_batch.py --device cpu --size 1024 --images 8 --jobs 1,2
    python bench/bench_batch.py --png-sweep                         # mask / overlay encoders
    python bench/bench_batch.py --device cuda --append-results      # also add to RESULTS.md
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import io
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

import graphcut.batch._image as image_stage
from graphcut.batch import OK, STAGE_FIELDS, default_runner, run_batch, usable_cores
from graphcut.io import overlay
from graphcut.solver import resolve_device

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_stereo import append_results, device_name  # noqa: E402

# Scripted seeds for the pictures without a bundled seed file: polylines in fractions of
# (width, height), label 1 = object, 2 = background, stroke width in fractions of the side.
STROKES = {
    "chelsea": [(1, [(0.30, 0.50), (0.72, 0.50)]), (1, [(0.52, 0.22), (0.55, 0.85)]),
                (1, [(0.35, 0.30), (0.65, 0.75)]),
                (2, [(0.92, 0.15), (0.97, 0.55), (0.93, 0.95)]), (2, [(0.80, 0.02), (0.98, 0.02)])],
    "rocket": [(1, [(0.503, 0.36), (0.503, 0.88)]),
               (2, [(0.42, 0.05), (0.42, 0.75)]), (2, [(0.58, 0.05), (0.58, 0.75)]),
               (2, [(0.15, 0.05), (0.85, 0.05)]), (2, [(0.20, 0.30), (0.25, 0.70)])],
}
PICTURES = ("astronaut", "camera", "coffee", "coins", "chelsea", "rocket")


def base_pair(name: str, size: int) -> tuple[np.ndarray, np.ndarray]:
    """One picture resized to size x size and its seed labels at that size."""
    from skimage import data
    if (SAMPLES / "seeds" / f"{name}.png").exists():
        with Image.open(SAMPLES / "images" / f"{name}.png") as image, \
                Image.open(SAMPLES / "seeds" / f"{name}.png") as labels:
            big = image.resize((size, size), Image.Resampling.BICUBIC)
            big_labels = labels.resize((size, size), Image.Resampling.NEAREST)
        return np.asarray(big), np.asarray(big_labels)
    big = Image.fromarray(getattr(data, name)()).resize((size, size), Image.Resampling.BICUBIC)
    labels = Image.new("L", (size, size), 0)
    draw = ImageDraw.Draw(labels)
    for label, points in STROKES[name]:
        draw.line([(x * size, y * size) for x, y in points], fill=label,
                  width=max(2, size // 150))
    return np.asarray(big), np.asarray(labels)


def variant(picture: np.ndarray, labels: np.ndarray, index: int, size: int):
    """The ``index``-th distinct variant of a square picture and its seeds: one of the eight
    flips and quarter turns, then, for every further round of eight, a centred crop 4 % smaller
    resized back to ``size`` (bicubic; nearest neighbour for the seeds)."""
    dihedral, zoom = index % 8, index // 8
    for axis in (0, 1):
        if dihedral >> axis & 1:
            picture, labels = np.flip(picture, axis), np.flip(labels, axis)
    if dihedral >> 2 & 1:
        picture, labels = np.swapaxes(picture, 0, 1), np.swapaxes(labels, 0, 1)
    if zoom:
        side = max(16, round(size * (1 - 0.04 * zoom)))
        start = (size - side) // 2
        window = (slice(start, start + side), slice(start, start + side))
        picture = np.asarray(Image.fromarray(np.ascontiguousarray(picture[window])).resize(
            (size, size), Image.Resampling.BICUBIC))
        labels = np.asarray(Image.fromarray(np.ascontiguousarray(labels[window])).resize(
            (size, size), Image.Resampling.NEAREST))
    return np.ascontiguousarray(picture), np.ascontiguousarray(labels)


def make_images(folder: Path, count: int, size: int) -> tuple[Path, Path]:
    """``count`` distinct images (PICTURES, each in ``variant``s) and their seeds, in
    folder/images and folder/seeds; existing files are kept. Raises RuntimeError when two
    images are equal."""
    images, seeds = folder / "images", folder / "seeds"
    images.mkdir(parents=True, exist_ok=True)
    seeds.mkdir(exist_ok=True)
    bases = {}

    def make(i: int) -> None:
        name = PICTURES[i % len(PICTURES)]
        target = f"{i:04d}_{name}.png"
        if (images / target).exists() and (seeds / target).exists():
            return
        picture, labels = variant(*bases[name], i // len(PICTURES), size)
        Image.fromarray(picture).save(images / target)
        Image.fromarray(labels).save(seeds / target)

    with ThreadPoolExecutor(usable_cores()) as pool:
        for name, pair in zip(PICTURES, pool.map(lambda n: base_pair(n, size), PICTURES)):
            bases[name] = pair
        list(pool.map(make, range(count)))
    digests = {}
    for path in sorted(images.glob("*.png"))[:count]:
        with Image.open(path) as image:
            digest = hashlib.sha256(np.asarray(image).tobytes()).hexdigest()
        if digest in digests:
            raise RuntimeError(f"{path.name} and {digests[digest]} are the same image")
        digests[digest] = path.name
    return images, seeds


class GPUSampler:
    """Mean GPU utilisation (%) from ``nvidia-smi`` sampled every 100 ms, or None."""

    def __init__(self):
        self.values: list[float] = []
        self.process = None

    def __enter__(self):
        try:
            self.process = subprocess.Popen(
                ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits",
                 "-lms", "100"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        except OSError:
            return self
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        return self

    def _read(self):
        for line in self.process.stdout:
            try:
                self.values.append(float(line.split(",")[0]))
            except ValueError:
                pass

    def __exit__(self, *exc):
        if self.process is not None:
            self.process.terminate()
            self.process.wait()

    def mean(self):
        return statistics.fmean(self.values) if self.values else None


def timed(runner):
    """The runner, recording the time of every completion in ``stamps``."""
    stamps = []

    def run(calls):
        for item in runner(calls):
            stamps.append(time.perf_counter())
            yield item
    return run, stamps


def masks_digest(folder: Path) -> dict[str, str]:
    """Digest of each mask's decoded pixels (the PNG encoding may differ between runs)."""
    return {p.name: hashlib.sha256(np.asarray(Image.open(p)).tobytes()).hexdigest()
            for p in sorted(folder.glob("*.png"))}


def run_config(images, seeds, work: Path, *, backend, device, jobs, overlay_wanted,
               png_options) -> dict:
    """Warm up on two images, then one timed batch over the folder; returns the row."""
    old = image_stage.PNG_OPTIONS
    image_stage.PNG_OPTIONS = png_options
    try:
        warm = work / "warm"
        warm_images = work / "warm_images"
        if not warm_images.exists():
            (warm_images / "images").mkdir(parents=True)
            (warm_images / "seeds").mkdir()
            for path in sorted(images.glob("*.png"))[:2]:
                shutil.copy(path, warm_images / "images" / path.name)
                shutil.copy(seeds / path.name, warm_images / "seeds" / path.name)
        run_batch(warm_images / "images", warm_images / "seeds", warm, device=device,
                  overwrite=True, overlay=overlay_wanted, progress=False,
                  runner=default_runner(backend, jobs=jobs))
        out = work / f"out_{jobs}_{int(overlay_wanted)}_{len(png_options)}"
        runner, stamps = timed(default_runner(backend, jobs=jobs))
        with GPUSampler() if backend == "cuda" else _Nothing() as sampler:
            started = time.perf_counter()
            records = run_batch(images, seeds, out, device=device, overwrite=True,
                                overlay=overlay_wanted, progress=False, runner=runner)
            wall = time.perf_counter() - started
    finally:
        image_stage.PNG_OPTIONS = old
    failed = [r for r in records if r["status"] != OK]
    if failed:
        raise SystemExit(f"{len(failed)} image(s) failed, e.g. {failed[0]['image']}: "
                         f"{failed[0]['reason']}")
    full = min(jobs, len(stamps) - 1)
    steady = ((len(stamps) - 1 - full) / (stamps[-1] - stamps[full])
              if len(stamps) - 1 > full and stamps[-1] > stamps[full] else float("nan"))
    medians = {key: 1000 * statistics.median(r[key] for r in records) for key in STAGE_FIELDS}
    return {"jobs": jobs, "overlay": overlay_wanted, "png": png_options, "wall": wall,
            "rate": len(records) / wall, "steady": steady, "medians": medians,
            "busy": sum(r["solve_seconds"] for r in records) / wall,
            "util": sampler.mean(), "digest": masks_digest(out), "n": len(records)}


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def mean(self):
        return None


def png_sweep(images: Path, seeds: Path, count: int = 2) -> str:
    """Encoding time (ms, best of 3) and size of masks and overlays at several zlib settings."""
    from graphcut import read_image, read_seeds, segment
    settings = [("Pillow default (level 6)", {}), ("level 1", {"compress_level": 1}),
                ("level 1, Z_RLE (chosen)", {"compress_level": 1, "compress_type": zlib.Z_RLE}),
                ("level 3, Z_RLE", {"compress_level": 3, "compress_type": zlib.Z_RLE}),
                ("level 6, Z_RLE", {"compress_level": 6, "compress_type": zlib.Z_RLE}),
                ("level 0 (stored)", {"compress_level": 0})]
    arrays = {"mask": [], "overlay": []}
    for path in sorted(images.glob("*.png"))[:count]:
        image = read_image(path)
        mask = segment(image, read_seeds(seeds / path.name, image.shape[:2]), device="auto")
        arrays["mask"].append(np.where(mask, 255, 0).astype(np.uint8))
        arrays["overlay"].append(overlay(image, mask))
    lines = ["| PNG setting | mask ms | mask KB | overlay ms | overlay KB |", "|---|---|---|---|---|"]
    for label, options in settings:
        cells = []
        for kind in ("mask", "overlay"):
            times, sizes = [], []
            for array in arrays[kind]:
                best = float("inf")
                for _ in range(3):
                    buffer = io.BytesIO()
                    started = time.perf_counter()
                    Image.fromarray(array).save(buffer, format="PNG", **options)
                    best = min(best, time.perf_counter() - started)
                times.append(best)
                sizes.append(buffer.tell())
                assert np.array_equal(np.asarray(Image.open(io.BytesIO(buffer.getvalue()))),
                                      array)
            cells += [f"{1000 * statistics.fmean(times):.1f}",
                      f"{statistics.fmean(sizes) / 1000:.0f}"]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def table(rows, args, backend: str, identical: bool) -> str:
    gpu = backend == "cuda"
    lines = [f"`graphcut batch` ({'GPU pipeline' if gpu else 'CPU worker processes'}): "
             f"{args.images} PNG images of {args.size}x{args.size} "
             f"({args.size * args.size / 1e6:.1f} MP), six pictures in four flips; device "
             f"{args.device} -> backend {backend}; {usable_cores()} cores",
             "",
             "| run | jobs | overlay | wall s | images/s | steady images/s | read ms | wait ms "
             "| solve ms | write ms |" + (" GPU stage busy | GPU util |" if gpu else
                                          " rate / (jobs x 1-job rate) |"),
             "|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if gpu else "---|")]
    single = {r["overlay"]: r["rate"] for r in rows if r["jobs"] == 1 and r["png"]}
    for row in rows:
        m = row["medians"]
        label = "before: serial, Pillow default PNG" if not row["png"] else "pipeline"
        cells = [label, str(row["jobs"]), "yes" if row["overlay"] else "no",
                 f"{row['wall']:.2f}", f"{row['rate']:.2f}", f"{row['steady']:.2f}",
                 f"{m['read_seconds']:.0f}", f"{m['wait_seconds']:.0f}",
                 f"{m['solve_seconds']:.0f}", f"{m['write_seconds']:.0f}"]
        if gpu:
            util = row["util"]
            cells += [f"{100 * row['busy']:.0f} %", "-" if util is None else f"{util:.0f} %"]
        else:
            base = single.get(row["overlay"])
            cells.append(f"{row['rate'] / (row['jobs'] * base):.2f}" if base and row["png"]
                         else "-")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", f"Same masks (decoded pixels) in every run: {'yes' if identical else 'NO'}"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--images", type=int, default=48, help="number of images (default 48)")
    parser.add_argument("--size", type=int, default=2048,
                        help="side of the square images in pixels (default 2048: 4.2 MP)")
    parser.add_argument("--jobs", help="comma-separated jobs values (default: GPU 1,4,8,12; "
                                       "CPU 1 and the cores)")
    parser.add_argument("--no-overlay", action="store_true", help="skip the overlay runs")
    parser.add_argument("--no-before", action="store_true",
                        help="skip the reference run with the serial batch's PNG defaults")
    parser.add_argument("--png-sweep", action="store_true",
                        help="only time the PNG encoders on masks and overlays")
    parser.add_argument("--work-dir", type=Path,
                        help="keep the generated images and outputs here (reused when present)")
    parser.add_argument("--append-results", action="store_true",
                        help="insert the table at the top of bench/RESULTS.md")
    args = parser.parse_args(argv)
    if args.images < 4 or args.size < 64:
        parser.error("need --images >= 4 and --size >= 64")
    backend = resolve_device(args.device)
    if args.jobs:
        try:
            jobs = [int(j) for j in args.jobs.split(",") if j.strip()]
        except ValueError:
            parser.error(f"--jobs takes integers, got {args.jobs!r}")
        if not jobs or min(jobs) < 1:
            parser.error("--jobs values must be >= 1")
    else:
        jobs = [1, 4, 8, 12] if backend == "cuda" else sorted({1, usable_cores()})
    work = args.work_dir or Path(tempfile.mkdtemp(prefix="bench_batch_"))
    try:
        print(f"generating {args.images} images of {args.size}x{args.size} in {work} ...",
              file=sys.stderr, flush=True)
        images, seeds = make_images(work, args.images, args.size)
        if args.png_sweep:
            print(png_sweep(images, seeds))
            return 0
        configs = [] if args.no_before else [(1, False, {})]
        for overlay_wanted in (False,) + (() if args.no_overlay else (True,)):
            configs += [(j, overlay_wanted, dict(image_stage.PNG_OPTIONS)) for j in jobs]
        rows = []
        for count, overlay_wanted, png in configs:
            print(f"running jobs {count}, overlay {overlay_wanted}, png {png or 'default'} ...",
                  file=sys.stderr, flush=True)
            rows.append(run_config(images, seeds, work, backend=backend, device=args.device,
                                   jobs=count, overlay_wanted=overlay_wanted, png_options=png))
            print(f"  {rows[-1]['rate']:.2f} images/s", file=sys.stderr, flush=True)
    finally:
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    identical = all(row["digest"] == rows[0]["digest"] for row in rows) and \
        len(rows[0]["digest"]) == args.images
    text = table(rows, args, backend, identical)
    print(text)
    if args.append_results:
        name = (device_name(backend) if backend == "cuda" else
                f"{device_name('cpu').split(' (PyMaxflow')[0]} ({usable_cores()} cores)")
        append_results(text, f"{datetime.date.today().isoformat()} - batch throughput "
                             f"(bench/bench_batch.py) on {name}")
        print("appended to bench/RESULTS.md", file=sys.stderr)
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
