"""Hostile input: files and arguments built to exhaust memory, hang or crash the reader.

Every case ends quickly in a specific error (or a correct answer) with memory bounded by the
input's real size: DIMACS files declaring billions of vertices or arcs, decompression bombs,
comment floods, /dev/zero and FIFOs; images whose few bytes decode to 81 megapixels; networks
too large for PyMaxflow (whose allocator would end the process with exit(1) and no message);
parameters that underflow. The memory-limited cases run in a fresh interpreter under
``resource.setrlimit(RLIMIT_AS)`` (the address space may grow by a given budget beyond what the
imports took), and report the error, the message, the seconds and the peak resident memory.

docs/robustness.md lists these promises with their figures.
"""

from __future__ import annotations

import bz2
import gzip
import json
import logging
import os
import struct
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from PIL import Image

import graphcut
from graphcut.batch import FAILED, OK, segment_file
from graphcut.cli import main
from graphcut.io import ImageMemoryError, ImageReadError, image_info, read_image
from graphcut.segmentation import segmentation_bytes
from graphcut.solver import CSRNetwork, GridNetwork, min_cut
from graphcut.solver import cpu as cpu_backend
from graphcut.solver.dimacs import (COMPRESSED_BYTES_PER_ARC, COMPRESSED_SLACK_BYTES,
                                    DimacsError, read_dimacs)
from graphcut.solver.files import NotARegularFileError
from graphcut.solver.memory import LIMIT_VARIABLE, HostMemoryError, available_bytes, parse_bytes
from test_robustness import fake_gpu  # noqa: F401  (a pytest fixture)
from synthetic import disc_image, disc_seeds

MiB = 1 << 20
linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="needs /proc and RLIMIT_AS (Linux)")


# ---- helpers --------------------------------------------------------------------------------

_PROLOGUE = """
import json, resource, sys, time, traceback
import numpy as np
import graphcut, graphcut.batch, graphcut.cli, graphcut.solver.cpu, graphcut.solver.dimacs
import graphcut.segmentation._memory

def _status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0

def rss():
    return _status("VmRSS")

_soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (_status("VmSize") + BUDGET, _hard))
def peak():
    return _status("VmHWM")

def reset_peak():
    with open("/proc/self/clear_refs", "w") as handle:  # resets VmHWM (Linux 4.0+)
        handle.write("5")

result = {}
reset_peak()
start_rss = rss()
started = time.perf_counter()
try:
{body}
except BaseException as error:
    result.setdefault("error", type(error).__name__)
    result.setdefault("message", str(error))
result["seconds"] = time.perf_counter() - started
result["peak_above_start"] = peak() - start_rss
print("RESULT " + json.dumps(result))
"""


