"""Fuzzing the DIMACS reader: mutated valid files and random bytes.

Every input must end in exactly one of two ways: a :class:`DimacsError` that names a line, or
a valid :class:`CSRNetwork`. Which one, and which line, is checked against a small reference
parser written from the format's description (one line at a time, plain Python), so the
vectorised reader is held to the documented rules, not only to "does not crash".
"""

from __future__ import annotations

import bz2
import gzip
import re
from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from graphcut.solver import CSRNetwork, _dimacs_reader
from graphcut.solver.dimacs import DimacsError, read_dimacs

INT32_MAX = 2**31 - 1
SAMPLES = Path(__file__).resolve().parent.parent / "samples" / "dimacs"
VALID = [
    (SAMPLES / "textbook_6.max").read_bytes(),
    (SAMPLES / "washington_rlg_4x6.max").read_bytes(),
    b"c tiny\r\np max 3 3\r\nn 1 s\r\nn 3 t\r\na 1 2 5\r\na 2 3 4\r\na 1 2 2\r\n",
    b"p max 4 4\n\nn 4 t\na 1 2 7\na 2 2 9\nn 1 s\na 2 4 0\na 1 4 2147483647\n",
]
# Bytes that matter to the format, and a few that do not belong in it.
ALPHABET = list(b"0123456789 \t\r\n-+acnpstmx") + [0, 0x0B, 0x0C, 0x80, 0xFF]
FUZZ = settings(max_examples=200, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow])
# Files declaring more vertices than this are valid, but need O(N) memory to build; a mutation
# that inflates N is not what these tests are about.
MAX_VERTICES = 10**6


class ReferenceError(Exception):
    def __init__(self, line: int):
        super().__init__(line)
        self.line = line


def _integer(token: bytes, lineno: int) -> int:
    if not re.fullmatch(rb"-?[0-9]+", token):
        raise ReferenceError(lineno)
    return int(token)


