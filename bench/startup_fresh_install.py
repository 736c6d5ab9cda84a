"""The fresh-install part of bench/bench_startup.py: a graphcut wheel installed into a new
virtual environment, offline, then its first runs in new processes with empty kernel caches.

The venv is made with ``--system-site-packages`` (CuPy, and whatever else the interpreter has,
comes from its site-packages; the label of the figure says so); graphcut's other dependencies
come from a wheelhouse folder (``--find-links``) when given. PYTHONPATH is removed from the
environment of every step in the new venv. Where that interpreter is itself a venv (the GPU
machine's ``python3`` is one, holding NumPy, SciPy and CuPy), ``--system-site-packages`` would
reach only the base interpreter's packages; the new venv then gets a ``.pth`` file naming the
interpreter's own site-packages, which is what ``--system-site-packages`` means for it.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

# Distributions a new venv has by itself (or that is the wheel under test), not dependencies.
VENV_OWN = ("graphcut", "pip", "setuptools", "wheel")

__all__ = ["bench_fresh_install", "fresh_caches", "fresh_install_table", "fresh_venv_env",
           "run_timed", "run_timed_in"]


def fresh_caches(root: Path, name: str) -> dict:
    """Environment with empty CuPy and CUDA-driver kernel caches under ``root/name``."""
    cupy_cache, driver_cache = root / name / "cupy", root / name / "nv"
    cupy_cache.mkdir(parents=True, exist_ok=True)
    driver_cache.mkdir(parents=True, exist_ok=True)
    return {"CUPY_CACHE_DIR": str(cupy_cache), "CUDA_CACHE_PATH": str(driver_cache)}


def run_timed(command, env) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{done.stderr}")
    return wall, done.stdout


def fresh_venv_env(extra: dict | None = None) -> dict:
    """This process's environment without PYTHONPATH (so that packages put on it, e.g. by
    bench/device_env.sh, neither satisfy the fresh venv's requirements nor leak into its runs),
    plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.pop("GRAPHCUT_CUDA_KERNELS", None)
    env.update(extra or {})
    return env