def run_limited(body: str, budget_mib: int, *, timeout: float = 120, cwd=None) -> dict:
    """Run ``body`` (Python statements) in a fresh interpreter
    whose address space may grow ``budget_mib`` MiB beyond its imports; return the ``result``
    dict it fills, with ``error`` / ``message`` of any exception, ``seconds`` and
    ``peak_above_start`` (bytes of peak resident memory above the start). The process itself
    must exit 0: not killed, not ended by exit(1)."""
    code = _PROLOGUE.replace("BUDGET", str(budget_mib * MiB)).replace(
        "{body}", textwrap.indent(textwrap.dedent(body), "    "))
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MALLOC_ARENA_MAX="2")
    env.pop(LIMIT_VARIABLE, None)
    process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=timeout, env=env, cwd=cwd)
    lines = [line for line in process.stdout.splitlines() if line.startswith("RESULT ")]
    assert process.returncode == 0 and lines, (process.returncode, process.stdout[-2000:],
                                               process.stderr[-2000:])
    return json.loads(lines[-1][len("RESULT "):])


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def cli_process(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    """The real command in a subprocess, for cases that used to hang (a timeout fails)."""
    return subprocess.run([sys.executable, "-m", "graphcut.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout)


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def blank_png(path: Path, width: int, height: int) -> Path:
    """A valid grey PNG of ``width`` x ``height`` zeros: a few tens of KB that decode to
    width * height bytes (a decompression bomb under Pillow's own limit)."""
    row = b"\x00" * (width + 1)
    packer = zlib.compressobj(9)
    body = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", body)
                     + chunk(b"IEND", b""))
    return path


@pytest.fixture(scope="module")
def bomb81(tmp_path_factory):
    """The campaign's case: a 9000 x 9000 (81 MP) PNG of about 79 KB, and its seeds."""
    folder = tmp_path_factory.mktemp("bomb")
    blank_png(folder / "big.png", 9000, 9000)
    labels = Image.new("L", (9000, 9000))
    labels.putpixel((0, 0), 1)
    labels.putpixel((8999, 8999), 2)
    labels.save(folder / "big_seeds.png")
    return folder


# ---- DIMACS: declared sizes are not trusted --------------------------------------------------

@pytest.mark.parametrize("n", [200_000_000, 2_147_483_647])
@linux_only
def test_a_huge_vertex_count_in_a_tiny_file_is_refused_at_once(tmp_path, n):
    """The campaign: a 40-byte file declaring 2e8 vertices took 30 s and 12.4 GB."""
    path = tmp_path / "huge.max"
    path.write_bytes(f"p max {n} 1\nn 1 s\nn 2 t\na 1 2 5\n".encode())
    result = run_limited(f"graphcut.solver.dimacs.read_dimacs({str(path)!r})", budget_mib=256)
    assert result["error"] == "DimacsError" and "line 1:" in result["message"]
    assert f"vertex count N = {n}" in result["message"] and "no arc touches" in result["message"]
    assert result["seconds"] < 2 and result["peak_above_start"] < 32 * MiB


def test_vertices_beyond_what_the_arcs_touch_are_allowed_up_to_a_margin(tmp_path):
    path = tmp_path / "isolated.max"
    path.write_bytes(b"p max 1000000 1\nn 1 s\nn 2 t\na 1 2 5\n")
    network = read_dimacs(path)
    assert network.num_vertices == 1_000_000 and min_cut(network, device="cpu").flow == 5


def test_the_vertex_count_is_checked_against_the_memory_budget(tmp_path, monkeypatch):
    path = tmp_path / "many.max"
    path.write_bytes(b"c header\np max 1000000 1\nn 1 s\nn 2 t\na 1 2 5\n")
    monkeypatch.setenv(LIMIT_VARIABLE, "4M")
    with pytest.raises(HostMemoryError) as caught:
        read_dimacs(path)
    message = str(caught.value)
    assert str(path) in message and "line 2" in message and "1000000 vertices" in message
    assert f"{LIMIT_VARIABLE}=4M" in message and caught.value.line == 2


def test_a_huge_arc_count_allocates_nothing_until_arcs_arrive(tmp_path):
    path = tmp_path / "lying.max"
    path.write_bytes(b"p max 4 1000000000000\nn 1 s\nn 2 t\na 1 2 3\n")
    started = time.perf_counter()
    with pytest.raises(DimacsError, match="declares M = 1000000000000 arcs but the file has 1"):
        read_dimacs(path)
    assert time.perf_counter() - started < 1


@linux_only
def test_arcs_beyond_the_memory_available_are_refused_while_reading(tmp_path):
    """A compressed file with millions of real arc lines and a huge declared M: the arc store
    grows as arcs arrive and is refused (HostMemoryError, with the line) when it would pass the
    memory available, instead of growing until killed."""
    path = tmp_path / "many_arcs.max.gz"
    path.write_bytes(gzip.compress(b"p max 4 1000000000000\nn 1 s\nn 2 t\n"
                                   + b"a 1 2 1\n" * 6_000_000, compresslevel=1, mtime=0))
    result = run_limited(f"graphcut.solver.dimacs.read_dimacs({str(path)!r})", budget_mib=300)
    assert result["error"] == "HostMemoryError", result
    assert "arcs so far of the 1000000000000 declared" in result["message"]
    assert str(path) in result["message"] and result["peak_above_start"] < 300 * MiB


@pytest.mark.parametrize("compression", ["gz", "bz2"])
def test_decompression_bombs_are_refused_past_what_the_arcs_need(tmp_path, compression):
    """The campaign: 46 MB of .gz (10 GB), 374 KB of concatenated .bz2 streams; killed at 6 GB.
    Here: 64 MiB of comment lines after a problem line declaring 2 arcs."""
    text = b"c " + b"x" * 1000 + b"\n"
    flood = text * (64 * MiB // len(text))
    header = b"p max 3 2\nn 1 s\nn 3 t\n"
    path = tmp_path / f"bomb.max.{compression}"
    if compression == "gz":
        path.write_bytes(gzip.compress(header + flood + b"a 1 2 1\na 2 3 1\n", mtime=0))
    else:  # many concatenated streams, as in the campaign
        stream = bz2.compress(flood[: 4 * MiB])
        path.write_bytes(bz2.compress(header) + stream * 16 + bz2.compress(b"a 1 2 1\n"))
    started = time.perf_counter()
    with pytest.raises(DimacsError, match="decompression bomb") as caught:
        read_dimacs(path)
    limit = COMPRESSED_SLACK_BYTES + COMPRESSED_BYTES_PER_ARC * (2 + 3)
    assert f"more than {limit} bytes" in str(caught.value) and caught.value.line is not None
    assert time.perf_counter() - started < 10


def test_a_compressed_file_within_its_allowance_is_read(tmp_path):
    path = tmp_path / "fine.max.gz"
    comments = b"c a comment line of ordinary length\n" * 10_000
    path.write_bytes(gzip.compress(comments + b"p max 3 2\nn 1 s\nn 3 t\na 1 2 4\na 2 3 3\n"))
    assert min_cut(read_dimacs(path), device="cpu").flow == 3


@linux_only
def test_a_comment_flood_is_parsed_in_bounded_memory(tmp_path):
    """The campaign: 256 MB of comment lines peaked at 8.5-9.1 GB (35x the file). Here 64 MiB
    of short comment lines (the worst case for per-line arrays) and one 24 MiB comment line."""
    path = tmp_path / "comments.max"
    with open(path, "wb") as handle:
        handle.write(b"p max 3 2\nn 1 s\nn 3 t\na 1 2 4\n")
        handle.write(b"c\n" * (16 * MiB) + b"c short comment\n" * (2 * MiB))
        handle.write(b"c " + b"y" * (24 * MiB) + b"\n")
        handle.write(b"a 2 3 3\n")
    size = path.stat().st_size
    result = run_limited(f"""
        network = graphcut.solver.dimacs.read_dimacs({str(path)!r})
        result["flow"] = graphcut.min_cut(network, device="cpu").flow
        """, budget_mib=512)
    assert result.get("flow") == 3, result
    assert result["peak_above_start"] < size / 2, (result, size)


def test_a_long_line_that_is_not_a_comment_is_an_error(tmp_path):
    path = tmp_path / "long.max"
    path.write_bytes(b"p max 3 1\nn 1 s\nn 3 t\na 1 3 " + b"7" * (2 * MiB) + b"\n")
    with pytest.raises(DimacsError, match="line 4: line longer than"):
        read_dimacs(path)


@pytest.mark.parametrize("text,line,name", [
    ("p max 3 1\nn 1 s\nn 3 t\na 1 3 {big}\n", 4, "the capacity CAP"),
    ("p max 3 1\nn 1 s\nn 3 t\na 1 3 -{big}\n", 4, "the capacity CAP"),
    ("p max {big} 1\nn 1 s\nn 3 t\na 1 3 5\n", 1, "the vertex count N"),
    ("p max 3 1\nn {big} s\nn 3 t\na 1 3 5\n", 2, "the vertex ID"),
])
def test_numbers_of_thousands_of_digits(tmp_path, text, line, name):
    """Python's int() refuses more than 4300 digits with a ValueError of its own; the reader
    says which number on which line."""
    path = tmp_path / "digits.max"
    path.write_text(text.format(big="7" * 5000))
    with pytest.raises(DimacsError, match=f"line {line}: {name} is a number of 5000 digits"):
        read_dimacs(path)


def test_blank_and_comment_lines_are_not_parsed_one_by_one(tmp_path):
    """4 million blank, whitespace and comment lines take well under a minute (they are
    skipped in bulk, not one Python call each)."""
    path = tmp_path / "blank.max"
    path.write_bytes(b"p max 3 1\nn 1 s\nn 3 t\n" + b"\n \t\r\nc\n \n" * MiB + b"a 1 3 5\n")
    started = time.perf_counter()
    assert read_dimacs(path).num_arcs == 1
    assert time.perf_counter() - started < 20


@pytest.mark.parametrize("kind", ["device", "fifo", "folder"])
def test_only_regular_files_are_read(tmp_path, kind):
    """The campaign: `graphcut maxflow /dev/zero` grew until killed."""
    if kind == "device":
        path = Path("/dev/zero")
        if not path.exists():
            pytest.skip("no /dev/zero")
    elif kind == "fifo":
        path = tmp_path / "pipe.max"
        os.mkfifo(path)
    else:
        path = tmp_path / "folder.max"
        path.mkdir()
    what = {"device": "a character device", "fifo": "a named pipe", "folder": "a folder"}[kind]
    with pytest.raises(NotARegularFileError, match=what):
        read_dimacs(path)
    if kind != "folder":  # a folder is solved as a folder of instances
        process = cli_process("maxflow", path)
        assert process.returncode == 1 and what in process.stderr
        assert "Traceback" not in process.stderr


# ---- maxflow folders: index.json and links ---------------------------------------------------

@pytest.fixture
def instances(tmp_path):
    folder = tmp_path / "instances"
    folder.mkdir()
    (folder / "a.max").write_bytes(b"p max 3 2\nn 1 s\nn 3 t\na 1 2 4\na 2 3 3\n")
    return folder


def test_a_fifo_index_is_refused_without_waiting(instances):
    os.mkfifo(instances / "index.json")
    process = cli_process("maxflow", instances, "--device", "cpu")
    assert process.returncode == 1 and "named pipe" in process.stderr


def test_a_deeply_nested_index_is_a_clear_error(instances):
    (instances / "index.json").write_text("[" * 200_000 + "]" * 200_000)
    result = cli("maxflow", instances, "--device", "cpu")
    assert result.exit_code == 1 and "nested too deeply" in result.stderr
    assert "Traceback" not in result.output and "RecursionError" not in result.output


def test_an_oversized_index_is_refused_unread(instances):
    with open(instances / "index.json", "wb") as handle:
        handle.truncate(1 << 30)  # sparse: nothing is written
    result = cli("maxflow", instances, "--device", "cpu")
    assert result.exit_code == 1 and "more than the" in result.stderr


def test_links_leading_out_of_the_folder_are_never_read(tmp_path, instances):
    """The campaign: a .max linked to another file had that file's first line in the error."""
    secret = tmp_path / "secret.txt"
    secret.write_text("password=hunter2\n")
    (instances / "leak.max").symlink_to(secret)
    (instances / "index.json").symlink_to(secret)
    result = cli("maxflow", instances, "--device", "cpu")
    assert result.exit_code == 1 and "hunter2" not in result.output
    assert "outside" in result.stderr
    (instances / "index.json").unlink()
    result = cli("maxflow", instances, "--device", "cpu", "--json")
    report = json.loads(result.stdout)
    statuses = {Path(r["file"]).name: r["status"] for r in report["instances"]}
    assert statuses == {"a.max": "unchecked", "leak.max": "error"}
    assert "hunter2" not in result.output and "outside" in result.output


def test_links_inside_the_folder_and_odd_entries(instances):
    (instances / "b.max").symlink_to(instances / "a.max")
    (instances / "c.max").mkdir()
    os.mkfifo(instances / "d.max")
    result = cli("maxflow", instances, "--device", "cpu", "--json")
    statuses = {Path(r["file"]).name: r["status"] for r in json.loads(result.stdout)["instances"]}
    assert statuses == {"a.max": "unchecked", "b.max": "unchecked", "c.max": "error",
                        "d.max": "error"}
    assert result.exit_code == 1


# ---- networks too large for the memory available ---------------------------------------------

@linux_only
def test_csr_network_of_a_billion_vertices_is_refused():
    result = run_limited("""
        graphcut.solver.CSRNetwork.from_arcs(10**9, 0, 1, np.array([0]), np.array([1]),
                                             np.array([5]))
        """, budget_mib=512)
    assert result["error"] == "HostMemoryError", result
    assert "network of 1000000000 vertices" in result["message"]
    assert result["seconds"] < 2 and result["peak_above_start"] < 32 * MiB


def test_from_arcs_refuses_what_the_budget_cannot_hold(monkeypatch):
    monkeypatch.setenv(LIMIT_VARIABLE, "1G")
    with pytest.raises(HostMemoryError, match=r"1000000000 vertices.*more than the 1\.00 GiB"):
        CSRNetwork.from_arcs(10**9, 0, 1, [0], [1], [5])


@linux_only
@pytest.mark.parametrize("kind", ["csr", "grid", "segment", "maxflow"])
def test_pymaxflow_never_ends_the_process_silently(tmp_path, kind):
    """PyMaxflow's allocator calls exit(1) when it runs out of memory: `graphcut maxflow` and
    `graphcut segment` ended with status 1 and no message. Its graph is checked first."""
    if kind == "csr":
        body = """
            n = 2_000_000
            tails = np.arange(2, n)
            net = graphcut.solver.CSRNetwork.from_arcs(n, 0, 1, tails, (tails + 1) % n,
                                                       np.ones(n - 2, np.int32))
            graphcut.solver.cpu.csr_min_cut(net)
            """
    elif kind == "grid":
        body = """
            h, w = 1500, 2000
            ones = np.ones((h, w), np.int32)
            net = graphcut.solver.GridNetwork(ones, ones, ones[:, 1:], ones[1:])
            graphcut.solver.cpu.grid_min_cut(net)
            """
    elif kind == "segment":
        body = """
            image = np.zeros((1500, 2000), np.uint8)
            seeds = np.zeros((1500, 2000), np.uint8)
            seeds[0, 0], seeds[-1, -1] = 1, 2
            graphcut.segment(image, seeds, device="cpu")
            """
    else:
        path = tmp_path / "big.max"
        n = 3_000_000
        with open(path, "w") as handle:
            handle.write(f"p max {n} {n - 1}\nn 1 s\nn {n} t\n")
            handle.writelines(f"a {i} {i + 1} 1\n" for i in range(1, n))
        body = f"""
            from click.testing import CliRunner
            out = CliRunner().invoke(graphcut.cli.main, ["maxflow", {str(path)!r},
                                                          "--device", "cpu"])
            result["exit_code"], result["stderr"] = out.exit_code, out.stderr
            """
    result = run_limited(body, budget_mib=330)
    if kind == "maxflow":
        assert result["exit_code"] == 1 and "needs about" in result["stderr"], result
        assert "more than the" in result["stderr"]
    else:
        assert result["error"] == "HostMemoryError", result
        assert "PyMaxflow's graph" in result["message"] or "on the CPU" in result["message"]


def test_the_grid_solver_fills_its_graph_in_blocks_with_the_same_cut(monkeypatch):
    rng = np.random.default_rng(5)
    h, w = 23, 17
    network = GridNetwork(*(rng.integers(0, 50, shape) for shape in
                            ((h, w), (h, w), (h, w - 1), (h - 1, w), (h, w - 1), (h - 1, w))))
    expected = cpu_backend.csr_min_cut(network.to_csr())
    for block in (1, 5, 17, 40, 1 << 18):
        monkeypatch.setattr(cpu_backend, "GRID_BLOCK_PIXELS", block)
        result = cpu_backend.grid_min_cut(network)
        assert result.flow == expected.flow
        assert np.array_equal(result.source_side.ravel(), expected.source_side[:h * w])


# ---- segmentation memory ---------------------------------------------------------------------

@linux_only
def test_a_tiny_png_of_81_megapixels_is_refused_before_decoding(bomb81, tmp_path):
    """The campaign: an 81 MP PNG of 78 KB (under Pillow's bomb guard) was killed at 16 GB."""
    image, seeds = bomb81 / "big.png", bomb81 / "big_seeds.png"
    assert image.stat().st_size < 100_000 and image_info(image)[:2] == (9000, 9000)
    result = run_limited(f"""
        from click.testing import CliRunner
        out = CliRunner().invoke(graphcut.cli.main, ["segment", {str(image)!r}, "--seeds",
                                 {str(seeds)!r}, "-o", {str(tmp_path / "m.png")!r},
                                 "--device", "cpu"])
        result["exit_code"], result["stderr"] = out.exit_code, out.stderr
        """, budget_mib=1024)
    message = result["stderr"]
    assert result["exit_code"] == 1, result
    assert str(image) in message and "9000x9000 grey" in message and "GiB" in message
    assert "needs about" in message and "available" in message
    assert result["peak_above_start"] < 64 * MiB  # nothing was decoded
    assert not (tmp_path / "m.png").exists()


@linux_only
def test_in_a_batch_the_oversized_image_fails_alone(bomb81, tmp_path):
    images, seeds = tmp_path / "images", tmp_path / "seeds"
    images.mkdir()
    seeds.mkdir()
    (images / "a_big.png").symlink_to(bomb81 / "big.png")
    (seeds / "a_big.png").symlink_to(bomb81 / "big_seeds.png")
    Image.fromarray(disc_image("grey", seed=1)).save(images / "b_small.png")
    Image.fromarray(disc_seeds()).save(seeds / "b_small.png")
    result = run_limited(f"""
        records = graphcut.batch.run_batch({str(images)!r}, {str(seeds)!r},
                                           {str(tmp_path / "out")!r}, device="cpu",
                                           progress=False)
        result["records"] = [(r["status"], r["reason"]) for r in records]
        """, budget_mib=1536)
    assert [status for status, _ in result["records"]] == [FAILED, OK], result
    assert "needs about" in result["records"][0][1]


def test_read_image_checks_the_decoding_memory(bomb81, monkeypatch):
    """Refused before decoding, as an ImageReadError (what every reader of images catches,
    the desktop app included) that is also a MemoryError."""
    monkeypatch.setenv(LIMIT_VARIABLE, "64M")
    for read in (read_image, graphcut.read_seeds):
        with pytest.raises(ImageMemoryError, match=r"decoding .*big\.png \(9000x9000 pixels"):
            read(bomb81 / "big.png")
    assert issubclass(ImageMemoryError, ImageReadError) and issubclass(ImageMemoryError,
                                                                      MemoryError)


def test_segmentation_is_refused_up_front_naming_the_image_and_the_need(monkeypatch):
    image, seeds = disc_image("colour"), disc_seeds()
    monkeypatch.setenv(LIMIT_VARIABLE, "200K")
    with pytest.raises(HostMemoryError) as caught:
        graphcut.segment(image, seeds, device="cpu")
    message = str(caught.value)
    assert "80x60 RGB" in message and "on the CPU" in message and "200.0 KiB" in message
    need = segmentation_bytes(60, 80, 3, "cpu")
    assert caught.value.need == need and need > 200 * 1024


def test_a_default_model_too_large_names_the_histograms_need(monkeypatch):
    """The default (auto) holds features or mixtures: where it does not fit, the message says
    what the lighter histogram model would need, and that one runs within the same limit."""
    image, seeds = disc_image("colour"), disc_seeds()
    histogram = segmentation_bytes(60, 80, 3, "cpu", model="histogram")
    # auto's colour photographs: the larger of its candidates, the learned model's 476 bytes
    # per pixel (the live GMM on the colours alone 450) against the histogram's 286 here
    assert segmentation_bytes(60, 80, 3, "cpu") > 1.5 * histogram
    monkeypatch.setenv(LIMIT_VARIABLE, str(int(1.5 * histogram)))
    with pytest.raises(HostMemoryError, match="model 'histogram' would need") as caught:
        graphcut.segment(image, seeds, device="cpu")
    assert caught.value.need == segmentation_bytes(60, 80, 3, "cpu")
    mask = graphcut.segment(image, seeds, device="cpu", model="histogram")
    assert mask.any() and not mask.all()


@pytest.mark.parametrize("device,outcome", [("auto", "cpu"), ("cuda", "GPUMemoryError")])
def test_too_large_for_the_gpu_falls_back_or_is_refused_before_building(
        fake_gpu, caplog, device, outcome):  # noqa: F811  (the fixture imported above)
    fake_gpu.free_bytes = 1000  # the check up front says no; the solver is never reached
    image, seeds = disc_image("grey"), disc_seeds()
    if outcome == "cpu":
        with caplog.at_level(logging.WARNING, logger="graphcut"):
            mask, result = graphcut.segment(image, seeds, device=device, return_result=True)
        assert result.backend == "cpu" and fake_gpu.calls == []
        assert "on the GPU needs about" in caplog.text and "on the CPU instead" in caplog.text
        assert np.array_equal(mask, graphcut.segment(image, seeds, device="cpu"))
    else:
        with pytest.raises(MemoryError, match="on the GPU needs about"):
            graphcut.segment(image, seeds, device=device)
        assert fake_gpu.calls == []


_PEAK_CASE = """
from graphcut.segmentation import segmentation_bytes
h, w = 1500, 2000
rng = np.random.default_rng(0)
image = rng.integers(0, 256, (h, w, 3) if {colour} else (h, w), dtype=np.uint8)
seeds = np.zeros((h, w), np.uint8)
seeds[:20] = 2
seeds[h // 2, w // 2] = 1
box = (100, 100, 1400, 1900) if {box} else None
graphcut.solver.cpu.release_free_heap()
reset_peak()
before = rss()
graphcut.segment(image, seeds, device="cpu", model={model!r}, box=box)
result["measured"] = peak() - before
result["estimate"] = segmentation_bytes(h, w, 3 if {colour} else 1, "cpu", model={model!r},
                                        region={box})
result["pixels"] = h * w
"""

_VOLUME_PEAK_CASE = """
from graphcut.segmentation import segmentation_bytes
d, h, w = 30, 300, 334
image = np.random.default_rng(0).integers(0, 256, (d, h, w), dtype=np.uint8)
seeds = np.zeros((d, h, w), np.uint8)
seeds[:, :10] = 2
seeds[d // 2, h // 2, w // 2] = 1
graphcut.solver.cpu.release_free_heap()
reset_peak()
before = rss()
graphcut.segment(image, seeds, device="cpu", channel_axis=None)
result["measured"] = peak() - before
result["estimate"] = segmentation_bytes(h, w, 1, "cpu", depth=d)
result["pixels"] = d * h * w
"""


def _check_peak(result, *, within=1.25):
    assert "error" not in result, result
    measured, estimate = result["measured"], result["estimate"]
    assert measured <= estimate <= within * measured, result
    return measured / result["pixels"]


@pytest.mark.slow  # 3 MP segmentations in a memory-limited child process
@linux_only
@pytest.mark.parametrize("colour", [False, True])
def test_the_cpu_estimate_bounds_the_measured_peak(colour):
    """The campaign: a 30 MP RGB image peaked at 224 bytes per pixel on the CPU path. Now the
    histogram's peak is PyMaxflow's graph (176 bytes per pixel) plus a few dozen, and the
    estimate checked before starting bounds it (within 25 %)."""
    result = run_limited(_PEAK_CASE.format(colour=colour, model="histogram", box=False),
                         budget_mib=4096)
    beyond_graph = _check_peak(result) - 176
    assert beyond_graph < 36, f"{beyond_graph + 176:.0f} bytes per pixel"


@pytest.mark.slow  # 3 MP segmentations in a memory-limited child process
@linux_only
@pytest.mark.parametrize("model,colour,box", [(None, False, False), (None, True, False),
                                              ("auto", False, True), ("gmm", True, True)])
def test_the_cpu_estimate_bounds_each_models_peak(model, colour, box):
    """The default model (auto: the live GMM on these random images, grey or colour, whose
    intensities fill their range; the learned model on micrographs)
    holds features or mixtures while the graph is cut: 1.9-3.6 times the histogram's peak.
    The check made before starting counts each model's own peak (with a box too)."""
    result = run_limited(_PEAK_CASE.format(colour=colour, model=model, box=box),
                         budget_mib=8192, timeout=300)
    assert _check_peak(result) > 1.5 * 211  # the histogram's formula would not bound it


@pytest.mark.slow
@linux_only
def test_the_cpu_estimate_bounds_the_default_models_peak_on_a_volume():
    result = run_limited(_VOLUME_PEAK_CASE, budget_mib=8192, timeout=300)
    assert _check_peak(result) > 1.5 * 276  # the histogram's volume formula


# ---- parameters and files that used to give tracebacks ---------------------------------------

@pytest.fixture
def pair(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    Image.fromarray(disc_image("grey", seed=1)).save(folder / "disc.png")
    Image.fromarray(disc_seeds()).save(folder / "seeds.png")
    return folder


@pytest.mark.parametrize("sigma", ["1e-200", "5e-324", "1e-151"])
def test_underflowing_sigma_is_refused_everywhere(tmp_path, pair, sigma):
    """The campaign: --sigma 1e-200 gave a ZeroDivisionError traceback in the CLI, the API
    and every image of a batch."""
    with pytest.raises(ValueError, match="sigma must be at least 1e-150"):
        graphcut.segment(disc_image("grey"), disc_seeds(), sigma=float(sigma), device="cpu")
    with pytest.raises(ValueError, match="sigma must be at least"):
        graphcut.nlink_weights(disc_image("grey"), sigma=float(sigma))
    result = cli("segment", pair / "disc.png", "--seeds", pair / "seeds.png", "-o",
                 tmp_path / "m.png", "--sigma", sigma, "--device", "cpu")
    assert result.exit_code == 2 and "--sigma" in result.output and "at least" in result.output
    result = cli("batch", pair, "--seeds-dir", pair, "-o", tmp_path / "out", "--sigma", sigma)
    assert result.exit_code == 2 and "at least" in result.output
    record = segment_file(pair / "disc.png", pair / "seeds.png", tmp_path / "b.png",
                          sigma=float(sigma), device="cpu")
    assert record["status"] == FAILED and "sigma must be at least" in record["reason"]


def test_smallest_sigma_and_tiny_differences_work():
    image, seeds = disc_image("grey", np.float64), disc_seeds()
    graphcut.segment(image, seeds, sigma=1e-150, device="cpu")
    tiny = image * 1e-160  # neighbour differences whose squares underflow
    assert graphcut.estimate_sigma(tiny) >= 1e-150
    graphcut.segment(tiny, seeds, device="cpu")


@pytest.mark.parametrize("option,name,accepted", [
    ("-o", "mask.txt", "'.txt' is not an image format"), ("-o", "mask.jpg", "lossy"),
    ("-o", "mask", "no suffix"), ("--overlay", "overlay.txt", "unknown image file suffix"),
])
def test_output_suffixes_are_checked_before_the_solve(tmp_path, pair, monkeypatch, option, name,
                                                      accepted):
    """The campaign: -o mask.txt failed only after the whole solve."""
    import graphcut.segmentation._solving as solving
    monkeypatch.setattr(solving, "open_grid_solver", None)  # a solve would fail
    args = ["-o", tmp_path / "m.png", option, tmp_path / name] if option != "-o" else \
        ["-o", tmp_path / name]
    result = cli("segment", pair / "disc.png", "--seeds", pair / "seeds.png", *args,
                 "--device", "cpu")
    assert result.exit_code == 2 and accepted in result.output, result.output
    assert list(tmp_path.glob("m*")) == [] and not (tmp_path / name).exists()


@pytest.mark.parametrize("shape", [(1,), (5,), 5, (2.5, 3), ("a", "b"), (1, 2, 3, 4, 5)])
def test_read_seeds_with_a_malformed_shape_is_a_clear_error(pair, shape):
    """The campaign: read_seeds(path, (1,)) raised IndexError."""
    with pytest.raises(ValueError, match=r"shape must be the image's \(H, W\) or \(H, W, C\)"):
        graphcut.read_seeds(pair / "seeds.png", shape)


def _float_tiff(path: Path, array: np.ndarray, **options) -> Path:
    import tifffile
    tifffile.imwrite(path, array, **options)
    return path


@pytest.mark.parametrize("case", ["rgb_float32", "grey_float64", "rgba_float32",
                                  "rgb_float32_planar", "grey_float16"])
def test_float_tiffs_are_read(tmp_path, pair, case):
    """The campaign: RGB float32 and grey float64 TIFFs were "not an image file"."""
    grey = disc_image("grey", np.float64, seed=3)
    array = {"rgb_float32": np.dstack([grey] * 3).astype(np.float32),
             "grey_float64": grey,
             "rgba_float32": np.dstack([grey] * 3 + [np.ones_like(grey)]).astype(np.float32),
             "rgb_float32_planar": np.dstack([grey] * 3).astype(np.float32),
             "grey_float16": grey.astype(np.float16)}[case]
    options = {"photometric": "rgb" if array.ndim == 3 else "minisblack"}
    if "planar" in case:
        options["planarconfig"] = "separate"
    stored = np.moveaxis(array, -1, 0) if "planar" in case else array
    path = _float_tiff(tmp_path / f"{case}.tif", stored, **options)
    read = read_image(path)
    expected = array.astype(np.float32) if array.dtype == np.float16 else array
    assert read.dtype == expected.dtype and np.array_equal(read, expected)
    info = image_info(path)
    assert (info.height, info.width, info.channels, info.dtype) == \
        (*array.shape[:2], array.shape[2] if array.ndim == 3 else 1, expected.dtype)
    result = cli("segment", path, "--seeds", pair / "seeds.png", "-o", tmp_path / "m.png",
                 "--device", "cpu")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("case", ["grey_float32_pillow", "rgb_float32_tifffile"])
def test_the_nan_error_names_the_file(tmp_path, pair, case):
    grey = disc_image("grey", np.float32, seed=3)
    grey[7, 11] = np.nan
    if case == "grey_float32_pillow":
        path = tmp_path / "nan.tif"
        Image.fromarray(grey).save(path)
    else:
        path = _float_tiff(tmp_path / "nan_rgb.tif", np.dstack([grey] * 3), photometric="rgb")
    with pytest.raises(ImageReadError, match=rf"{path.name}: .*NaN or infinite values at 1 "
                                             r"pixels \(the first at row 7, column 11\)"):
        read_image(path)
    result = cli("segment", path, "--seeds", pair / "seeds.png", "-o", tmp_path / "m.png",
                 "--device", "cpu")
    assert result.exit_code == 1 and path.name in result.stderr and "NaN" in result.stderr


@pytest.mark.parametrize("role", ["image", "seeds"])
def test_a_fifo_as_image_or_seeds_is_refused_without_waiting(tmp_path, pair, role):
    fifo = tmp_path / "pipe.png"
    os.mkfifo(fifo)
    image, seeds = (fifo, pair / "seeds.png") if role == "image" else (pair / "disc.png", fifo)
    process = cli_process("segment", image, "--seeds", seeds, "-o", tmp_path / "m.png",
                          "--device", "cpu")
    assert process.returncode == 1 and "named pipe" in process.stderr
    with pytest.raises(ImageReadError, match="named pipe"):
        (read_image if role == "image" else graphcut.read_seeds)(fifo)


# ---- the memory budget itself ----------------------------------------------------------------

def test_the_budget_variable(monkeypatch):
    assert parse_bytes("2G") == 2 << 30 and parse_bytes("512k") == 512 << 10
    assert parse_bytes("1.5M") == 3 << 19 and parse_bytes("1000") == 1000
    monkeypatch.setenv(LIMIT_VARIABLE, "3M")
    assert available_bytes() <= 3 << 20
    monkeypatch.setenv(LIMIT_VARIABLE, "lots")
    with pytest.raises(ValueError, match="not a size"):
        available_bytes()


@linux_only
def test_the_address_space_limit_is_seen():
    result = run_limited("""
        result["available"] = graphcut.solver.memory.available_bytes()
        """, budget_mib=300)
    assert 200 * MiB < result["available"] <= 300 * MiB, result
