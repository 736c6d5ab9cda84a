"""Benchmark: full alpha-expansion on the Middlebury motorcycle pair, per min-cut backend.

For every device in ``--devices`` (cpu = PyMaxflow's Boykov-Kolmogorov, cuda = the GPU grid
solver) the same disparity computation runs end to end in this one process: data costs, every
expansion move's network and max-flow, until convergence. Reported per device: moves solved,
final energy, total min-cut seconds (the backends' own timings of each ``min_cut`` call summed
over the sequence: graph setup + max-flow + cut) and of the max-flow stage alone, network
build seconds (our NumPy/CuPy construction of each move), end-to-end seconds and the bad-pixel
rate against the ground truth (|d - d_gt| > 1 on pixels with ground truth). The backends return the same cut (the largest
minimum-cut source set), so their move sequences, energies and maps must be identical; the
script checks that.

    python bench/bench_stereo.py                          # full size, cpu and cuda if present
    python bench/bench_stereo.py --devices cpu --downscale 4
    python bench/bench_stereo.py --append-results         # also add the table to RESULTS.md

The pair is scikit-image's (``skimage.data.stereo_motorcycle()``, 500 x 741, ground truth
7..60 px), so nothing is downloaded.
"""

from __future__ import annotations

import argparse
import datetime
import math
import platform
import sys
import time
from pathlib import Path

import numpy as np

from graphcut.solver import cuda_status, min_cut
from graphcut.stereo import bad_pixel_rate, data_costs, disparity, expansion_network
from graphcut.stereo_io import motorcycle_pair

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
FULL_MAX_DISPARITY = 64


def device_name(device: str) -> str:
    if device == "cuda":
        return cuda_status()[1]
    name = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name} (PyMaxflow BK, 1 thread)"


def warm_up(device: str, left, right) -> None:
    """One small move on ``device`` so that one-time costs (CUDA module load) are not timed."""
    costs = data_costs(left[:32, :64], right[:32, :64], max_disparity=4, channel_axis=-1)
    from graphcut.stereo import smoothness_weights
    weights = smoothness_weights(left[:32, :64], channel_axis=-1)
    network, _ = expansion_network(costs, weights, costs.argmin(axis=0).astype(np.int32), 1)
    min_cut(network, device=device)


def run(device: str, left, right, truth, args) -> dict:
    warm_up(device, left, right)
    started = time.perf_counter()
    result = disparity(left, right, max_disparity=args.max_disparity, truncation=args.truncation,
                       smoothness=args.smoothness, channel_axis=-1, device=device,
                       max_cycles=args.max_cycles)
    seconds = time.perf_counter() - started
    return {"device": device, "name": device_name(device), "result": result,
            "maxflow": sum(result.maxflow_seconds.values()),
            "solve": sum(result.solve_seconds.values()), "end_to_end": seconds,
            "bad": bad_pixel_rate(result.labels, truth)}


def table(rows, shape, args) -> str:
    h, w = shape
    lines = [f"Alpha-expansion stereo, motorcycle {w}x{h} (downscale {args.downscale}), "
             f"{args.max_disparity + 1} labels, truncation {args.truncation}, smoothness "
             f"{args.smoothness}",
             "",
             "| device | backend | moves (accepted) | cycles | energy | min-cut s | of which "
             "max-flow s | network build s | end-to-end s | bad pixels |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        r = row["result"]
        lines.append(f"| {row['name']} | {row['device']} | {r.num_moves} ({r.accepted_moves}) | "
                     f"{r.cycles} | {r.energy} | {row['maxflow']:.3f} | {row['solve']:.3f} | "
                     f"{r.build_seconds:.3f} | {row['end_to_end']:.3f} | {row['bad']:.2%} |")
    by_device = {row["device"]: row for row in rows}
    if "cpu" in by_device and "cuda" in by_device:
        cpu, gpu = by_device["cpu"], by_device["cuda"]
        lines += ["", f"Speed-up cuda vs cpu over the whole sequence: min-cut "
                      f"{cpu['maxflow'] / gpu['maxflow']:.2f}x, max-flow stage "
                      f"{cpu['solve'] / gpu['solve']:.2f}x, end to end "
                      f"{cpu['end_to_end'] / gpu['end_to_end']:.2f}x"]
    if len(rows) > 1:
        first = rows[0]["result"]
        same = all(np.array_equal(first.labels, row["result"].labels)
                   and [m.flow for m in first.moves] == [m.flow for m in row["result"].moves]
                   for row in rows[1:])
        lines.append(f"Identical move flows and disparity maps across devices: "
                     f"{'yes' if same else 'NO'}")
    return "\n".join(lines)


def append_results(text: str, title: str) -> None:
    """Insert a section at the top of RESULTS.md (newest first), below the file's title."""
    section = f"## {title}\n\n{text}\n\n"
    if RESULTS.exists():
        old = RESULTS.read_text()
        lines = old.splitlines(keepends=True)
        head = 0
        if lines and lines[0].startswith("# "):
            head = 1
            while head < len(lines) and not lines[head].startswith("## "):
                head += 1
        new = "".join(lines[:head]) + section + "".join(lines[head:])
    else:
        new = "# Benchmark results\n\nNewest first.\n\n" + section
    temporary = RESULTS.with_name(f".{RESULTS.name}.tmp")
    temporary.write_text(new)
    temporary.replace(RESULTS)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devices", default="cpu,cuda",
                        help="comma-separated backends to time (cpu, cuda); cuda is skipped "
                             "with a note when no GPU backend is available (default: cpu,cuda)")
    parser.add_argument("--downscale", type=int, default=1,
                        help="integer reduction of the 500x741 pair (default 1: full size)")
    parser.add_argument("--max-disparity", type=int, default=None,
                        help=f"largest label (default {FULL_MAX_DISPARITY} / downscale)")
    parser.add_argument("--truncation", type=int, default=20)
    parser.add_argument("--smoothness", type=int, default=6)
    parser.add_argument("--max-cycles", type=int, default=20)
    parser.add_argument("--append-results", action="store_true",
                        help=f"insert the table at the top of {RESULTS}")
    args = parser.parse_args(argv)
    if args.downscale < 1:
        parser.error("--downscale must be >= 1")
    if args.max_disparity is None:
        args.max_disparity = math.ceil(FULL_MAX_DISPARITY / args.downscale)
    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    unknown = sorted(set(devices) - {"cpu", "cuda"})
    if unknown or not devices:
        parser.error(f"--devices takes cpu and/or cuda, got {args.devices!r}")
    if "cuda" in devices:
        ok, why = cuda_status()
        if not ok:
            print(f"skipping cuda: {why}", file=sys.stderr)
            devices.remove("cuda")
    if not devices:
        parser.error("no requested device can run here")

    left, right, truth = motorcycle_pair(downscale=args.downscale)
    rows = []
    for device in devices:
        print(f"running {device} ...", file=sys.stderr, flush=True)
        rows.append(run(device, left, right, truth, args))
    text = table(rows, truth.shape, args)
    print(text)
    if args.append_results:
        devices_named = ", ".join(row["name"] for row in rows)
        append_results(text, f"{datetime.date.today().isoformat()} - stereo alpha-expansion "
                             f"(bench/bench_stereo.py) on {devices_named}")
        print(f"appended to {RESULTS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
