"""DIMACS max-flow files: round trips, tolerated layouts and every kind of malformed file."""

from __future__ import annotations

import bz2
import gzip
import os
from pathlib import Path

import numpy as np
import pytest
from oracle import random_csr_network, random_grid_network, scipy_max_flow

from graphcut.solver import CSRNetwork, min_cut
from graphcut.solver.dimacs import DimacsError, read_dimacs, write_dimacs

SAMPLES = Path(__file__).resolve().parents[1] / "samples" / "dimacs"


def assert_same_network(a: CSRNetwork, b: CSRNetwork) -> None:
    assert (a.num_vertices, a.source, a.sink) == (b.num_vertices, b.source, b.sink)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.heads, b.heads)
    np.testing.assert_array_equal(a.capacities, b.capacities)


def write_text(path: Path, text: str, *, crlf: bool = False) -> Path:
    data = text.replace("\n", "\r\n") if crlf else text
    raw = data.encode()
    if path.name.endswith(".gz"):
        raw = gzip.compress(raw)
    elif path.name.endswith(".bz2"):
        raw = bz2.compress(raw)
    path.write_bytes(raw)
    return path


# ---------------------------------------------------------------- round trips

@pytest.mark.parametrize("name", ["net.max", "net.max.gz", "net.max.bz2", "NET.MAX.GZ"])
def test_round_trip_random_networks(tmp_path, name):
    rng = np.random.default_rng(len(name))
    for n, m in [(2, 0), (7, 20), (50, 400)]:
        network = random_csr_network(rng, n, m, max_capacity=2**31 // 512, source_degree=2,
                                     sink_degree=2)
        write_dimacs(network, tmp_path / name, comment="a comment\nover two lines")
        assert_same_network(read_dimacs(tmp_path / name), network)
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]  # no temporary left behind


def test_written_file_layout(tmp_path):
    network = CSRNetwork.from_arcs(4, 1, 3, [1, 1, 0, 2], [0, 2, 3, 3], [5, 7, 1, 2])
    write_dimacs(network, tmp_path / "x.max", comment="hello")
    lines = (tmp_path / "x.max").read_text().splitlines()
    assert lines == ["c hello", "p max 4 4", "n 2 s", "n 4 t",
                     "a 1 4 1", "a 2 1 5", "a 2 3 7", "a 3 4 2"]


def test_round_trip_grid_network(tmp_path):
    grid = random_grid_network(np.random.default_rng(1), (5, 6), symmetric=False)
    write_dimacs(grid, tmp_path / "grid.max.bz2")
    back = read_dimacs(tmp_path / "grid.max.bz2")
    assert_same_network(back, grid.to_csr())
    assert min_cut(back, device="cpu").flow == min_cut(grid, device="cpu").flow


@pytest.mark.parametrize("suffix", [".max", ".max.gz", ".max.bz2"])
def test_crlf_line_ends(tmp_path, suffix):
    network = random_csr_network(np.random.default_rng(2), 12, 40, source_degree=3,
                                 sink_degree=3)
    write_dimacs(network, tmp_path / "lf.max")
    text = (tmp_path / "lf.max").read_text()
    path = write_text(tmp_path / f"crlf{suffix}", text, crlf=True)
    assert b"\r\n" in (bz2.decompress if suffix == ".max.bz2" else
                       gzip.decompress if suffix == ".max.gz" else bytes)(path.read_bytes())
    assert_same_network(read_dimacs(path), network)


def test_tolerated_layout(tmp_path):
    # Tabs and runs of spaces, blank lines, comments between arcs, node lines after arcs,
    # trailing whitespace, no final newline, zero capacities, self-loops and parallel arcs.
    text = ("c header\n\np max 5 7\t\n  \na 1\t2   3\nc middle\na 2 5 4  \nn 5 t\n"
            "a 2 2 9\na 1 3 0\na 1 2 4\nn 1 s\na 3 5 6\r\na 2 3 1")
    network = read_dimacs(write_text(tmp_path / "odd.max", text))
    expected = CSRNetwork.from_arcs(5, 0, 4, [0, 1, 1, 0, 0, 2, 1], [1, 4, 1, 2, 1, 4, 2],
                                    [3, 4, 9, 0, 4, 6, 1])
    assert_same_network(network, expected)
    assert min_cut(network, device="cpu").flow == 5


def test_negative_zero_capacity_is_zero(tmp_path):
    # Rejected by the fast scan, accepted by the line parser: exercises the Python fallback.
    text = "p max 3 2\nn 1 s\nn 3 t\na 1 2 -0\na 2 3 5\n"
    network = read_dimacs(write_text(tmp_path / "z.max", text))
    assert_same_network(network, CSRNetwork.from_arcs(3, 0, 2, [1], [2], [5]))


