"""The DIMACS reader's state: the header, the chunks of text, the arc store with its memory
checks, and the line-by-line reader that ties them together (see :mod:`graphcut.solver.dimacs`
for the format and its rules)."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import numpy as np

from ._dimacs_scan import (_STORE_BYTES_PER_ARC, _WHITESPACE, CHUNK_BYTES,
                           COMPRESSED_BYTES_PER_ARC, COMPRESSED_SLACK_BYTES,
                           ISOLATED_VERTEX_ALLOWANCE, MAX_LINE_BYTES, DimacsError, _integer,
                           _open, _parse_arc_line, _scan, _show)
from .memory import HostMemoryError, format_bytes, require_host_memory
from .networks import INT32_MAX, CSRNetwork, csr_build_bytes


class _Header:
    """State of the non-arc lines: the problem line, source and sink, in file order."""

    def __init__(self, path):
        self.path = path
        self.n = self.m = self.p_line = None
        self.source = self.sink = None
        self.source_line = self.sink_line = None

    def feed(self, lineno: int, line: bytes) -> None:
        fields = line.split()
        if not fields:
            return
        kind = line[:1]
        if kind == b"c":
            return
        if kind in _WHITESPACE:
            raise DimacsError(self.path, lineno, "line starts with whitespace; expected 'c', "
                                                 "'p', 'n' or 'a' in column 1")
        if kind == b"p":
            self._problem(lineno, line, fields)
        elif kind == b"n":
            self._node(lineno, line, fields)
        else:
            raise DimacsError(self.path, lineno, f"unknown line type; expected a line starting "
                                                 f"with 'c', 'p', 'n' or 'a', got {_show(line)}")

    def _problem(self, lineno, line, fields):
        if self.p_line is not None:
            raise DimacsError(self.path, lineno, f"second problem line; the problem was already "
                                                 f"given on line {self.p_line}")
        if fields[0] != b"p" or len(fields) != 4 or fields[1] != b"max":
            raise DimacsError(self.path, lineno, f"expected the problem line 'p max N M', got "
                                                 f"{_show(line)}")
        n = _integer(self.path, lineno, fields[2], "the vertex count N", line)
        m = _integer(self.path, lineno, fields[3], "the arc count M", line)
        if n < 2:
            raise DimacsError(self.path, lineno, f"vertex count N = {n}; a flow network needs "
                                                 "at least 2 vertices")
        if n > INT32_MAX:
            raise DimacsError(self.path, lineno, f"vertex count N = {n} is above the int32 "
                                                 f"limit {INT32_MAX}")
        if m < 0:
            raise DimacsError(self.path, lineno, f"arc count M = {m}; expected M >= 0")
        if n > 2 * m + 2 + ISOLATED_VERTEX_ALLOWANCE:
            raise DimacsError(self.path, lineno, f"vertex count N = {n}, but M = {m} arcs touch "
                                                 f"at most {2 * m + 2} vertices (with s and "
                                                 f"t); more than {ISOLATED_VERTEX_ALLOWANCE} "
                                                 "vertices that no arc touches are refused "
                                                 "(each costs memory, none can carry flow)")
        _require(csr_build_bytes(n, 0), f"reading {os.fspath(self.path)} (line {lineno} "
                                        f"declares {n} vertices)", lineno)
        self.n, self.m, self.p_line = n, m, lineno

    def _node(self, lineno, line, fields):
        if self.p_line is None:
            raise DimacsError(self.path, lineno, "node line before the problem line; expected "
                                                 "'p max N M' first")
        if fields[0] != b"n" or len(fields) != 3 or fields[2] not in (b"s", b"t"):
            raise DimacsError(self.path, lineno, f"expected a node line 'n ID s' or 'n ID t', "
                                                 f"got {_show(line)}")
        vertex = _integer(self.path, lineno, fields[1], "the vertex ID", line)
        if not 1 <= vertex <= self.n:
            raise DimacsError(self.path, lineno, f"vertex id {vertex} is out of range: expected "
                                                 f"1..{self.n}")
        role, other = ("source", "sink") if fields[2] == b"s" else ("sink", "source")
        if getattr(self, role) is not None:
            raise DimacsError(self.path, lineno, f"second {role}; the {role} was already given "
                                                 f"on line {getattr(self, role + '_line')}")
        if getattr(self, other) == vertex:
            raise DimacsError(self.path, lineno, f"vertex {vertex} is both source and sink "
                                                 "(s == t); they must differ")
        setattr(self, role, vertex)
        setattr(self, role + "_line", lineno)


class _Chunks:
    """The decompressed text of a file in pieces of about CHUNK_BYTES that end at a line end
    (the last piece at the end of the file). ``lines`` counts the lines yielded or skipped;
    ``total`` the bytes read. Comment lines longer than MAX_LINE_BYTES are skipped without
    being kept in memory; any other such line is an error."""

    def __init__(self, path, handle, byte_limit):
        self.path, self.handle, self.byte_limit = path, handle, byte_limit
        self.lines = 0
        self.total = 0

    def _read(self) -> bytes:
        block = self.handle.read(CHUNK_BYTES)
        self.total += len(block)
        limit = self.byte_limit()
        if limit is not None and self.total > limit:
            raise DimacsError(self.path, self.lines + 1, _limit_reason(limit))
        return block

    def __iter__(self):
        carry = b""
        while True:
            block = self._read()
            if not block:
                if carry:
                    self.lines += 1
                    yield carry, self.lines
                return
            data = carry + block if carry else block
            cut = data.rfind(b"\n") + 1
            if cut == 0:
                if len(data) <= MAX_LINE_BYTES:
                    carry = data
                    continue
                if data[:1] != b"c":
                    raise DimacsError(self.path, self.lines + 1,
                                      f"line longer than {MAX_LINE_BYTES} bytes; only comment "
                                      "lines may be that long (is this a DIMACS file?)")
                carry = self._skip_comment()
                self.lines += 1
                continue
            first = self.lines + 1
            self.lines += data.count(b"\n", 0, cut)
            yield data[:cut], first
            carry = data[cut:]

    def _skip_comment(self) -> bytes:
        """Read past the end of a long comment line; return what follows its line end."""
        while True:
            block = self._read()
            end = block.find(b"\n")
            if not block or end >= 0:
                return block[end + 1:] if block else b""


def _limit_reason(limit: int) -> str:
    """Why a compressed file that decompresses past ``limit`` bytes is refused."""
    slack = format_bytes(COMPRESSED_SLACK_BYTES)
    return (f"the data decompresses to more than {limit} bytes ({format_bytes(limit)}), more "
            f"than a DIMACS file with the declared number of arcs needs "
            f"({COMPRESSED_BYTES_PER_ARC} bytes per arc line plus {slack}); refusing it as a "
            "possible decompression bomb")


class _ArcStore:
    """The arcs read so far, 0-based (tail, head, capacity) rows of int32, grown as they
    arrive (never beyond the declared M), with a memory check before each growth."""

    def __init__(self, path):
        self.path = path
        self.rows = np.empty((0, 3), dtype=np.int32)
        self.count = 0

    def append(self, values: np.ndarray, n: int, m: int, line: int) -> None:
        """Add validated 1-based (u, v, cap) rows (int64); ``line`` is the last one's line."""
        need = self.count + len(values)
        if need > len(self.rows):
            size = min(max(need, 2 * len(self.rows), 1 << 16), m)
            _require(_STORE_BYTES_PER_ARC * size + csr_build_bytes(n, size),
                     f"reading {os.fspath(self.path)} (line {line}: {need} arcs so far of "
                     f"the {m} declared)", line)
            grown = np.empty((size, 3), dtype=np.int32)
            grown[:self.count] = self.rows[:self.count]
            self.rows = grown
        block = self.rows[self.count:need]
        block[:] = values
        block[:, :2] -= 1
        self.count = need