def reference_parse(data: bytes):
    """(n, source, sink, [(u, v, cap)]) with 0-based ids, or ReferenceError(line), following
    solver/dimacs.py's docstring: the first bad line in file order; then, at the end, a short
    arc count (reported at the problem line), a missing source or sink (at the last line) and
    parallel arcs summing past int32 (at the arc where the sum first passes it)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    n = m = p_line = source = sink = None
    arcs = []
    for lineno, line in enumerate(lines, 1):
        fields = line.split()
        kind = line[:1]
        if kind == b"a":
            if n is None or fields[0] != b"a" or len(fields) != 4:
                raise ReferenceError(lineno)
            u, v, cap = (_integer(f, lineno) for f in fields[1:])
            if not (1 <= u <= n and 1 <= v <= n and 0 <= cap <= INT32_MAX) or len(arcs) >= m:
                raise ReferenceError(lineno)
            arcs.append((u - 1, v - 1, cap, lineno))
        elif not fields or kind == b"c":
            continue
        elif kind == b"p":
            if p_line is not None or fields[0] != b"p" or len(fields) != 4 \
                    or fields[1] != b"max":
                raise ReferenceError(lineno)
            n, m = _integer(fields[2], lineno), _integer(fields[3], lineno)
            if not 2 <= n <= INT32_MAX or m < 0:
                raise ReferenceError(lineno)
            p_line = lineno
        elif kind == b"n":
            if n is None or fields[0] != b"n" or len(fields) != 3 \
                    or fields[2] not in (b"s", b"t"):
                raise ReferenceError(lineno)
            vertex = _integer(fields[1], lineno)
            if not 1 <= vertex <= n:
                raise ReferenceError(lineno)
            if fields[2] == b"s":
                if source is not None or sink == vertex - 1:
                    raise ReferenceError(lineno)
                source = vertex - 1
            else:
                if sink is not None or source == vertex - 1:
                    raise ReferenceError(lineno)
                sink = vertex - 1
        else:
            raise ReferenceError(lineno)
    last = max(len(lines), 1)
    if p_line is None:
        raise ReferenceError(last)
    if len(arcs) < m:
        raise ReferenceError(p_line)
    if source is None or sink is None:
        raise ReferenceError(last)
    totals: dict[tuple[int, int], int] = {}
    for u, v, cap, lineno in arcs:
        if u != v and cap > 0:
            totals[u, v] = totals.get((u, v), 0) + cap
            if totals[u, v] > INT32_MAX:
                raise ReferenceError(lineno)
    return n, source, sink, [(u, v, cap) for u, v, cap, _ in arcs]


def _declares_huge_network(data: bytes) -> bool:
    return any(len(f) == 4 and f[0] == b"p" and re.fullmatch(rb"[0-9]+", f[2])
               and int(f[2]) > MAX_VERTICES
               for f in (line.split() for line in data.split(b"\n")))


def check(path: Path, data: bytes) -> None:
    """read_dimacs on ``data`` agrees with the reference parser: the same network, or a
    DimacsError at the same line; any other exception fails the test."""
    path.write_bytes(data)
    try:
        expected = reference_parse(data)
    except ReferenceError as error:
        with pytest.raises(DimacsError) as caught:
            read_dimacs(path)
        assert caught.value.line == error.line, (data, str(caught.value))
        assert f"line {error.line}:" in str(caught.value) and str(path) in str(caught.value)
        return
    network = read_dimacs(path)
    n, source, sink, arcs = expected
    tails, heads, caps = (np.array([a[i] for a in arcs], dtype=np.int64) for i in range(3))
    reference = CSRNetwork.from_arcs(n, source, sink, tails, heads, caps)
    assert (network.num_vertices, network.source, network.sink) == (n, source, sink)
    for got, want in zip(network.arcs(), reference.arcs()):
        np.testing.assert_array_equal(got, want)
    assert np.all(network.capacities > 0) and np.all(np.diff(network.offsets) >= 0)


@st.composite
def mutated(draw):
    """A valid file with 1 to 6 random edits: bytes deleted, inserted, replaced; lines
    dropped, duplicated, swapped; a number replaced by another."""
    data = bytearray(draw(st.sampled_from(VALID)))
    for _ in range(draw(st.integers(1, 6))):
        edit = draw(st.sampled_from(["delete", "insert", "replace", "drop_line",
                                     "duplicate_line", "swap_lines", "number", "truncate"]))
        if edit in ("delete", "insert", "replace", "truncate"):
            at = draw(st.integers(0, len(data)))
            if edit == "delete":
                del data[at:at + draw(st.integers(1, 8))]
            elif edit == "insert":
                data[at:at] = bytes(draw(st.lists(st.sampled_from(ALPHABET), min_size=1,
                                                  max_size=6)))
            elif edit == "replace" and at < len(data):
                data[at] = draw(st.sampled_from(ALPHABET))
            elif edit == "truncate":
                del data[at:]
            continue
        lines = bytes(data).split(b"\n")
        i, j = (draw(st.integers(0, max(len(lines) - 1, 0))) for _ in range(2))
        if edit == "drop_line" and lines:
            del lines[i]
        elif edit == "duplicate_line" and lines:
            lines.insert(j, lines[i])
        elif edit == "swap_lines" and lines:
            lines[i], lines[j] = lines[j], lines[i]
        elif edit == "number":
            numbers = list(re.finditer(rb"[0-9]+", bytes(data)))
            if numbers:
                match = draw(st.sampled_from(numbers))
                value = draw(st.one_of(st.integers(-3, 40), st.sampled_from(
                    [0, 1, INT32_MAX, INT32_MAX + 1, 2**63, -(2**31), 10**30])))
                data[match.start():match.end()] = str(value).encode()
            continue
        data = bytearray(b"\n".join(lines))
    return bytes(data)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz")


def test_the_reference_parser_accepts_the_valid_files():
    for data in VALID:
        reference_parse(data)


@FUZZ
@given(data=mutated())
def test_mutated_files_give_a_network_or_a_line_numbered_error(folder, data):
    assume(not _declares_huge_network(data))
    check(folder / "mutated.max", data)


@FUZZ
@given(data=st.one_of(st.binary(max_size=300),
                      st.lists(st.sampled_from(ALPHABET), max_size=200).map(bytes)))
def test_random_bytes_give_a_network_or_a_line_numbered_error(folder, data):
    assume(not _declares_huge_network(data))
    check(folder / "random.max", data)


@FUZZ
@given(data=st.one_of(mutated(), st.lists(st.sampled_from(ALPHABET), max_size=200).map(bytes)),
       chunk=st.integers(1, 48))
def test_any_chunk_size_gives_the_same_answer(folder, data, chunk):
    """The file is parsed a chunk at a time (1 MiB); chunk boundaries anywhere, even inside
    every line, change nothing: the same network or the same line-numbered error."""
    assume(not _declares_huge_network(data))
    with patch.object(_dimacs_reader, "CHUNK_BYTES", chunk):
        check(folder / "chunked.max", data)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=mutated(), compress=st.sampled_from(["gz", "bz2"]), damage=st.integers(0, 64))
def test_damaged_compressed_files_give_a_dimacs_error(folder, data, compress, damage):
    """Compressed files: damaged compressed bytes end in DimacsError (without a line when the
    compressed data itself is invalid); intact ones behave as the plain text."""
    assume(not _declares_huge_network(data))
    packed = bytearray(gzip.compress(data, mtime=0) if compress == "gz" else bz2.compress(data))
    if damage:
        position = damage * 7919 % len(packed)
        packed[position] ^= 0xA5
    path = folder / f"file.max.{compress}"
    path.write_bytes(bytes(packed))
    try:
        read_dimacs(path)
    except DimacsError as error:
        assert error.line is not None or f"not valid {compress} data" in str(error)