def test_samples_match_their_index():
    import json
    index = json.loads((SAMPLES / "index.json").read_text())["instances"]
    assert len(index) >= 5
    for entry in index:
        network = read_dimacs(SAMPLES / entry["file"])
        assert scipy_max_flow(network) == entry["flow"]
        assert min_cut(network, device="cpu").flow == entry["flow"]
    assert read_dimacs(SAMPLES / "textbook_6.max").num_arcs == 10


def test_large_file_round_trip(tmp_path):
    rng = np.random.default_rng(9)
    n, m = 20_000, 100_000
    network = CSRNetwork.from_arcs(n, 3, 17, rng.integers(0, n, m), rng.integers(0, n, m),
                                   rng.integers(0, 2**31 - 1, m) // 4)
    write_dimacs(network, tmp_path / "big.max.gz")
    assert_same_network(read_dimacs(tmp_path / "big.max.gz"), network)


# ---------------------------------------------------------------- atomic writes

def test_failed_write_leaves_existing_file_and_no_temporary(tmp_path, monkeypatch):
    network = random_csr_network(np.random.default_rng(3), 6, 10)
    target = tmp_path / "keep.max"
    target.write_text("original")

    def broken(self):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(CSRNetwork, "arcs", broken)
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_dimacs(network, target)
    assert target.read_text() == "original"
    assert [p.name for p in tmp_path.iterdir()] == ["keep.max"]


def test_write_replaces_and_keeps_permissions(tmp_path):
    network = random_csr_network(np.random.default_rng(4), 6, 10)
    target = tmp_path / "n.max"
    write_dimacs(network, target)
    assert target.stat().st_mode & 0o777 == 0o644
    os.chmod(target, 0o600)
    write_dimacs(network, target)
    assert target.stat().st_mode & 0o777 == 0o600


def test_write_rejects_other_types(tmp_path):
    with pytest.raises(TypeError, match="CSRNetwork or GridNetwork"):
        write_dimacs({"not": "a network"}, tmp_path / "x.max")


# ---------------------------------------------------------------- malformed files

HEAD = "p max 4 1\nn 1 s\nn 4 t\n"

MALFORMED = {
    # name: (text, line, fragment of the message)
    "empty": ("", 1, "the file is empty"),
    "only comments": ("c one\nc two\n", 2, "no problem line"),
    "bad problem type": ("p min 4 1\n", 1, "expected the problem line 'p max N M'"),
    "problem field count": ("p max 4\n", 1, "expected the problem line 'p max N M'"),
    "problem not integer": ("p max four 1\n", 1, "integer for the vertex count N"),
    "problem too few vertices": ("p max 1 0\n", 1, "at least 2 vertices"),
    "problem negative arcs": ("p max 4 -1\n", 1, "expected M >= 0"),
    "problem huge n": ("p max 4294967296 0\n", 1, "above the int32 limit"),
    "duplicate problem": ("p max 4 0\nn 1 s\np max 4 0\n", 3, "second problem line"),
    "arc before problem": ("c x\na 1 2 3\np max 4 1\nn 1 s\nn 4 t\n", 2,
                           "arc line before the problem line"),
    "node before problem": ("n 1 s\np max 4 0\n", 1, "node line before the problem line"),
    "unknown line": (HEAD + "x 1 2\na 1 4 1\n", 4, "unknown line type"),
    "leading whitespace": (HEAD + " a 1 4 1\n", 4, "starts with whitespace"),
    "arc too few fields": (HEAD + "a 1 4\n", 4, "expected an arc line 'a U V CAP'"),
    "arc too many fields": (HEAD + "a 1 4 5 6\n", 4, "expected an arc line 'a U V CAP'"),
    "arc glued": (HEAD + "a1 4 5\n", 4, "expected an arc line 'a U V CAP'"),
    "arc not integer": (HEAD + "a 1 x 5\n", 4, "integer for the head V"),
    "arc float capacity": (HEAD + "a 1 4 2.5\n", 4, "integer for the capacity CAP"),
    "arc plus sign": (HEAD + "a +1 4 2\n", 4, "integer for the tail U"),
    "tail out of range": (HEAD + "a 0 4 2\n", 4, "arc tail 0 is out of range"),
    "head out of range": (HEAD + "a 1 5 2\n", 4, "arc head 5 is out of range"),
    "negative tail": (HEAD + "a -1 4 2\n", 4, "arc tail -1 is out of range"),
    "negative capacity": (HEAD + "a 1 4 -2\n", 4, "negative capacity -2"),
    "capacity over int32": (HEAD + "a 1 4 2147483648\n", 4, "above the int32 limit"),
    "capacity absurd": (HEAD + "a 1 4 123456789012345678901234567890\n", 4,
                        "above the int32 limit"),
    "parallel arcs overflow": ("p max 4 3\nn 1 s\nn 4 t\na 1 2 2147483647\na 2 4 1\n"
                               "a 1 2 1\n", 6, "parallel arcs 1 -> 2"),
    "node bad role": ("p max 4 0\nn 1 x\n", 2, "expected a node line 'n ID s' or 'n ID t'"),
    "node field count": ("p max 4 0\nn 1\n", 2, "expected a node line"),
    "node out of range": ("p max 4 0\nn 9 s\n", 2, "vertex id 9 is out of range"),
    "node not integer": ("p max 4 0\nn one s\n", 2, "integer for the vertex ID"),
    "duplicate source": ("p max 4 0\nn 1 s\nn 2 s\n", 3, "second source"),
    "duplicate sink": ("p max 4 0\nn 4 t\nn 2 t\n", 3, "second sink"),
    "source equals sink": ("p max 4 0\nn 2 s\nn 2 t\n", 3, "both source and sink"),
    "missing source": ("p max 4 1\nn 4 t\na 1 4 1\n", 3, "no source"),
    "missing sink": ("p max 4 1\nn 1 s\na 1 4 1\n", 3, "no sink"),
    "more arcs than declared": (HEAD + "a 1 4 1\na 1 2 1\n", 5,
                                "arc line number 2, but the problem line (line 1) declares M = 1"),
    "fewer arcs than declared": ("p max 4 3\nn 1 s\nn 4 t\na 1 4 1\n", 1,
                                 "declares M = 3 arcs but the file has 1 arc lines"),
    # The first error in file order wins, whichever kind of line holds it.
    "arc error before header error": (HEAD + "a 1 9 1\nx\n", 4, "arc head 9"),
    "header error before arc error": ("p max 4 2\nn 1 s\nq\nn 4 t\na 1 9 1\na 1 2 1\n", 3,
                                      "unknown line type"),
    "bad arc after good ones": ("p max 4 4\nn 1 s\nn 4 t\na 1 2 1\na 2 3 1\na 3 4 z\n"
                                "a 1 4 1\n", 6, "integer for the capacity CAP"),
}


@pytest.mark.parametrize("suffix", [".max", ".max.gz"])
@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_files_name_file_and_line(tmp_path, case, crlf, suffix):
    text, line, fragment = MALFORMED[case]
    path = write_text(tmp_path / f"bad{suffix}", text, crlf=crlf)
    with pytest.raises(DimacsError) as info:
        read_dimacs(path)
    error = info.value
    assert isinstance(error, ValueError)
    assert error.line == line
    assert error.path == str(path)
    message = str(error)
    assert message.startswith(f"{path}, line {line}: ")
    assert fragment in message
    assert "\r" not in message


def test_missing_file_is_an_os_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_dimacs(tmp_path / "nope.max")


def test_clean_files_never_take_the_python_fallback(tmp_path, monkeypatch):
    from graphcut.solver import _dimacs_reader

    def fail(*args):
        raise AssertionError("the per-line Python parser ran on a clean file")

    monkeypatch.setattr(_dimacs_reader, "_slow_arcs", fail)
    network = random_csr_network(np.random.default_rng(8), 40, 300, source_degree=4,
                                 sink_degree=4)
    write_dimacs(network, tmp_path / "a.max", comment="c")
    text = (tmp_path / "a.max").read_text()
    for name, crlf in (("lf.max", False), ("crlf.max", True)):
        assert_same_network(read_dimacs(write_text(tmp_path / name, text, crlf=crlf)), network)


@pytest.mark.parametrize("name, data", [
    ("corrupt.max.gz", b"\x1f\x8b\x08\x00not really gzip"),
    ("truncated.max.gz", gzip.compress(b"p max 2 0\nn 1 s\nn 2 t\n")[:-12]),
    ("corrupt.max.bz2", b"BZh91AY&SY garbage"),
])
def test_corrupt_compressed_files(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    with pytest.raises(DimacsError, match=f"{name}: not valid (gz|bz2) data") as info:
        read_dimacs(tmp_path / name)
    assert info.value.line is None


@pytest.mark.parametrize("suffix", [".max", ".max.gz", ".max.bz2"])
def test_equal_networks_give_equal_bytes(tmp_path, suffix):
    network = random_csr_network(np.random.default_rng(12), 10, 30)
    write_dimacs(network, tmp_path / f"one{suffix}")
    write_dimacs(network, tmp_path / f"two{suffix}")
    assert (tmp_path / f"one{suffix}").read_bytes() == (tmp_path / f"two{suffix}").read_bytes()