def _require(need: int, what: str, line: int) -> None:
    try:
        require_host_memory(need, what)
    except HostMemoryError as error:
        error.line = line
        raise


class _Reader:
    """Parses the chunks of one file in order, keeping the header state and the arcs."""

    def __init__(self, path):
        self.path = path
        self.header = _Header(path)
        self.arcs = _ArcStore(path)

    def byte_limit(self) -> int | None:
        """Decompressed bytes allowed so far (see COMPRESSED_SLACK_BYTES)."""
        m = self.header.m
        return COMPRESSED_SLACK_BYTES + COMPRESSED_BYTES_PER_ARC * (0 if m is None else m + 3)

    def feed(self, data: bytes, first: int) -> None:
        """Parse the lines of ``data`` (whole lines; the first is line number ``first``).
        Errors are raised in file order: the first bad line wins."""
        buf = np.frombuffer(data, dtype=np.uint8)
        starts, ends, arc_lines, values, ok, other_lines = _scan(buf)
        total_lines = starts.size

        def line_text(index: int) -> bytes:
            return data[starts[index]:ends[index]]

        header = self.header
        seen_problem = header.p_line is not None
        header_error = None
        for index in other_lines.tolist():
            try:
                header.feed(first + index, line_text(index))
            except (DimacsError, HostMemoryError) as error:
                header_error = error
                break
        limit = header_error.line - first if header_error is not None else total_lines
        n, m = header.n, header.m
        if seen_problem:
            p_index = -1
        elif header.p_line is not None:
            p_index = header.p_line - first
        else:
            p_index = total_lines
        considered = arc_lines < limit
        if values is None:  # NumPy's parser disagreed with the scan: parse the arcs in Python
            values, ok = _slow_arcs(self.path, first, arc_lines[considered], line_text, n,
                                    p_index)
            if header_error is not None:
                raise header_error
        number = self.arcs.count + np.arange(arc_lines.size)  # 0-based arc numbers in the file
        bad = ~ok | (arc_lines < p_index)
        if n is not None:
            bad |= ((values[:, :2] < 1) | (values[:, :2] > n)).any(axis=1)
            bad |= values[:, 2] > INT32_MAX
            bad |= number >= m
        bad &= considered
        if bad.any():
            index = int(np.argmax(bad))
            line = int(arc_lines[index])
            if line > p_index and number[index] >= m and ok[index]:
                raise DimacsError(self.path, first + line,
                                  f"arc line number {m + 1}, but the problem line (line "
                                  f"{header.p_line}) declares M = {m}")
            _parse_arc_line(self.path, first + line, line_text(line),
                            n if line > p_index else None)
            # The vectorised scan was stricter than the line parser: parse the arcs in Python.
            values, _ = _slow_arcs(self.path, first, arc_lines[considered], line_text, n,
                                   p_index)
        if header_error is not None:
            raise header_error
        if arc_lines.size:
            self.arcs.append(values, n, m, first + int(arc_lines[-1]))

    def finish(self, total_lines: int) -> CSRNetwork:
        """The network, after the end-of-file checks (problem line, arc count, s and t)."""
        header, path = self.header, self.path
        last = max(total_lines, 1)
        if header.p_line is None:
            what = "the file is empty" if not total_lines else "no problem line in the file"
            raise DimacsError(path, last, f"{what}; expected 'p max N M'")
        count = self.arcs.count
        if count < header.m:
            raise DimacsError(path, header.p_line, f"the problem line declares M = {header.m} "
                                                   f"arcs but the file has {count} arc lines")
        for role, letter in (("source", "s"), ("sink", "t")):
            if getattr(header, role) is None:
                raise DimacsError(path, last, f"no {role} in the file (end of file reached); "
                                              f"expected a line 'n ID {letter}'")
        rows = self.arcs.rows[:count]
        self.arcs.rows = None
        _require(csr_build_bytes(header.n, count),
                 f"building the network of {os.fspath(path)} ({header.n} vertices, {count} "
                 "arcs)", header.p_line)
        tails, heads, caps = rows[:, 0], rows[:, 1], rows[:, 2]
        try:
            return CSRNetwork.from_arcs(header.n, header.source - 1, header.sink - 1, tails,
                                        heads, caps)
        except ValueError:  # parallel arcs summing past int32: say where
            index = _first_overflowing_parallel_arc(tails.astype(np.int64),
                                                    heads.astype(np.int64),
                                                    caps.astype(np.int64), header.n)
            if index is None:
                raise
            u, v = int(tails[index]) + 1, int(heads[index]) + 1
            raise DimacsError(path, _line_of_arc(path, index),
                              f"parallel arcs {u} -> {v} sum past the int32 capacity limit "
                              f"{INT32_MAX} here") from None


