"""Fixed costs: what a process imports and loads before its first answer, and the upload path.

- Without a GPU (or with ``device="cpu"``) CuPy is never imported: checked in fresh processes
  with a stand-in ``cupy`` package that records any attempt to import it.
- On a GPU: the upload through pinned staging buffers builds exactly the state the reference
  (CuPy element-wise) path built; answers equal the CPU backend's; the shipped fatbins are what
  the loader uses; a warmed-up state is the one the next solve uses; the segmentation path does
  not import CuPy's SciPy or linear-algebra extras.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import graphcut
from graphcut.solver import api

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "samples" / "images" / "camera.png"
SAMPLE_SEEDS = ROOT / "samples" / "seeds" / "camera.png"


def _no_gpu_driver() -> bool:
    count, _ = api.driver_device_count()
    return not count


def _run_with_recording_cupy(tmp_path, code: str, *args: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter where ``import cupy`` finds a stand-in that writes a
    marker file and fails (as a broken CuPy would)."""
    fake = tmp_path / "fake" / "cupy"
    fake.mkdir(parents=True, exist_ok=True)
    marker = tmp_path / "cupy-was-imported"
    marker.unlink(missing_ok=True)
    (fake / "__init__.py").write_text(textwrap.dedent(f"""
        import traceback
        with open({str(marker)!r}, "a") as file:
            file.write("".join(traceback.format_stack()) + "\\n")
        raise ImportError("stand-in cupy: importing CuPy is not allowed in this test")
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tmp_path / "fake"), *filter(None, [os.environ.get("PYTHONPATH")])]))
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, timeout=300)
    done.marker = marker.read_text() if marker.exists() else ""
    return done


CPU_SEGMENT = """
import sys
import graphcut
from graphcut.solver import min_cut, resolve_device
image = graphcut.read_image(sys.argv[1])
seeds = graphcut.read_seeds(sys.argv[2], image.shape)
mask = graphcut.segment(image, seeds, device=sys.argv[3])
session = graphcut.Segmenter(image, device=sys.argv[3])
assert (session.update(seeds) == mask).all()
assert resolve_device(sys.argv[3]) == "cpu"
print("cupy" in sys.modules, sorted(m for m in sys.modules if m.startswith("cupy")))
"""


def test_cpu_segmentation_never_imports_cupy(tmp_path):
    done = _run_with_recording_cupy(tmp_path, CPU_SEGMENT, str(SAMPLE), str(SAMPLE_SEEDS), "cpu")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False []"
    assert done.marker == "", f"CuPy was imported from:\n{done.marker}"


@pytest.mark.skipif(not _no_gpu_driver(), reason="this machine has a CUDA device")
def test_auto_on_a_machine_without_gpu_never_imports_cupy(tmp_path):
    """CuPy installed (here a stand-in) but no CUDA driver or device: "auto" picks the CPU
    from the driver's answer alone."""
    done = _run_with_recording_cupy(tmp_path, CPU_SEGMENT, str(SAMPLE), str(SAMPLE_SEEDS), "auto")
    assert done.returncode == 0, done.stderr
    assert done.marker == "", f"CuPy was imported from:\n{done.marker}"


@pytest.mark.skipif(not _no_gpu_driver(), reason="this machine has a CUDA device")
def test_cli_on_a_machine_without_gpu_never_imports_cupy(tmp_path):
    code = ("import sys, runpy; sys.argv = ['graphcut'] + sys.argv[1:]; "
            "runpy.run_module('graphcut.cli', run_name='__main__')")
    for device in ("cpu", "auto"):
        out = tmp_path / f"mask-{device}.png"
        done = _run_with_recording_cupy(tmp_path, code, "segment", str(SAMPLE), "--seeds",
                                        str(SAMPLE_SEEDS), "-o", str(out), "--device", device)
        assert done.returncode == 0, done.stderr
        assert "backend cpu" in done.stdout and out.exists()
        assert done.marker == "", f"CuPy was imported from:\n{done.marker}"


def test_import_graphcut_imports_no_gpu_code():
    done = subprocess.run([sys.executable, "-c", (
        "import sys, graphcut, graphcut.solver, graphcut.batch, graphcut.segmentation, "
        "graphcut.solver.cuda, graphcut.solver.cuda._variants; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('cupy', 'cupyx') "
        "or m.startswith('graphcut.solver.cuda.') and not m.endswith('_variants')))")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("given", [None, "0", "1"])
def test_import_graphcut_asks_cupy_for_precompiled_headers_unless_the_user_chose(given):
    """``import graphcut`` sets ``CUPY_NVRTC_USE_PCH=1`` (CuPy's first-run kernel compiles
    about 40 % faster) before anything can import CuPy, and keeps a value the user set; a
    child process (the app's solver, a Dask worker started from it) inherits it."""
    env = {k: v for k, v in os.environ.items() if k != "CUPY_NVRTC_USE_PCH"}
    if given is not None:
        env["CUPY_NVRTC_USE_PCH"] = given
    code = ("import os, subprocess, sys, graphcut; "
            "print(os.environ.get('CUPY_NVRTC_USE_PCH'), 'cupy' in sys.modules); "
            "sys.stdout.flush(); "
            "subprocess.run([sys.executable, '-c', "
            "'import os; print(os.environ.get(\\'CUPY_NVRTC_USE_PCH\\'))'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    expected = "1" if given is None else given
    assert done.stdout.split() == [expected, "False", expected]


def test_cuda_status_without_a_driver_does_not_import_cupy(monkeypatch):
    """The driver's answer comes first: no device, no ``import cupy``."""
    import builtins
    attempts = []
    real_import = builtins.__import__

    def recording_import(name, *args, **kwargs):
        if name.split(".")[0] == "cupy":
            attempts.append(name)
            raise ImportError("not allowed")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(api, "cupy_installed", lambda: True)
    monkeypatch.setattr(builtins, "__import__", recording_import)
    monkeypatch.setattr(api, "nvidia_gpu_present", lambda: False)
    for count, why, expected in ((None, "no libcuda", "no usable CUDA driver (no libcuda)"),
                                 (0, "no CUDA device", "the CUDA driver sees no device")):
        monkeypatch.setattr(api, "driver_device_count", lambda c=count, w=why: (c, w))
        for cached in (api.cuda_status, api.gpu_hint):
            cached.cache_clear()
        try:
            assert api.cuda_status() == (False, expected)
            assert api.resolve_device("auto") == "cpu"
        finally:
            for cached in (api.cuda_status, api.gpu_hint):
                cached.cache_clear()
    assert attempts == []


def test_driver_probe_without_the_driver_library(monkeypatch):
    monkeypatch.setattr(api, "_DRIVER_LIBRARIES", ("libcuda-that-does-not-exist.so.9",))
    count, why = api.driver_device_count()
    assert count is None and "not installed" in why


def test_app_solver_prepares_the_session_before_the_first_stroke():
    """The app opens an image in its solver as soon as the image shows (a Session): that makes
    the session, so the first stroke only updates it; answers are those of a plain segment."""
    from graphcut.gui.sharing import SeedDelta
    from graphcut.gui.solve import Job, Session, Solver
    image = graphcut.read_image(SAMPLE)
    seeds = graphcut.read_seeds(SAMPLE_SEEDS, image.shape)
    solver = Solver()
    opened = solver.open(Session(7, image, 10.0, "cpu"))
    assert opened.error is None and solver.token == 7
    session = solver._segmenter
    assert session is not None and session.last_result is None  # CPU: no throwaway solve
    outcome = solver.run(Job(1, 7, 10.0, SeedDelta(None, seeds)))
    assert outcome.error is None and solver._segmenter is session
    mask = np.zeros(seeds.shape, bool)
    outcome.update.apply(mask)
    # the session's model: the app's default, the library's (gui/solve.py Session.model)
    assert np.array_equal(mask, graphcut.segment(image, seeds, lam=10.0, device="cpu"))
    failed = solver.open(Session(8, np.zeros((4, 4, 7)), 10.0, "cpu"))
    assert failed.error and "channels" in failed.error


def test_warm_up_leaves_cpu_sessions_alone():
    from graphcut.segmentation import warm_up
    image = graphcut.read_image(SAMPLE)
    session = graphcut.Segmenter(image, device="cpu")
    assert warm_up(session) == 0.0 and session.last_result is None


# ---- on the GPU ---------------------------------------------------------------------------

def _random_grid(rng, shape, *, symmetric, big=1000):
    h, w = shape
    source, sink = rng.integers(0, big, (2, h, w)).astype(np.int32)
    source[rng.random((h, w)) < 0.5] = 0
    right, left = rng.integers(0, big, (2, h, w - 1)).astype(np.int32)
    down, up = rng.integers(0, big, (2, h - 1, w)).astype(np.int32)
    if symmetric:
        return graphcut.GridNetwork(source, sink, right, down)
    return graphcut.GridNetwork(source, sink, right, down, left, up)


SHAPES = [(1, 1), (1, 9), (11, 1), (2, 2), (37, 53), (300, 257)]


@pytest.mark.gpu
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize("where", ["host", "gpu"])
def test_upload_builds_the_reference_state(monkeypatch, shape, symmetric, where):
    """Small staging blocks (many per array, several threads) give exactly the state of the
    reference path: residuals = capacities with zero borders, terminals folded in."""
    import cupy

    from graphcut.solver.cuda import grid, transfer
    from graphcut.solver.dynamic import fresh_terminals
    monkeypatch.setattr(transfer, "BLOCK_BYTES", 256)
    rng = np.random.default_rng(sum(shape) + symmetric)
    network = _random_grid(rng, shape, symmetric=symmetric)
    if where == "gpu":
        network = graphcut.GridNetwork(*(cupy.asarray(a) for a in (
            network.source, network.sink, network.right, network.down, network.left,
            network.up)))
    state = grid.GridState.allocate(shape)
    state.residual[...] = 7  # a reused state's stale residuals (its borders are always zero)
    state.residual[grid.RIGHT, :, -1] = 0
    state.residual[grid.LEFT, :, 0] = 0
    state.residual[grid.DOWN, -1, :] = 0
    state.residual[grid.UP, 0, :] = 0
    state.load(network)
    host = network.to_numpy()
    h, w = shape
    expected = np.zeros((4, h, w), np.uint32)
    expected[grid.RIGHT, :, :-1] = host.right
    expected[grid.LEFT, :, 1:] = host.left
    expected[grid.DOWN, :-1, :] = host.down
    expected[grid.UP, 1:, :] = host.up
    assert np.array_equal(state.residual.get(), expected)
    fresh = fresh_terminals(host.source, host.sink)
    assert np.array_equal(state.excess.get(), fresh.excess)
    assert np.array_equal(state.to_sink.get(), fresh.to_sink)
    assert np.array_equal(state.source_capacity.get(), fresh.source_capacity)
    assert np.array_equal(state.sink_capacity.get(), fresh.sink_capacity)
    assert state.sink_capacity_total == int(host.sink.astype(np.int64).sum())
    assert state.reparameterization == 0


@pytest.mark.gpu
@pytest.mark.parametrize("shape", [(1, 1), (5, 1), (64, 64), (513, 700)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_min_cut_on_host_arrays_matches_the_cpu(shape):
    from graphcut.solver import cut_capacity, min_cut
    network = _random_grid(np.random.default_rng(shape[0]), shape, symmetric=shape[0] % 2 == 0)
    gpu, cpu = min_cut(network, device="cuda"), min_cut(network, device="cpu")
    assert gpu.backend == "cuda" and gpu.flow == cpu.flow
    assert isinstance(gpu.source_side, np.ndarray) and gpu.source_side.dtype == bool
    assert np.array_equal(gpu.source_side, cpu.source_side)
    assert cut_capacity(network, gpu.source_side) == gpu.flow


@pytest.mark.gpu
def test_warm_up_prepares_the_state_the_next_solve_uses():
    from graphcut.solver.cuda import grid
    shape = (96, 130)
    grid.release_cached_state()
    assert grid.warm_up(shape) > 0
    prepared = grid._reusable[(grid.cupy.cuda.Device().id, shape)]
    assert prepared._graphs, "the warm-up captured no CUDA graph"
    network = _random_grid(np.random.default_rng(3), shape, symmetric=True)
    state = grid.GridState.from_network(network)
    assert state is prepared and not grid._reusable
    state.solve()
    from graphcut.solver import min_cut
    assert state.true_flow() == min_cut(network, device="cpu").flow


@pytest.mark.gpu
def test_warmed_up_session_answers_like_fresh_segments():
    from graphcut.segmentation import warm_up
    image = graphcut.read_image(SAMPLE)
    seeds = graphcut.read_seeds(SAMPLE_SEEDS, image.shape)
    session = graphcut.Segmenter(image, device="cuda")
    assert warm_up(session) > 0 and session.last_result is not None
    mask = session.update(seeds)
    assert session.last_result.stats["incremental"]
    fresh, result = graphcut.segment(image, seeds, device="cuda", return_result=True)
    assert np.array_equal(mask, fresh) and session.last_result.flow == result.flow


@pytest.mark.gpu
def test_shipped_binaries_are_loaded_and_agree_with_nvrtc(tmp_path):
    """Where fatbins were shipped (a wheel built with nvcc, or a checkout that built them),
    the solver's modules come from them; NVRTC builds give the same answers."""
    from graphcut.solver.cuda import _loader, _variants
    if _variants.read_manifest() is None:
        pytest.skip("no shipped binaries (built without nvcc): run "
                    "`python solver/cuda/_variants.py build` to test them")
    assert _variants.check_binaries() == []
    code = textwrap.dedent("""
        import json, sys
        import numpy as np
        import graphcut
        from graphcut.solver import CSRNetwork, min_cut
        from graphcut.solver.cuda import _loader
        image = graphcut.read_image(sys.argv[1])
        seeds = graphcut.read_seeds(sys.argv[2], image.shape)
        mask, result = graphcut.segment(image, seeds, device="cuda", return_result=True)
        grid = graphcut.build_network(image, seeds)
        csr = min_cut(grid.to_csr(), device="cuda")
        print(json.dumps({"flow": result.flow, "csr_flow": csr.flow,
                          "mask": int(np.packbits(mask).astype(np.int64).sum()),
                          "grid": _loader.module_origin("grid_kernels.cu"),
                          "state": _loader.module_origin("grid_state.cu"),
                          "csr": _loader.module_origin("csr_kernels.cu", {"MIN_BLOCKS": 1},
                                                       cooperative=True)}))
    """)
    answers = {}
    for mode in ("", "nvrtc"):
        env = dict(os.environ, GRAPHCUT_CUDA_KERNELS=mode, CUPY_CACHE_DIR=str(tmp_path / mode))
        done = subprocess.run([sys.executable, "-c", code, str(SAMPLE), str(SAMPLE_SEEDS)],
                              capture_output=True, text=True, env=env, timeout=600)
        assert done.returncode == 0, done.stderr
        answers[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    shipped, compiled = answers[""], answers["nvrtc"]
    assert {shipped[k] for k in ("grid", "state", "csr")} == {"binary"}
    assert {compiled[k] for k in ("grid", "state", "csr")} == {"nvrtc"}
    for key in ("flow", "csr_flow", "mask"):
        assert shipped[key] == compiled[key], key
    assert shipped["flow"] == shipped["csr_flow"]


@pytest.mark.gpu
def test_gpu_segmentation_imports_no_cupy_extras(tmp_path):
    """``segment(device="cuda", model="histogram")`` pays for CuPy itself, not for cupyx.scipy /
    cupyx.linalg (about 0.4 s); the failure message shows who imported them. (The default,
    auto, filters features with cupyx.scipy.ndimage: it pays that import once.)"""
    code = textwrap.dedent("""
        import sys, traceback
        first = {}
        class Spy:
            def find_spec(self, name, path=None, target=None):
                if name.startswith(("cupyx.scipy", "cupyx.linalg")) and not first:
                    first[name] = "".join(traceback.format_stack(limit=25))
                return None
        sys.meta_path.insert(0, Spy())
        import graphcut
        image = graphcut.read_image(sys.argv[1])
        seeds = graphcut.read_seeds(sys.argv[2], image.shape)
        graphcut.segment(image, seeds, device="cuda", model="histogram")
        session = graphcut.Segmenter(image, device="cuda", model="histogram")
        session.update(seeds)
        for name, stack in first.items():
            print(f"{name} imported from:\\n{stack}")
        print("extras:", sorted(m for m in sys.modules
                                if m.startswith(("cupyx.scipy", "cupyx.linalg"))))
    """)
    done = subprocess.run([sys.executable, "-c", code, str(SAMPLE), str(SAMPLE_SEEDS)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("extras: []"), done.stdout


@pytest.mark.gpu
def test_state_read_out_kernels_are_exact():
    """The flow's sum never wraps (int32 values near the limit, more than 2**32 in total) and
    the cut is height >= inf, on sizes around the kernels' block and grid-stride bounds."""
    import cupy

    from graphcut.solver.cuda.transfer import FOLD_THREADS, cut_side, sum_nonnegative
    rng = np.random.default_rng(5)
    for n in (1, FOLD_THREADS - 1, FOLD_THREADS + 1, 8192 * FOLD_THREADS + 3):
        values = rng.integers(2**31 - 100, 2**31, n).astype(np.int32)
        assert sum_nonnegative(cupy.asarray(values)) == int(values.astype(np.int64).sum())
        height = rng.integers(0, 10, n).astype(np.int32)
        assert np.array_equal(cut_side(cupy.asarray(height), 7).get(), height >= 7)


GPU_PATHS_COMPILE_NOTHING = """
import json, os, sys, traceback
import numpy as np
import cupy
from cupy.cuda import compiler
compiled = []
real_compile = compiler._compile_module_with_cache

def spy(*args, **kwargs):  # every NVRTC compile request CuPy makes (cached on disk or not)
    frames = [f"{f.filename}:{f.lineno} {f.name}" for f in traceback.extract_stack()
              if "graphcut" in f.filename or "/gui/" in f.filename or "/solver/" in f.filename]
    compiled.append(frames[-4:])
    return real_compile(*args, **kwargs)

compiler._compile_module_with_cache = spy
import graphcut
from graphcut.gui.sharing import MaskUpdate, mask_fraction
from graphcut.solver.cuda import _loader
image = graphcut.read_image(sys.argv[1])
seeds = graphcut.read_seeds(sys.argv[2], image.shape)
mask = graphcut.segment(image, seeds, device="cuda")
session = graphcut.Segmenter(image, device="cuda")
session.prepare()
first = session.update(seeds, device_mask=True)
edited = seeds.copy()
edited[10:30, 10:40] = 2
second = session.update(edited, region=np.s_[10:30, 10:40], device_mask=True)
session.set_lam(4.0)
third = session.update(edited, device_mask=True)
update = MaskUpdate.between(first, third)
share = mask_fraction(third)
assert np.array_equal(first.get(), mask)
cache = os.environ["CUPY_CACHE_DIR"]
print(json.dumps({
    "compiled": compiled,
    "cache_files": sorted(os.listdir(cache)) if os.path.isdir(cache) else [],
    "origins": {s: _loader.module_origin(s) for s in ("energy_kernels.cu", "mask_kernels.cu",
                                                      "grid_state.cu", "grid_kernels.cu")},
    "extras": sorted(m for m in sys.modules if m.startswith(("cupyx.scipy", "cupyx.linalg"))),
    "share": share, "region": update.region}))
"""


@pytest.mark.gpu
def test_gpu_segmentation_paths_compile_nothing_at_run_time(tmp_path):
    """With the shipped fatbins, graphcut.segment, a Segmenter's updates (whole, a region
    edit, a new lam) and the app's mask update and share run only the package's own kernels
    (no CuPy element-wise, reduction or NVRTC compile: CuPy's kernel cache stays empty), all
    loaded from the fatbins, and import no cupyx extras: a fresh install's first
    segmentation does not wait for a compiler."""
    from graphcut.solver.cuda import _variants
    if _variants.read_manifest() is None:
        pytest.skip("no shipped binaries: run `python solver/cuda/_variants.py build` first")
    env = dict(os.environ, CUPY_CACHE_DIR=str(tmp_path / "kernel-cache"),
               GRAPHCUT_CUDA_KERNELS="")
    done = subprocess.run([sys.executable, "-c", GPU_PATHS_COMPILE_NOTHING, str(SAMPLE),
                           str(SAMPLE_SEEDS)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["compiled"] == [], "CuPy compiled kernels for:\n" + "\n".join(
        " <- ".join(reversed(frames)) for frames in report["compiled"])
    assert report["cache_files"] == []
    assert set(report["origins"].values()) == {"binary"}, report["origins"]
    assert report["extras"] == []
    assert 0.0 < report["share"] < 1.0


def test_segment_command_imports_only_what_it_uses(tmp_path):
    """`graphcut segment --model histogram` of a PNG imports NumPy, Pillow, click and
    PyMaxflow, not SciPy, scikit-image, tqdm or tifffile (start-up time of every CLI call; the
    default model's features and GrabCut's texture need SciPy)."""
    code = textwrap.dedent("""
        import sys
        from graphcut.cli import main
        try:
            main(sys.argv[1:], standalone_mode=False)
        finally:
            heavy = ("scipy", "skimage", "tqdm", "tifffile", "cupy", "cupyx", "dask")
            print(sorted({m.split(".")[0] for m in sys.modules} & set(heavy)))
    """)
    done = subprocess.run([sys.executable, "-c", code, "segment", str(SAMPLE), "--seeds",
                           str(SAMPLE_SEEDS), "-o", str(tmp_path / "mask.png"), "--device",
                           "cpu", "--model", "histogram"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout
