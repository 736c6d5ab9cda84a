"""Fixed costs of the GPU path: start-up per command and per API call (fresh install, empty
kernel caches, filled kernel caches), and min_cut on host arrays against BK.

Inputs: astronaut (the bundled sample with its seeds) scaled to --megapixels (default 4),
written as PNG files; camera scaled to --sizes megapixels for the min_cut part.

0. Fresh install (``--parts fresh_install``, bench/startup_fresh_install.py): a wheel built
   from this checkout (``pip wheel --no-deps --no-build-isolation``), a new virtual environment
   (``venv --system-site-packages``: CuPy, and whatever else the interpreter has, comes from its
   site-packages), ``pip install --no-index`` of the wheel with its dependencies from the
   wheelhouse --find-links DIR where the system site-packages lack them (without --find-links:
   ``--no-deps``, all from the system), ``pip check``, then in a new process started in an empty
   folder (graphcut imported from the new venv: checked; PYTHONPATH removed) with empty kernel
   caches: `graphcut segment` (whole-process wall time) and the API script below. The wheel
   build and the install are timed apart. No network. The operating system's file cache is not
   dropped (CuPy's and graphcut's files were read before). ``--device cpu`` runs this part
   alone on the CPU backend (a check of the procedure where there is no GPU).
1. Commands (wall time of the whole process, `python -m graphcut.cli segment ...`):
   - cuda, empty kernel caches: the first run with an empty CuPy kernel cache and an empty
     CUDA driver cache (fresh CUPY_CACHE_DIR and CUDA_CACHE_PATH) in a new process (the
     package was imported before by other processes: the file cache is warm);
   - cuda, filled kernel caches: later runs with those caches (median of --repeats);
   - cpu: `--device cpu` (median of --cpu-repeats), and its ratio to cuda warm;
   with --kernels both, the cold run is repeated with GRAPHCUT_CUDA_KERNELS=nvrtc (the kernels
   compiled by NVRTC instead of loaded from the shipped fatbins).
2. API calls, each column a new process (empty or filled kernel caches as above; each row the
   time of that call inside the process, imports in their own rows): `import graphcut`;
   `cuda_status()` (imports CuPy, creates the CUDA context); the first `graphcut.segment` and
   the second (median of the next --repeats); a new `Segmenter`'s first update and the next; with
   and without `graphcut.warmup.warm_up` first. Also reported: where each kernel module came
   from (binary = shipped fatbin, nvrtc) and which cupyx modules were imported.
3. min_cut on host NumPy arrays (camera at --sizes MP): `min_cut(network, device="cuda")` wall
   time, network in host memory -> cut in host memory (upload, solve and cut download included;
   the shape's state kept from a previous solve; median of --repeats) against PyMaxflow's BK
   solve alone (graph already built, median), and the upload alone against a plain
   `cupy.asarray` of the six arrays (pageable memory).

    python bench/bench_startup.py [--megapixels 4] [--sizes 1,4,16] [--repeats 5] \
        [--kernels auto|nvrtc|both] [--parts fresh_install,commands,api,min_cut] [--profile]
        [--find-links DIR] [--device cuda|cpu] [--out FILE]

--profile prints where a cold first segment spends its time (cProfile, cumulative, top 30).
Prints Markdown tables (and writes them to --out).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import statistics
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_grid import median_seconds, scaled_inputs  # noqa: E402
from startup_fresh_install import (bench_fresh_install, fresh_caches,  # noqa: E402
                                   fresh_install_table, run_timed)

import graphcut  # noqa: E402

API_SCRIPT = textwrap.dedent("""
    import json, sys, time
    started = time.perf_counter()
    import graphcut
    from graphcut.solver import cuda_status
    imported = time.perf_counter()
    image_path, seeds_path, repeats, warm = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    device = sys.argv[5] if len(sys.argv) > 5 else "cuda"
    image = graphcut.read_image(image_path)
    seeds = graphcut.read_seeds(seeds_path, image.shape)
    read = time.perf_counter()
    ok, why = cuda_status()
    status = time.perf_counter()
    out = {"import_graphcut": imported - started, "read_inputs": read - imported,
           "cuda_status": status - read, "device": why}
    if warm == "warm_up":
        from graphcut.segmentation import warm_up
        t = time.perf_counter()
        session = graphcut.Segmenter(image, device=device)
        out["segmenter_init"] = time.perf_counter() - t
        t = time.perf_counter()
        warm_up(session)
        out["warm_up"] = time.perf_counter() - t
        t = time.perf_counter()
        session.update(seeds)
        out["first_update_after_warm_up"] = time.perf_counter() - t
    else:
        t = time.perf_counter()
        mask, result = graphcut.segment(image, seeds, device=device, return_result=True)
        out["first_segment"] = time.perf_counter() - t
        out["first_segment_stats"] = result.stats["seconds"]
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            graphcut.segment(image, seeds, device=device)
            times.append(time.perf_counter() - t)
        out["second_segment"] = sorted(times)[len(times) // 2]
        t = time.perf_counter()
        session = graphcut.Segmenter(image, device=device)
        session.update(seeds)
        out["first_update"] = time.perf_counter() - t
        seeds2 = seeds.copy()
        seeds2[:8, :] = 2
        t = time.perf_counter()
        session.update(seeds2)
        out["next_update"] = time.perf_counter() - t
    if device == "cuda":
        from graphcut.solver.cuda import _loader
        out["kernels"] = {str(k.binary_name): v for k, v in _loader._origins.items()}
    out["cupyx_modules"] = sorted(m for m in sys.modules if m.startswith("cupyx"))
    out["total"] = time.perf_counter() - started
    print(json.dumps(out))
""")

PROFILE_SCRIPT = textwrap.dedent("""
    import cProfile, pstats, sys
    import graphcut
    image = graphcut.read_image(sys.argv[1])
    seeds = graphcut.read_seeds(sys.argv[2], image.shape)
    profile = cProfile.Profile()
    profile.enable()
    graphcut.segment(image, seeds, device="cuda")
    profile.disable()
    pstats.Stats(profile).sort_stats("cumulative").print_stats(30)
""")


def write_inputs(folder: Path, megapixels: float) -> tuple[Path, Path, tuple[int, int]]:
    image, seeds = scaled_inputs("astronaut", megapixels)
    image_path, seeds_path = folder / "image.png", folder / "seeds.png"
    Image.fromarray(image).save(image_path)
    graphcut.write_seeds(seeds_path, seeds)
    return image_path, seeds_path, image.shape[:2]


def bench_commands(python, image_path, seeds_path, work: Path, repeats, cpu_repeats, kernels):
    """Rows: (what, wall seconds, graphcut's own seconds, note)."""
    rows = []
    command = [python, "-m", "graphcut.cli", "segment", str(image_path), "--seeds",
               str(seeds_path), "-o", str(work / "mask.png"), "--overwrite"]
    own = re.compile(r", ([0-9.]+) s \(solve ([0-9.]+) s\)")

    def timed(env, device):
        wall, out = run_timed(command + ["--device", device], env)
        match = own.search(out)
        return wall, float(match.group(1)) if match else float("nan")

    modes = {"auto": ["shipped fatbins (NVRTC where none)"], "nvrtc": ["NVRTC only"],
             "both": ["shipped fatbins (NVRTC where none)", "NVRTC only"]}[kernels]
    for label in modes:
        env = dict(os.environ, **fresh_caches(work, f"cli-{len(rows)}"))
        env["GRAPHCUT_CUDA_KERNELS"] = "nvrtc" if label == "NVRTC only" else ""
        wall, own_s = timed(env, "cuda")
        rows.append((f"cuda, empty kernel caches ({label})", wall, own_s,
                     "new process; package files already in the OS file cache"))
        if label == modes[0]:
            warm = [timed(env, "cuda") for _ in range(repeats)]
            warm_wall = statistics.median(w for w, _ in warm)
            rows.append((f"cuda, filled kernel caches ({label})", warm_wall,
                         statistics.median(o for _, o in warm), f"median of {repeats}"))
    cpu = [timed(dict(os.environ), "cpu") for _ in range(cpu_repeats)]
    cpu_wall = statistics.median(w for w, _ in cpu)
    rows.append(("cpu", cpu_wall, statistics.median(o for _, o in cpu),
                 f"median of {cpu_repeats}; {cpu_wall / warm_wall:.1f}x the cuda wall with "
                 "filled caches"))
    return rows


def bench_api(python, image_path, seeds_path, work: Path, repeats, kernels):
    results = {}
    for cache in ("cold", "warm"):
        for flow in ("segment", "warm_up"):
            env = dict(os.environ, **fresh_caches(work, f"api-{flow}"))
            env["GRAPHCUT_CUDA_KERNELS"] = "nvrtc" if kernels == "nvrtc" else ""
            if cache == "warm":  # fill the caches first
                run_timed([python, "-c", API_SCRIPT, str(image_path), str(seeds_path), "1",
                           flow], env)
            _, out = run_timed([python, "-c", API_SCRIPT, str(image_path), str(seeds_path),
                                str(repeats), flow], env)
            results[(cache, flow)] = json.loads(out.strip().splitlines()[-1])
    return results


def bench_min_cut(sizes, repeats):
    import cupy

    from graphcut.solver import GridNetwork, min_cut
    rows = []
    for megapixels in sizes:
        image, seeds = scaled_inputs("camera", megapixels)
        network = graphcut.build_network(image, seeds)
        bk_runs = max(1, repeats // 2) if megapixels >= 16 else repeats
        bk = [min_cut(network, device="cpu") for _ in range(bk_runs)]
        bk_solve = statistics.median(r.stats["seconds"]["solve"] for r in bk)
        first = min_cut(network, device="cuda")  # kernels loaded, state allocated, graphs captured
        assert first.flow == bk[0].flow and np.array_equal(first.source_side, bk[0].source_side)
        sync = cupy.cuda.Device().synchronize
        wall, result = median_seconds(lambda: min_cut(network, device="cuda"), repeats, sync)
        upload = statistics.median(
            min_cut(network, device="cuda").stats["seconds"]["upload"] for _ in range(repeats))
        arrays = (network.source, network.sink, network.right, network.down, network.left,
                  network.up)
        pageable, _ = median_seconds(lambda: [cupy.asarray(a) for a in arrays], repeats, sync)
        stats = result.stats["seconds"]
        rows.append({"shape": image.shape[:2], "bk_solve": bk_solve, "gpu_wall": wall,
                     "upload": upload, "solve": stats["solve"], "cut": stats["cut"],
                     "pageable_upload": pageable, "flow_equal": result.flow == bk[0].flow})
    return rows


def command_table(rows, shape) -> str:
    lines = [f"Commands: `graphcut segment` of astronaut at {shape[1]}x{shape[0]} "
             f"({shape[0] * shape[1] / 2**20:.1f} MP), whole-process wall time",
             "", "| run | wall (s) | graphcut's own (s) | note |", "|---|---|---|---|"]
    lines += [f"| {what} | {wall:.2f} | {own:.2f} | {note} |" for what, wall, own, note in rows]
    return "\n".join(lines)


def api_table(results) -> str:
    keys = [("import_graphcut", "import graphcut"),
            ("cuda_status", "cuda_status() (CuPy, context)"),
            ("first_segment", "first segment()"), ("second_segment", "second segment() (median)"),
            ("first_update", "new Segmenter + first update"), ("next_update", "its next update"),
            ("segmenter_init", "Segmenter() (n-links)"), ("warm_up", "warm_up(session)"),
            ("first_update_after_warm_up", "first update after warm_up"),
            ("total", "process total")]
    columns = [(cache, flow) for cache in ("cold", "warm") for flow in ("segment", "warm_up")]
    names = {"cold": "empty", "warm": "filled"}
    lines = ["API calls, each column a new process (seconds of each call inside it; kernel "
             "caches empty or filled; the package already imported before by other "
             "processes)", "",
             "| call | " + " | ".join(f"{names[c]} kernel caches, {f} run" for c, f in columns)
             + " |",
             "|---" * (len(columns) + 1) + "|"]
    for key, label in keys:
        cells = [f"{results[c][key]:.3f}" if key in results[c] else "" for c in columns]
        if any(cells):
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    any_run = results[("warm", "segment")]
    lines += ["", f"Device: {any_run['device']}. Kernel modules: "
              + ", ".join(f"{k}: {v}" for k, v in sorted(any_run["kernels"].items())),
              f"cupyx modules imported: {any_run['cupyx_modules'] or 'none'}",
              "first segment() stats (empty kernel caches): "
              f"{results[('cold', 'segment')]['first_segment_stats']}"]
    return "\n".join(lines)


def min_cut_table(rows) -> str:
    lines = ["min_cut on host NumPy arrays (camera; wall = network in host memory -> cut in host "
             "memory, median; BK = PyMaxflow's solve alone)", "",
             "| grid | BK solve (s) | GPU wall (s) | ratio | upload (s) | solve (s) | cut (s) | "
             "pageable upload of the 6 arrays (s) | same flow and cut |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        h, w = r["shape"]
        lines.append(f"| {w}x{h} ({h * w / 2**20:.0f} MP) | {r['bk_solve']:.3f} | "
                     f"{r['gpu_wall']:.4f} | {r['bk_solve'] / r['gpu_wall']:.1f}x | "
                     f"{r['upload']:.4f} | {r['solve']:.4f} | {r['cut']:.4f} | "
                     f"{r['pageable_upload']:.4f} | {r['flow_equal']} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--megapixels", type=float, default=4.0)
    parser.add_argument("--sizes", default="1,4,16", help="megapixels of the min_cut part")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--cpu-repeats", type=int, default=1)
    parser.add_argument("--kernels", choices=("auto", "nvrtc", "both"), default="both")
    parser.add_argument("--parts", default="fresh_install,commands,api,min_cut")
    parser.add_argument("--python", default=sys.executable, help="interpreter of the runs")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--wheel", type=Path, default=None,
                        help="fresh_install: install this graphcut wheel instead of building "
                             "one from this checkout")
    parser.add_argument("--find-links", type=Path, action="append", default=None,
                        help="fresh_install: folder of wheels of graphcut's dependencies "
                             "(offline install; those missing from the system site-packages "
                             "come from it); may be repeated")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="cpu: only the fresh_install part, its runs on the CPU backend")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    args.find_links = [folder.resolve() for folder in args.find_links or ()]
    for folder in args.find_links:
        if not folder.is_dir():
            parser.error(f"--find-links {folder}: not a folder")
    from graphcut.solver import cuda_status
    ok, why = cuda_status()
    if args.device == "cpu":
        if parts != {"fresh_install"}:
            parser.error("--device cpu runs only --parts fresh_install")
    elif not ok:
        print(f"bench_startup needs the GPU backend: {why}", file=sys.stderr)
        return 2
    shipped = None
    if args.device == "cuda":
        from graphcut.solver.cuda import _variants
        shipped = _variants.read_manifest()
    header = (f"# bench_startup, {datetime.date.today()}, --device {args.device}, {why}; "
              "shipped fatbins: " + (f"yes ({shipped['nvcc']})" if shipped else "none (NVRTC)"))
    sections = [header]
    print(header, flush=True)
    with tempfile.TemporaryDirectory(prefix="graphcut-startup-") as folder:
        work = Path(folder)
        image_path, seeds_path, shape = write_inputs(work, args.megapixels)
        if "fresh_install" in parts:
            try:
                rows = bench_fresh_install(args.python, API_SCRIPT, image_path, seeds_path,
                                           work, args.repeats, args.wheel, args.device,
                                           args.find_links)
                sections.append(fresh_install_table(rows, shape))
            except (RuntimeError, StopIteration) as error:
                sections.append(f"Fresh install: not run: {str(error)[-600:]} (a wheel build "
                                "needs --wheel PATH, or setuptools >= 70.1 or the wheel "
                                "package; missing dependencies need --find-links DIR)")
            print(sections[-1] + "\n", flush=True)
        if "commands" in parts:
            rows = bench_commands(args.python, image_path, seeds_path, work, args.repeats,
                                  args.cpu_repeats, args.kernels)
            sections.append(command_table(rows, shape))
            print(sections[-1] + "\n", flush=True)
        if "api" in parts:
            sections.append(api_table(bench_api(args.python, image_path, seeds_path, work,
                                                args.repeats, args.kernels)))
            print(sections[-1] + "\n", flush=True)
        if args.profile:
            env = dict(os.environ, **fresh_caches(work, "profile"))
            _, out = run_timed([args.python, "-c", PROFILE_SCRIPT, str(image_path),
                                str(seeds_path)], env)
            print(out, flush=True)
    if "min_cut" in parts:
        sizes = [float(s) for s in args.sizes.split(",") if s]
        sections.append(min_cut_table(bench_min_cut(sizes, args.repeats)))
        print(sections[-1] + "\n", flush=True)
    if args.out:
        args.out.write_text("\n\n".join(sections) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