def _line_of_arc(path: Path, index: int) -> int:
    """The line number of the ``index``-th (0-based) arc line of a file read once already."""
    handle, raw = _open(path)
    with (raw if raw is not None else contextlib.nullcontext()), handle:
        seen = 0
        for data, first in _Chunks(path, handle, lambda: None):
            arc_lines = _scan(np.frombuffer(data, dtype=np.uint8))[2]
            if seen + arc_lines.size > index:
                return first + int(arc_lines[index - seen])
            seen += arc_lines.size
    raise AssertionError(f"{path} has no arc line number {index + 1}")

def _slow_arcs(path, first, arc_lines, line_text, n, p_index):
    """Parse the given arc lines (indices in a chunk whose first line is ``first``) one by one
    in Python, raising at the first bad one. Used only where the vectorised scan could not
    decide."""
    values = np.array([_parse_arc_line(path, first + i, line_text(i), n if i > p_index else None)
                       for i in arc_lines.tolist()], dtype=np.int64).reshape(-1, 3)
    return values, np.ones(len(values), dtype=bool)


def _first_overflowing_parallel_arc(tails, heads, caps, n) -> int | None:
    """Index of the arc at which a group of parallel arcs first sums past int32 (self-loops
    and zero capacities ignored, as in :meth:`CSRNetwork.from_arcs`), or None."""
    caps = np.where(tails != heads, caps, 0)
    key = tails * n + heads
    order = np.argsort(key, kind="stable")
    sorted_key, sorted_caps = key[order], caps[order]
    group_start = np.flatnonzero(np.concatenate(([True], sorted_key[1:] != sorted_key[:-1])))
    running = np.cumsum(sorted_caps)
    offset = np.repeat(running[group_start] - sorted_caps[group_start],
                       np.diff(np.concatenate((group_start, [key.size]))))
    over = order[(running - offset) > INT32_MAX]
    return int(over.min()) if over.size else None
