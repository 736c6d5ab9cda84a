"""The CUDA builds: every variant of the kernel table compiles, and the shipped fatbins are
complete and are used only with the sources they were built from.

This runs without a GPU (CI has none, but has nvcc): a kernel that does not build, or a wheel
build that would ship an incomplete fatbin, never lands. Loading the binaries on a GPU is tested
in test_startup.py.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from graphcut.solver.cuda import _variants
from graphcut.solver.cuda._variants import VARIANTS, variant

ROOT = Path(__file__).resolve().parents[2]
CUDA_DIR = ROOT / "solver" / "cuda"
SOURCES = _variants.sources()
needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on the PATH")


def test_there_are_cuda_sources():
    assert SOURCES, f"no .cu files found in {CUDA_DIR}"


def test_every_source_has_a_build_and_every_build_a_source():
    built = {entry.path for entry in VARIANTS}
    assert built == set(SOURCES)
    assert {path.parent.name for path in SOURCES} == {"cuda", "segmentation", "stereo", "labeling",
                                                     "models"}
    names = [entry.binary_name for entry in VARIANTS]
    assert len(names) == len(set(names)), names


def test_the_solvers_builds_are_in_the_table():
    """What csr.py and grid.py ask the loader for is shipped (else they would pay NVRTC)."""
    for blocks in (1, 2):
        assert variant("csr_kernels.cu", {"MIN_BLOCKS": blocks}, cooperative=True) in VARIANTS
    assert variant("grid_kernels.cu") in VARIANTS


def test_variant_normalises_its_defines():
    a = variant("x.cu", {"B": 2, "A": None}, cooperative=True)
    assert a == variant("x.cu", [("A", None), ("B", "2")], cooperative=True)
    assert a.define_options == ("-DA", "-DB=2")
    assert a.binary_name == "x.A.B-2.coop.fatbin"
    with pytest.raises(ValueError, match="C identifier"):
        variant("x.cu", {"A=1": None})


@needs_nvcc
@pytest.mark.parametrize("entry", VARIANTS, ids=lambda entry: entry.binary_name)
def test_compiles_for_sm90_without_warnings(entry, tmp_path):
    command = ["nvcc", "--cubin", "-arch=sm_90", "-Werror", "all-warnings",
               *_variants.COMMON_OPTIONS, f"-I{CUDA_DIR}", *entry.build_options,
               "-o", str(tmp_path / "out.cubin"), str(entry.path)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"nvcc failed on {entry.binary_name}:\n{result.stderr}"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The fatbins as the wheel build makes them (every variant, every architecture)."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc is not on the PATH")
    output = tmp_path_factory.mktemp("binaries")
    return output, _variants.build_binaries(output)


@pytest.mark.slow  # builds a wheel: minutes
def test_wheel_build_makes_complete_fatbins(built):
    """Every variant has a fatbin with machine code for every listed architecture and PTX for
    newer GPUs, recorded in the manifest with the digest of its sources."""
    output, manifest = built
    assert set(manifest["binaries"]) == {entry.binary_name for entry in VARIANTS}
    assert {"75", "80", "86", "89", "90"} <= set(manifest["architectures"])
    assert manifest["ptx_architecture"] == "90"
    assert _variants.check_binaries(output) == []
    images = _variants.fatbin_contents(output / variant("grid_kernels.cu").binary_name)
    assert ("sm", "90") in images and ("sm", "75") in images and ("compute", "90") in images
    for entry in VARIANTS:
        assert _variants.shipped_binary(entry, binary_dir=output) == output / entry.binary_name


def test_a_binary_is_never_used_with_other_sources(built, tmp_path):
    """Editing a .cu file (or a header) after the build makes the loader fall back to NVRTC."""
    output, _ = built
    sources = tmp_path / "src"
    shutil.copytree(CUDA_DIR, sources, ignore=shutil.ignore_patterns("_binaries", "*.py*"))
    entry = variant("grid_kernels.cu")
    assert _variants.shipped_binary(entry, binary_dir=output, source_dir=sources) is not None
    with open(sources / entry.source, "a") as file:
        file.write("\n// edited\n")
    assert _variants.shipped_binary(entry, binary_dir=output, source_dir=sources) is None
    problems = _variants.check_binaries(output, source_dir=sources)
    assert problems == [f"{entry.binary_name}: missing or built from other sources"]
    other = variant("csr_kernels.cu", {"MIN_BLOCKS": 1}, cooperative=True)
    assert _variants.shipped_binary(other, binary_dir=output, source_dir=sources) is not None
    (sources / "new.cuh").write_text("// a header every source may include\n")
    assert _variants.shipped_binary(other, binary_dir=output, source_dir=sources) is None


def test_no_binary_without_a_manifest_entry(tmp_path):
    entry = variant("grid_kernels.cu")
    assert _variants.shipped_binary(entry, binary_dir=tmp_path) is None  # nothing shipped
    (tmp_path / entry.binary_name).write_bytes(b"not checked")
    (tmp_path / "manifest.json").write_text(json.dumps({"binaries": {}}))
    assert _variants.shipped_binary(entry, binary_dir=tmp_path) is None
    (tmp_path / "manifest.json").write_text("{not json")
    assert _variants.read_manifest(tmp_path) is None


def test_fatbin_contents_reads_image_headers(tmp_path):
    """A hand-made container: one sm_80 image and one compute_90 PTX image."""
    def image(kind, arch, payload):
        header = struct.pack("<HHIQ", kind, 0x101, 64, len(payload)) + bytes(12)
        header += struct.pack("<I", arch)
        return header + bytes(64 - len(header)) + payload
    body = image(2, 80, b"\0" * 24) + image(1, 90, b"ptx" + b"\0" * 5)
    path = tmp_path / "x.fatbin"
    path.write_bytes(struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body)
    assert _variants.fatbin_contents(path) == {("sm", "80"), ("compute", "90")}
    path.write_bytes(b"\x7fELF" + bytes(20))
    with pytest.raises(ValueError, match="not a fatbin"):
        _variants.fatbin_contents(path)


def _load_setup():
    spec = importlib.util.spec_from_file_location("graphcut_setup_under_test", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)  # not __main__: defines the hook, builds nothing
    return module


@pytest.mark.slow  # builds a wheel: minutes
def test_wheel_build_without_nvcc_ships_no_binaries(tmp_path):
    setup = _load_setup()
    missing = str(tmp_path / "no-such-nvcc")
    message = setup.build_kernels(tmp_path, mode="auto", nvcc=missing)
    assert "ships no compiled CUDA kernels" in message and "nvcc was not found" in message
    assert not (tmp_path / setup.BINARY_DIR).exists()
    with pytest.raises(SystemExit, match="require"):
        setup.build_kernels(tmp_path, mode="require", nvcc=missing)
    assert "not compiled" in setup.build_kernels(tmp_path, mode="never")
    with pytest.raises(SystemExit, match="expected one of"):
        setup.build_kernels(tmp_path, mode="sometimes")


@pytest.mark.slow  # builds a wheel: minutes
def test_wheel_build_with_failing_nvcc_ships_no_binaries(tmp_path):
    setup = _load_setup()
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\necho 'sm_90'\n[ \"$1\" = --list-gpu-code ] && exit 0\n"
                    "echo 'fake nvcc: broken' >&2\nexit 1\n")
    fake.chmod(0o755)
    message = setup.build_kernels(tmp_path, mode="auto", nvcc=str(fake))
    assert "nvcc failed" in message and "fake nvcc: broken" in message
    assert not (tmp_path / setup.BINARY_DIR).exists()
    with pytest.raises(SystemExit, match="nvcc failed"):
        setup.build_kernels(tmp_path, mode="require", nvcc=str(fake))