def bench_fresh_install(python, api_script: str, image_path, seeds_path, work: Path, repeats,
                        wheel: Path | None = None, device: str = "cuda",
                        find_links: list[Path] | None = None) -> list:
    """Rows (what, seconds, note) of a fresh install: wheel, new venv, first runs.

    Parameters
    ----------
    python
        interpreter that builds the wheel and creates the venv (``venv
        --system-site-packages``: CuPy, and whatever else that interpreter has, comes from its
        site-packages).
    api_script
        Python source of the API timings (bench_startup.API_SCRIPT); prints one JSON line.
    image_path, seeds_path
        inputs of the timed `graphcut segment` runs.
    work
        scratch folder (the wheel, the venv, the kernel caches).
    repeats
        repeats of the API script's second segment.
    wheel
        a graphcut wheel to install instead of building one from this checkout (the build needs
        setuptools with bdist_wheel, i.e. setuptools >= 70.1 or the ``wheel`` package).
    device
        "cuda" or "cpu": the device of the timed runs.
    find_links
        folders of wheels (wheelhouses, no network): the install resolves graphcut's
        dependencies, each taken from the system site-packages when it is there and from these
        folders otherwise (``pip install --no-index --find-links``). Without it the wheel is
        installed with ``--no-deps`` and every dependency must be in the system site-packages.

    Returns
    -------
    list of (str, float, str)
        step, wall seconds, note.

    Raises
    ------
    RuntimeError
        a step failed, or the new venv lacks a dependency (``pip check``; the message names it
        and says to pass ``--find-links``), or it imported graphcut from elsewhere.
    """
    repository = Path(__file__).resolve().parents[1]
    wheels, venv, empty = work / "wheel", work / "fresh-venv", work / "empty-cwd"
    empty.mkdir()
    built = float("nan")
    if wheel is None:
        started = time.perf_counter()
        run_timed([python, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                   "--no-index", "-w", str(wheels), str(repository)], dict(os.environ))
        built = time.perf_counter() - started
        wheel = next(wheels.glob("graphcut-*.whl"))
    started = time.perf_counter()
    run_timed([python, "-m", "venv", "--system-site-packages", str(venv)], fresh_venv_env())
    fresh = str(venv / "bin" / "python")
    _see_parent_venv(python, fresh)
    source = ([part for folder in find_links for part in ("--find-links", str(folder))]
              if find_links else ["--no-deps"])
    run_timed([fresh, "-m", "pip", "install", "-q", "--no-index", *source, str(wheel)],
              fresh_venv_env())
    installed = time.perf_counter() - started
    check = subprocess.run([fresh, "-m", "pip", "check"], capture_output=True, text=True,
                           env=fresh_venv_env(), timeout=300)
    # graphcut's own requirements only (the interpreter's other packages may have theirs unmet)
    ours = [line for line in check.stdout.splitlines() if line.lower().startswith("graphcut ")]
    if ours:
        raise RuntimeError("the fresh venv lacks dependencies:\n" + "\n".join(ours) + "\n"
                           "pass --find-links DIR, a folder of their wheels")
    _, listed = run_timed([fresh, "-m", "pip", "list", "--local", "--format", "freeze"],
                          fresh_venv_env())
    from_wheelhouse = sorted(line.split("==")[0] for line in listed.split() if "==" in line
                             and line.split("==")[0].lower() not in VENV_OWN)
    env = fresh_venv_env(fresh_caches(work, "fresh-install"))
    _, where = run_timed_in([fresh, "-c", "import graphcut; print(graphcut.__file__)"], env,
                            empty)
    if not where.strip().startswith(str(venv)):
        raise RuntimeError(f"the fresh venv imported graphcut from {where.strip()}, not from "
                           f"{venv}")
    command = [fresh, "-m", "graphcut.cli", "segment", str(image_path), "--seeds",
               str(seeds_path), "-o", str(work / "fresh-mask.png"), "--overwrite",
               "--device", device]
    env = fresh_venv_env(fresh_caches(work, "fresh-install-2"))
    first, _ = run_timed_in(command, env, empty)
    second, _ = run_timed_in(command, env, empty)
    env = fresh_venv_env(fresh_caches(work, "fresh-install-3"))
    wall, out = run_timed_in([fresh, "-c", api_script, str(image_path), str(seeds_path),
                              str(repeats), "segment", device], env, empty)
    api = json.loads(out.strip().splitlines()[-1])
    folders = ", ".join(f"{folder.name}/" for folder in find_links or ())
    deps = (f"--find-links {folders}; into the venv: {', '.join(from_wheelhouse) or 'none'}; "
            "the rest from the interpreter's site-packages (--system-site-packages, or a .pth "
            "naming them where the interpreter is itself a venv)"
            if find_links else "--no-deps; all dependencies from the system "
            "site-packages")
    return [("pip wheel (build from this checkout)", built,
             "not part of a user's install" if built == built else f"given: {wheel.name}"),
            ("new venv (--system-site-packages) + pip install of the wheel", installed,
             f"--no-index, {deps}"),
            (f"first `graphcut segment --device {device}`, fresh install", first,
             "new venv, new process, empty kernel caches"),
            ("second `graphcut segment`, same venv", second, "kernel caches filled by the first"),
            ("fresh install API: import graphcut", api["import_graphcut"], "new process"),
            ("fresh install API: cuda_status()", api["cuda_status"], "CuPy import, context"),
            ("fresh install API: first segment()", api["first_segment"],
             "empty kernel caches"),
            ("fresh install API: process total", wall, "interpreter start to exit")]


def _site_paths(python) -> tuple[bool, list[str]]:
    """(whether ``python`` runs in a venv, its purelib and platlib folders)."""
    code = ("import json, sys, sysconfig; p = sysconfig.get_paths(); print(json.dumps("
            "[sys.prefix != sys.base_prefix, sorted({p['purelib'], p['platlib']})]))")
    done = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True,
                          env=fresh_venv_env(), timeout=60)
    in_venv, paths = json.loads(done.stdout)
    return in_venv, paths


def _see_parent_venv(python, fresh) -> None:
    """When ``python`` is itself a venv, let the new venv ``fresh`` see its site-packages."""
    in_venv, parent = _site_paths(python)
    if not in_venv:
        return
    _, own = _site_paths(fresh)
    Path(own[0], "graphcut-bench-parent-venv.pth").write_text("\n".join(parent) + "\n")


def run_timed_in(command, env, cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900,
                          cwd=cwd)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n{done.stderr}")
    return wall, done.stdout


def fresh_install_table(rows, shape) -> str:
    lines = [f"Fresh install: astronaut at {shape[1]}x{shape[0]} "
             f"({shape[0] * shape[1] / 2**20:.1f} MP)", "", "| step | seconds | note |",
             "|---|---|---|"]
    lines += [f"| {what} | {seconds:.2f} | {note} |" for what, seconds, note in rows]
    return "\n".join(lines)
