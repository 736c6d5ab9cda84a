"""The table of CUDA kernel builds: what the wheel ships precompiled and how it is built.

The sources are the max-flow kernels beside this module, named by their file name
(``"grid_kernels.cu"``), and the library's kernels beside the Python that launches them, named
by their folder in the ``graphcut`` package (``"segmentation/energy_kernels.cu"``; the folders
are :data:`KERNEL_FOLDERS`). Every build can include the shared headers (``*.cuh``) of this
folder (``-I`` it, :data:`INCLUDE_DIR`). Every source is built at least once: the entries of
:data:`EXPLICIT` name the preprocessor constants (``-D``) and launch kind of a build, and every
file that no entry names gets one plain build. Every build also gets the kernels' constants
(:data:`CONSTANTS`, ``-D``). :data:`VARIANTS` is the resulting table; the wheel build
(``setup.py``) compiles each variant with nvcc into one fatbin, the loader (``_loader.py``) picks
the fatbin of the variant it is asked for, and ``tests/solver/test_cuda_compile.py`` compiles
them all.

A fatbin holds machine code (SASS) for :data:`ARCHITECTURES` and PTX for :data:`PTX_ARCHITECTURE`,
which the driver compiles for GPUs newer than the listed ones. ``manifest.json`` beside the
fatbins records the SHA-256 of the sources each was built from, so a binary never runs with a
source it was not built from (an edited checkout falls back to NVRTC).

Standard library only: ``setup.py`` loads this file by path before the package is installed.
Run ``python solver/cuda/_variants.py build [DIR]`` to build the binaries into a checkout
(default: ``_binaries/`` beside this file, ignored by git) and ``... check [DIR]`` to verify them.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

SOURCE_DIR = Path(__file__).resolve().parent
BINARY_DIR = SOURCE_DIR / "_binaries"
INCLUDE_DIR = SOURCE_DIR  # the shared headers; every build gets -I to it
# The graphcut package's folder: installed, graphcut/solver/cuda is this folder; in a checkout
# (package-dir mapping) the solver is solver/ beside the library's graphcut/.
LIBRARY_DIR = (SOURCE_DIR.parents[1] if (SOURCE_DIR.parents[1] / "__init__.py").is_file()
               else SOURCE_DIR.parents[1] / "graphcut")
# The library's folders (in the graphcut package) whose .cu files are built too.
KERNEL_FOLDERS = ("segmentation", "stereo", "labeling", "models")
MANIFEST_NAME = "manifest.json"
FATBIN_MAGIC = 0xBA55ED50

# Machine code for the GPU generations CUDA 13 / CuPy 14 support: Turing (7.5), Ampere (8.0; its
# code also runs on 8.6 and 8.7), Ada (8.9), Hopper (9.0), Blackwell (10.0, 12.0), and PTX for
# 9.0, which the driver compiles (once, cached by the driver) for any newer GPU.
ARCHITECTURES = ("75", "80", "86", "89", "90", "100", "120")
PTX_ARCHITECTURE = "90"
# The options CuPy's NVRTC path uses for these files (CuPy adds -ftz=true to every compile), so
# a shipped binary computes what an NVRTC build would.
COMMON_OPTIONS = ("-std=c++17", "-ftz=true")

# The kernels' compile-time constants, written only here: every build gets them as -DNAME=VALUE
# (nvcc and NVRTC alike; the .cu files stop with #error without them) and the Python launchers
# read them from here (graphcut.solver.kernels.constant), so a block shape cannot differ
# between a kernel and its launch.
CONSTANTS = {
    "GRAPHCUT_THREADS": 256,  # threads per block of every grid-stride kernel
    # push-relabel (PR) and BFS tiles of grid_kernels.cu, (x, y[, z]) pixels / voxels
    "PR_TILE_2D_X": 32, "PR_TILE_2D_Y": 8, "BFS_TILE_2D_X": 32, "BFS_TILE_2D_Y": 32,
    "PR_TILE_3D_X": 32, "PR_TILE_3D_Y": 4, "PR_TILE_3D_Z": 2,
    "BFS_TILE_3D_X": 32, "BFS_TILE_3D_Y": 8, "BFS_TILE_3D_Z": 4,
    "LABEL_TILE": 32,  # segmentation/flood_kernels.cu's label_tile: LABEL_TILE^2 threads
}
CONSTANT_OPTIONS = tuple(f"-D{name}={value}" for name, value in sorted(CONSTANTS.items()))


@dataclass(frozen=True)
class Variant:
    """One build of one source.

    Attributes:
        source: the ``.cu`` file name (in this folder).
        defines: ``(NAME, VALUE)`` pairs passed as ``-DNAME=VALUE`` (``VALUE`` None: ``-DNAME``),
            sorted by name.
        cooperative: its kernels are launched with ``cuLaunchCooperativeKernel`` (they call
            cooperative groups' ``grid.sync()``).
    """

    source: str
    defines: tuple[tuple[str, str | None], ...] = ()
    cooperative: bool = False

    @property
    def path(self) -> Path:
        """The source file (the solver's in :data:`SOURCE_DIR`, see :func:`source_path`)."""
        return source_path(self.source)

    @property
    def define_options(self) -> tuple[str, ...]:
        return tuple(f"-D{name}" if value is None else f"-D{name}={value}"
                     for name, value in self.defines)

    @property
    def build_options(self) -> tuple[str, ...]:
        """Every ``-D`` option of this build: :data:`CONSTANTS`, then its own defines."""
        return CONSTANT_OPTIONS + self.define_options

    @property
    def binary_name(self) -> str:
        """File name of the fatbin, e.g. ``csr_kernels.MIN_BLOCKS-2.coop.fatbin``."""
        parts = [Path(self.source).stem]
        parts += [name if value is None else f"{name}-{value}" for name, value in self.defines]
        parts += ["coop"] if self.cooperative else []
        return ".".join(parts) + ".fatbin"


def variant(source: str, defines=None, *, cooperative: bool = False) -> Variant:
    """A :class:`Variant` with its defines normalised (a dict or pairs; values made strings)."""
    items = dict(defines or {}).items()
    for name, _ in items:
        if not name.isidentifier():
            raise ValueError(f"-D name {name!r} of {source} is not a C identifier")
    pairs = tuple(sorted((name, None if value is None else str(value)) for name, value in items))
    return Variant(source, pairs, bool(cooperative))


# Builds with options; solver/cuda/csr.py asks for these (Schedule.blocks_per_sm).
EXPLICIT = (
    variant("csr_kernels.cu", {"MIN_BLOCKS": 1}, cooperative=True),
    variant("csr_kernels.cu", {"MIN_BLOCKS": 2}, cooperative=True),
)


def source_path(source: str, source_dir: Path = SOURCE_DIR) -> Path:
    """The file of a source name: a bare file name is the solver's (in ``source_dir``), a name
    with a folder the library's (``"stereo/stereo_kernels.cu"``: in :data:`LIBRARY_DIR`)."""
    if "/" in source:
        return LIBRARY_DIR / source
    return Path(source_dir) / source


def source_names(source_dir: Path = SOURCE_DIR) -> list[str]:
    """Every kernel source's name: the solver's (``source_dir``), then the library's."""
    names = [path.name for path in sorted(Path(source_dir).glob("*.cu"))]
    for folder in KERNEL_FOLDERS:
        names += [f"{folder}/{path.name}" for path in sorted((LIBRARY_DIR / folder).glob("*.cu"))]
    return names


def sources(source_dir: Path = SOURCE_DIR) -> list[Path]:
    return [source_path(name, source_dir) for name in source_names(source_dir)]


def variants(source_dir: Path = SOURCE_DIR) -> tuple[Variant, ...]:
    """:data:`EXPLICIT` plus one plain build of every ``.cu`` file that it does not name."""
    named = {entry.source for entry in EXPLICIT}
    plain = tuple(variant(name) for name in source_names(source_dir) if name not in named)
    return EXPLICIT + plain


VARIANTS = variants()


def source_digest(source: str, source_dir: Path = SOURCE_DIR) -> str:
    """SHA-256 of the ``.cu`` file, of every ``.cuh`` header in its folder and of the shared
    headers (``source_dir``'s; in name order)."""
    digest = hashlib.sha256()
    path = source_path(source, source_dir)
    headers = sorted(set(path.parent.glob("*.cuh")) | set(Path(source_dir).glob("*.cuh")))
    digest.update(" ".join(CONSTANT_OPTIONS).encode() + b"\0")
    for path in [path, *headers]:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def nvcc_command(entry: Variant, output: Path, *, nvcc: str = "nvcc",
                 architectures=ARCHITECTURES, ptx_architecture=PTX_ARCHITECTURE,
                 source_dir: Path = SOURCE_DIR) -> list[str]:
    """The nvcc command line that builds ``entry`` into the fatbin ``output``."""
    targets = [f"-gencode=arch=compute_{arch},code=sm_{arch}" for arch in architectures]
    if ptx_architecture:
        targets.append(f"-gencode=arch=compute_{ptx_architecture},code=compute_{ptx_architecture}")
    return [nvcc, "--fatbin", *COMMON_OPTIONS, f"-I{source_dir}", *targets,
            *entry.build_options, "-o", str(output), str(source_path(entry.source, source_dir))]


def supported_architectures(nvcc: str = "nvcc") -> set[str]:
    """The real architectures (``"90"``, ...) this nvcc can generate code for."""
    done = subprocess.run([nvcc, "--list-gpu-code"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{nvcc} --list-gpu-code failed: {done.stderr.strip()}")
    return {line.strip()[3:] for line in done.stdout.split() if line.strip().startswith("sm_")}


def nvcc_version(nvcc: str = "nvcc") -> str:
    done = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=60)
    lines = [line for line in done.stdout.splitlines() if "release" in line]
    return lines[-1].strip() if lines else done.stdout.strip()


def build_binaries(output_dir: Path, *, nvcc: str | None = None, entries=None,
                   source_dir: Path = SOURCE_DIR, jobs: int | None = None) -> dict:
    """Compile every variant with nvcc into ``output_dir`` and write its manifest.

    Architectures this nvcc cannot target are left out (an older toolkit builds fewer). Raises
    RuntimeError (with nvcc's message) when a build fails, FileNotFoundError without nvcc.
    Returns the manifest (also written to ``output_dir/manifest.json``).
    """
    nvcc = nvcc or shutil.which("nvcc")
    if nvcc is None:
        raise FileNotFoundError("nvcc is not on the PATH")
    entries = variants(source_dir) if entries is None else tuple(entries)
    supported = supported_architectures(nvcc)
    architectures = tuple(arch for arch in ARCHITECTURES if arch in supported)
    if not architectures:
        raise RuntimeError(f"{nvcc} supports none of sm_{', sm_'.join(ARCHITECTURES)}")
    ptx = PTX_ARCHITECTURE if PTX_ARCHITECTURE in supported else architectures[-1]
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)

    def build(entry: Variant) -> None:
        target = output_dir / entry.binary_name
        partial = target.with_name(target.name + ".part")
        command = nvcc_command(entry, partial, nvcc=nvcc, architectures=architectures,
                               ptx_architecture=ptx, source_dir=source_dir)
        done = subprocess.run(command, capture_output=True, text=True, timeout=1800)
        if done.returncode != 0:
            partial.unlink(missing_ok=True)
            raise RuntimeError(f"nvcc failed on {entry.binary_name}:\n{' '.join(command)}\n"
                               f"{done.stderr.strip()}")
        partial.replace(target)

    workers = jobs or max(1, min(len(entries), os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for future in [pool.submit(build, entry) for entry in entries]:
            future.result()
    manifest = {
        "nvcc": nvcc_version(nvcc),
        "architectures": list(architectures),
        "ptx_architecture": ptx,
        "options": list(COMMON_OPTIONS),
        "binaries": {entry.binary_name: {"source": entry.source,
                                         "defines": [list(pair) for pair in entry.defines],
                                         "cooperative": entry.cooperative,
                                         "sha256": source_digest(entry.source, source_dir)}
                     for entry in entries},
    }
    partial = output_dir / (MANIFEST_NAME + ".part")
    partial.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    partial.replace(output_dir / MANIFEST_NAME)
    return manifest


def read_manifest(binary_dir: Path = BINARY_DIR) -> dict | None:
    """The manifest of the shipped binaries, or None when there is none (or it is unreadable)."""
    try:
        manifest = json.loads((Path(binary_dir) / MANIFEST_NAME).read_text())
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest.get("binaries"), dict) else None


def shipped_binary(entry: Variant, *, binary_dir: Path = BINARY_DIR,
                   source_dir: Path = SOURCE_DIR, manifest: dict | None = None) -> Path | None:
    """The fatbin built for ``entry`` from the sources as they are now, or None.

    None when no binaries were shipped (a checkout without nvcc at build time), the variant
    was not built, or its source changed since (the SHA-256 in the manifest differs).
    """
    manifest = read_manifest(binary_dir) if manifest is None else manifest
    if manifest is None:
        return None
    record = manifest["binaries"].get(entry.binary_name)
    path = Path(binary_dir) / entry.binary_name
    if record is None or not path.is_file():
        return None
    if record.get("sha256") != source_digest(entry.source, source_dir):
        return None
    return path


def fatbin_contents(path: Path) -> set[tuple[str, str]]:
    """The images of a fatbin as ``("sm", "90")`` (machine code) and ``("compute", "90")`` (PTX).

    Reads the container's headers: a 16-byte file header (magic 0xBA55ED50, version, header
    size, size of the rest), then per image a header (kind 1 = PTX, 2 = machine code, header
    size at byte 4, payload size at byte 8, architecture at byte 28) and its payload.
    """
    data = Path(path).read_bytes()
    if len(data) < 16 or struct.unpack_from("<I", data)[0] != FATBIN_MAGIC:
        raise ValueError(f"{path} is not a fatbin (no 0x{FATBIN_MAGIC:X} magic)")
    header_size, rest = struct.unpack_from("<HQ", data, 6)
    images, offset, end = set(), header_size, min(len(data), header_size + rest)
    while offset + 32 <= end:
        kind, image_header, payload = struct.unpack_from("<HxxIQ", data, offset)
        arch = struct.unpack_from("<I", data, offset + 28)[0]
        images.add(({1: "compute", 2: "sm"}.get(kind, f"kind{kind}"), str(arch)))
        offset += image_header + payload
    return images


def check_binaries(binary_dir: Path = BINARY_DIR, *, source_dir: Path = SOURCE_DIR) -> list[str]:
    """Problems with the binaries in ``binary_dir`` (empty when all is well): a variant without
    an up-to-date fatbin, or a fatbin without the code its manifest promises."""
    manifest = read_manifest(binary_dir)
    if manifest is None:
        return [f"no readable {MANIFEST_NAME} in {binary_dir}"]
    problems = []
    for entry in variants(source_dir):
        path = shipped_binary(entry, binary_dir=binary_dir, source_dir=source_dir,
                              manifest=manifest)
        if path is None:
            problems.append(f"{entry.binary_name}: missing or built from other sources")
            continue
        images = fatbin_contents(path)
        wanted = [("sm", arch) for arch in manifest["architectures"]]
        wanted += [("compute", manifest["ptx_architecture"])]
        problems += [f"{entry.binary_name}: no {kind}_{arch} image"
                     for kind, arch in wanted if (kind, arch) not in images]
    return problems


def main(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] not in ("build", "check", "list"):
        print("usage: _variants.py build|check|list [DIR]", file=sys.stderr)
        return 2
    binary_dir = Path(argv[1]) if len(argv) > 1 else BINARY_DIR
    if argv[0] == "list":
        for entry in VARIANTS:
            print(entry.binary_name, " ".join(entry.define_options))
        return 0
    if argv[0] == "build":
        manifest = build_binaries(binary_dir)
        architectures = ", sm_".join(manifest["architectures"])
        print(f"built {len(manifest['binaries'])} fatbins (sm_{architectures} + compute_"
              f"{manifest['ptx_architecture']} PTX) into {binary_dir}")
        return 0
    problems = check_binaries(binary_dir)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"{binary_dir}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
