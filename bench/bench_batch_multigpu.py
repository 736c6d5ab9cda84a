"""Benchmark: `graphcut batch` on a local Dask cluster, 1 worker (1 GPU) against 2 workers (one
per GPU), on the same folder of generated images.

The images are those of ``bench/bench_batch.py`` (six scikit-image pictures resized to
``--size`` x ``--size``, 2048: about 4 MP, in flips, quarter turns and zooms, every one distinct,
with bundled or scripted seeds), ``--images`` of them in all. For every worker count in ``--workers`` a local cluster is started
(on the GPU: worker i sees only GPU i through CUDA_VISIBLE_DEVICES, offers GPU=1 and runs 8
threads, every task asks for 1/8 of a GPU, so each worker runs the batch's pipeline: one image
on its card while others are read and written), every worker segments one small image first
(CUDA module load, not timed), then the
whole folder is segmented (``graphcut.distributed.run_batch_dask``, outputs overwritten) and
timed from the first submission to the last record: images/s is images / that time; steady
images/s leaves out the filling of the pipelines (8 images per GPU worker, 1 per CPU worker)
and counts from that completion to the last (completion times stamped by the workers). A worker
count of 0 is the batch in this process (the same pipeline), for reference. Reported per run:
wall seconds, images/s, steady images/s and its speed-up against the in-process batch (0
workers) and against one worker, each stated where that run is in the list, the median
per-image seconds of each
stage seen by the workers (read, solve = energy + minimum cut, write) and how many images each
GPU did. The masks of every run must be byte-identical; the script checks that.

    python bench/bench_batch_multigpu.py                     # 64 images of 4 MP, workers 0,1,2
    python bench/bench_batch_multigpu.py --device cpu --workers 1,2 --images 8 --size 256
    python bench/bench_batch_multigpu.py --append-results    # also add the table to RESULTS.md

Needs graphcut[distributed]; on the GPU: graphcut[gpu] and one GPU per worker.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path


from graphcut.batch import OK, default_runner, run_batch, segment_file
from graphcut.batch import dask as gd
from graphcut.solver import cuda_status, resolve_device

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_batch import make_images  # noqa: E402
from bench_stereo import append_results, device_name  # noqa: E402


def segment_and_name_gpu(**kwargs) -> dict:
    """segment_file, and which card the worker sees (the ``gpu`` key; not in the summary)."""
    record = segment_file(**kwargs)
    record["gpu"] = os.environ.get("CUDA_VISIBLE_DEVICES", "-")
    record["finished_at"] = time.time()  # wall clock: the workers share this host's clock
    return record


def warm_up(device: str) -> str:
    """One small segmentation on this worker, so that one-time costs are not timed."""
    from graphcut.io import read_image
    from graphcut.io import read_seeds
    from graphcut.segmentation import segment
    image = read_image(SAMPLES / "images" / "coins.png")
    seeds = read_seeds(SAMPLES / "seeds" / "coins.png", image.shape)
    _, result = segment(image, seeds, device=device, return_result=True)
    return result.backend


def masks_digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.glob("*.png"))}


def run(workers: int, images: Path, seeds: Path, out: Path, device: str, gpus) -> dict:
    """One timed batch over the folder with ``workers`` workers (0: serial, in process)."""
    if out.exists():
        shutil.rmtree(out)
    if workers == 0:
        warm_up(device)
        started = time.perf_counter()
        records = run_batch(images, seeds, out, device=device, overwrite=True, progress=False,
                            runner=_stamped(default_runner(resolve_device(device))))
        wall = time.perf_counter() - started
        for record in records:
            record["gpu"] = os.environ.get("CUDA_VISIBLE_DEVICES", "0" if gpus else "-")
        return {"workers": 0, "records": records, "wall": wall, "startup": 0.0}
    import distributed
    started = time.perf_counter()
    pinned = gpus[:workers] if gpus else None
    with gd.local_cluster(workers, gpus=pinned) as cluster, distributed.Client(cluster) as client:
        client.wait_for_workers(workers)
        backends = client.run(warm_up, device)
        startup = time.perf_counter() - started
        print(f"  {workers} worker(s) up and warm in {startup:.1f} s: "
              f"{sorted(backends.values())}", file=sys.stderr, flush=True)
        started = time.perf_counter()
        records = gd.run_batch_dask(images, seeds, out, client=client, device=device,
                                    overwrite=True, progress=False, task=segment_and_name_gpu)
        wall = time.perf_counter() - started
    return {"workers": workers, "records": records, "wall": wall, "startup": startup}


def _stamped(runner):
    """``runner`` whose records also carry ``finished_at`` (time.time() at completion)."""
    def run(calls):
        for index, record in runner(calls):
            record.setdefault("finished_at", time.time())
            yield index, record
    return run


def steady_rate(records, in_flight: int) -> float:
    """Images/s once the pipelines are full: (images - in_flight - 1) over the time from the
    in_flight-th completion to the last (NaN when too few images)."""
    stamps = sorted(r["finished_at"] for r in records)
    full = min(in_flight, len(stamps) - 1)
    if len(stamps) - 1 <= full or stamps[-1] <= stamps[full]:
        return float("nan")
    return (len(stamps) - 1 - full) / (stamps[-1] - stamps[full])


def table(rows, args, backend: str, identical: bool) -> str:
    lines = [f"`graphcut batch` on a local Dask cluster: {args.images} images of "
             f"{args.size}x{args.size} ({args.size * args.size / 1e6:.1f} MP), distinct pictures "
             f"(resized, flipped, turned, zoomed), device {args.device} -> backend {backend}; "
             + ("worker i pinned to GPU i (CUDA_VISIBLE_DEVICES, GPU=1 resource), 8 threads "
                "per worker, 1/8 GPU per task" if backend == "cuda" else
                "one thread per worker"),
             "",
             "| workers | wall s | images/s | steady images/s | steady vs in process | "
             "steady vs 1 worker | read / solve / "
             "write ms (median per image) | images per GPU | cluster start + warm-up s |",
             "|---|---|---|---|---|---|---|---|---|"]
    threads = 8 if backend == "cuda" else 1
    steady = [steady_rate(row["records"], threads * max(1, row["workers"])) for row in rows]
    by_workers = {row["workers"]: rate for row, rate in zip(rows, steady)}

    def versus(rate, workers):
        return f"{rate / by_workers[workers]:.2f}x" if workers in by_workers else "not run"
    for row, row_steady in zip(rows, steady):
        records = row["records"]
        rate = len(records) / row["wall"]
        stages = " / ".join(f"{1000 * statistics.median(r[key] for r in records):.0f}"
                            for key in ("read_seconds", "solve_seconds", "write_seconds"))
        per_gpu = Counter(r.get("gpu", "-") for r in records)
        spread = ", ".join(f"{gpu}: {n}" for gpu, n in sorted(per_gpu.items()))
        label = "in process (no Dask)" if row["workers"] == 0 else str(row["workers"])
        lines.append(f"| {label} | {row['wall']:.2f} | {rate:.2f} | {row_steady:.2f} | "
                     f"{versus(row_steady, 0)} | {versus(row_steady, 1)} | {stages} | {spread} | "
                     f"{row['startup']:.1f} |")
    lines += ["", f"Byte-identical masks across runs: {'yes' if identical else 'NO'}"]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--images", type=int, default=64, help="number of images (default 64)")
    parser.add_argument("--size", type=int, default=2048,
                        help="side of the square images in pixels (default 2048: ~4 MP)")
    parser.add_argument("--workers", default="0,1,2",
                        help="comma-separated worker counts to time; 0 = serial in process "
                             "(default 0,1,2)")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--work-dir", type=Path,
                        help="keep the generated images and outputs here (reused when present)")
    parser.add_argument("--append-results", action="store_true",
                        help="insert the table at the top of bench/RESULTS.md")
    args = parser.parse_args(argv)
    try:
        counts = [int(w) for w in args.workers.split(",") if w.strip()]
    except ValueError:
        parser.error(f"--workers takes integers, got {args.workers!r}")
    if not counts or min(counts) < 0 or args.images < 1 or args.size < 16:
        parser.error("need worker counts >= 0, --images >= 1 and --size >= 16")
    backend = resolve_device(args.device)
    gpus = gd.visible_gpus() if backend == "cuda" else None
    if gpus is not None and max(counts) > len(gpus):
        parser.error(f"{max(counts)} workers need {max(counts)} GPUs; this machine shows "
                     f"{len(gpus)}")

    work = args.work_dir or Path(tempfile.mkdtemp(prefix="bench_batch_"))
    try:
        print(f"generating {args.images} images of {args.size}x{args.size} in {work} ...",
              file=sys.stderr, flush=True)
        images, seeds = make_images(work, args.images, args.size)
        rows, digests = [], []
        for workers in counts:
            print(f"running {workers} worker(s) ...", file=sys.stderr, flush=True)
            row = run(workers, images, seeds, work / f"out_{workers}", args.device, gpus)
            failed = [r for r in row["records"] if r["status"] != OK]
            if failed:
                print(f"{len(failed)} image(s) failed, e.g. {failed[0]['image']}: "
                      f"{failed[0]['reason']}", file=sys.stderr)
                return 1
            rows.append(row)
            digests.append(masks_digest(work / f"out_{workers}"))
    finally:
        if args.work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    identical = all(d == digests[0] for d in digests[1:]) and len(digests[0]) == args.images
    text = table(rows, args, backend, identical)
    print(text)
    if args.append_results:
        name = device_name(backend) if backend == "cpu" else (
            f"{len(gpus)} x {cuda_status()[1]}")
        append_results(text, f"{datetime.date.today().isoformat()} - batch on a local Dask "
                             f"cluster (bench/bench_batch_multigpu.py) on {name}")
        print("appended to bench/RESULTS.md", file=sys.stderr)
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
