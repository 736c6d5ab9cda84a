"""Reading and writing the DIMACS maximum-flow format.

The format, one item per line (1-based vertex ids on disk, 0-based in :class:`CSRNetwork`)::

    c any comment
    p max N M        problem line: N vertices, M arc lines; exactly one, before any n or a line
    n ID s           the source
    n ID t           the sink
    a U V CAP        an arc U -> V with integer capacity 0 <= CAP <= 2**31 - 1

Files may be plain, gzip (``.gz``) or bzip2 (``.bz2``) compressed, chosen by the extension, with
LF or CRLF line ends. Blank lines are ignored; every other line starts in column 1 with its
type letter. ``n`` lines may appear anywhere after the problem line. Parallel arcs are summed,
self-loops and zero-capacity arcs dropped (see :meth:`CSRNetwork.from_arcs`).

Strictness: the number of arc lines must equal the M of the problem line. A mismatch is an error,
because a truncated or concatenated file would otherwise give a plausible but wrong flow.
Every malformed file raises :class:`DimacsError` naming the file, the 1-based line number and
what was expected.

Speed: arc lines are tokenised and converted with NumPy a chunk at a time (1 MiB of text);
only the few other lines (and the first bad arc line, to word the error) go through Python.

Memory is bounded by what the file really holds, not by what it declares:

- the text is parsed in chunks of 1 MiB, so comment lines cost nothing however many there are
  (a comment line may be of any length; every other line is limited to 1 MiB);
- arcs are stored (12 bytes each) as they arrive, so a problem line declaring 10**12 arcs in a
  file of 40 bytes allocates nothing; before the store grows, and before the network is built,
  the memory needed is checked against what is available (:mod:`.memory`), and
  :class:`~.memory.HostMemoryError` (a MemoryError) is raised instead of running out;
- the vertex count is checked at the problem line: N may exceed what the arcs can touch
  (2 M + 2 vertices) by at most :data:`ISOLATED_VERTEX_ALLOWANCE`, since every vertex costs
  memory and a vertex no arc touches cannot carry flow;
- compressed files may decompress to at most :data:`COMPRESSED_SLACK_BYTES` plus
  :data:`COMPRESSED_BYTES_PER_ARC` per declared arc (a decompression bomb is refused as soon as
  it passes that);
- only regular files are read: a FIFO, ``/dev/zero`` or another device is refused at once.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import os
import re
import tempfile
import warnings
import zlib
from pathlib import Path

import numpy as np

from .files import open_regular_file, temporary_prefix
from .memory import HostMemoryError, format_bytes, require_host_memory
from .networks import INT32_MAX, CSRNetwork, GridNetwork, csr_build_bytes

__all__ = ["COMPRESSED_BYTES_PER_ARC", "COMPRESSED_SLACK_BYTES", "DimacsError",
           "ISOLATED_VERTEX_ALLOWANCE", "read_dimacs", "write_dimacs"]

# Bytes of text parsed at a time, and the longest line other than a comment.
CHUNK_BYTES = 1 << 20
MAX_LINE_BYTES = 1 << 20
# A compressed file may decompress to this many bytes plus this many per declared arc line
# (an arc line of three 10-digit numbers takes 35; the rest is room for whitespace, comments
# and the header).
COMPRESSED_SLACK_BYTES = 16 << 20
COMPRESSED_BYTES_PER_ARC = 128
# Vertices allowed beyond the 2 M + 2 that M arcs (and s, t) can touch.
ISOLATED_VERTEX_ALLOWANCE = 1 << 20
# Bytes per arc of the store that collects the arcs while the file is read (3 x int32).
_STORE_BYTES_PER_ARC = 12

_WHITESPACE = b" \t\r\x0b\x0c"
_INTEGER = re.compile(rb"-?[0-9]+\Z")
_MAX_DIGITS = 18  # tokens longer than this may not fit int64; the Python path words the error


class DimacsError(ValueError):
    """A malformed DIMACS file. ``path`` and ``line`` (1-based, or None) say where."""

    def __init__(self, path, line: int | None, reason: str):
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {reason}")


def _open(path: Path):
    """Open a regular file for binary reading, decompressing by extension (.gz, .bz2, anything
    else plain); returns ``(handle, compressed)``. Refuses FIFOs, devices and folders."""
    raw, _ = open_regular_file(path)
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    if suffix == ".bz2":
        return bz2.BZ2File(raw, "rb"), raw
    return raw, None


def _compressor(raw, suffix: str):
    """A writer over the open binary file ``raw``, compressing by ``suffix``. gzip output has no
    time stamp or file name in its header, so equal networks give equal bytes."""
    if suffix == ".gz":
        return gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=6, mtime=0)
    if suffix == ".bz2":
        return bz2.BZ2File(raw, "wb")
    return contextlib.nullcontext(raw)


def _show(line: bytes, limit: int = 60) -> str:
    text = line.decode("ascii", errors="replace").rstrip("\r")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _integer(path, lineno: int, field: bytes, name: str, line: bytes) -> int:
    if not _INTEGER.match(field):
        raise DimacsError(path, lineno, f"expected an integer for {name}, got "
                                        f"{_show(field)} in {_show(line)}")
    digits = len(field.lstrip(b"-").lstrip(b"0"))
    if digits > 30:  # no count or id comes near; int() would refuse above 4300 digits
        raise DimacsError(path, lineno, f"{name} is a number of {digits} digits "
                                        f"({_show(field, 20)}), far out of range")
    return int(field)


def _parse_arc_line(path, lineno: int, line: bytes, n: int | None) -> tuple[int, int, int]:
    """One arc line with full checks; returns 1-based (u, v, cap) or raises DimacsError."""
    if n is None:
        raise DimacsError(path, lineno, "arc line before the problem line; expected "
                                        "'p max N M' first")
    fields = line.split()
    if fields[0] != b"a" or len(fields) != 4:
        raise DimacsError(path, lineno, f"expected an arc line 'a U V CAP' (3 integers after "
                                        f"'a'), got {_show(line)}")
    u = _integer(path, lineno, fields[1], "the tail U", line)
    v = _integer(path, lineno, fields[2], "the head V", line)
    cap = _integer(path, lineno, fields[3], "the capacity CAP", line)
    for name, vertex in (("tail", u), ("head", v)):
        if not 1 <= vertex <= n:
            raise DimacsError(path, lineno, f"arc {name} {vertex} is out of range: expected a "
                                            f"vertex id in 1..{n}")
    if cap < 0:
        raise DimacsError(path, lineno, f"negative capacity {cap}; capacities must be >= 0")
    if cap > INT32_MAX:
        raise DimacsError(path, lineno, f"capacity {cap} is above the int32 limit {INT32_MAX}")
    return u, v, cap


# Byte classes for the vectorised scan.
_OTHER, _DIGIT, _SPACE, _NEWLINE = 0, 1, 2, 3
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[np.frombuffer(b"0123456789", dtype=np.uint8)] = _DIGIT
_CLASS[np.frombuffer(_WHITESPACE, dtype=np.uint8)] = _SPACE
_CLASS[ord("\n")] = _NEWLINE


def _scan(buf: np.ndarray):
    """Split ``buf`` into lines and parse every well-formed arc line at once.

    Returns ``(starts, ends, arc_lines, values, ok, other_lines)``: byte offsets of each line
    (end exclusive, before the LF), the indices of the lines starting with 'a', and for those,
    (U, V, CAP) as written ((L, 3) int64) and whether the line is well formed: 'a', whitespace,
    then exactly three unsigned decimal integers. Values of lines not ok are 0; such lines are
    re-parsed by :func:`_parse_arc_line` to word the error. ``values`` is None when NumPy's
    text parser did not return the expected count (the caller then parses in Python).
    ``other_lines`` are the indices of the lines that are neither arc lines, comments nor
    blank: the few that :class:`_Header` reads in Python.
    """
    classes = _CLASS[buf]
    starts = np.flatnonzero(classes == _NEWLINE) + 1
    ends = np.append(starts - 1, buf.size)
    starts = np.insert(starts, 0, 0)
    if starts[-1] == buf.size:  # nothing after the final LF
        starts, ends = starts[:-1], ends[:-1]
    first = np.zeros(starts.size, dtype=np.uint8)
    nonempty = ends > starts
    first[nonempty] = buf[starts[nonempty]]
    arc_lines = np.flatnonzero(first == ord("a"))
    # Lines that need Python: not arcs, not comments, and holding something besides whitespace.
    candidates = np.flatnonzero(nonempty & (first != ord("a")) & (first != ord("c")))
    if candidates.size:
        filled = np.zeros(buf.size + 1, dtype=np.int32)
        np.cumsum((classes != _SPACE) & (classes != _NEWLINE), out=filled[1:])
        candidates = candidates[filled[ends[candidates]] > filled[starts[candidates]]]
        del filled
    other_lines = candidates
    if not arc_lines.size:
        return (starts, ends, arc_lines, np.zeros((0, 3), dtype=np.int64),
                np.zeros(0, dtype=bool), other_lines)
    arc_starts, arc_ends = starts[arc_lines], ends[arc_lines]

    digit = classes == _DIGIT
    token_start = digit.copy()
    token_start[1:] &= ~digit[:-1]
    token_starts = np.flatnonzero(token_start)
    del digit, token_start
    tokens_per_line = (np.searchsorted(token_starts, arc_ends)
                       - np.searchsorted(token_starts, arc_starts))
    ok = tokens_per_line == 3
    after_a = np.minimum(arc_starts + 1, max(buf.size - 1, 0))
    ok &= (arc_starts + 1 < arc_ends) & (classes[after_a] == _SPACE)
    other = classes == _OTHER
    other[arc_starts] = False  # the 'a' itself
    stray = np.flatnonzero(other)  # in arc lines: signs, letters, dots...; elsewhere: anything
    del other
    if stray.size:
        line_of_stray = np.searchsorted(arc_starts, stray, side="right") - 1
        inside = line_of_stray >= 0
        inside[inside] = stray[inside] < arc_ends[line_of_stray[inside]]
        ok[line_of_stray[inside]] = False

    values = np.zeros((arc_lines.size, 3), dtype=np.int64)
    if ok.any():
        # Blank everything but the good arc lines (and their 'a'), then let NumPy's C parser
        # read the integers. Too-long integers saturate at the int64 limit and fail the range
        # checks later.
        keep_line = np.zeros(starts.size, dtype=bool)
        keep_line[arc_lines[ok]] = True
        keep = np.repeat(keep_line, np.diff(np.append(starts, buf.size)))
        keep[arc_starts] = False  # the 'a'
        text = np.where(keep, buf, np.uint8(ord(" ")))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parsed = np.fromstring(text.tobytes(), dtype=np.int64, sep=" ")
        if parsed.size != 3 * int(ok.sum()):
            return starts, ends, arc_lines, None, ok, other_lines
        values[ok] = parsed.reshape(-1, 3)
    return starts, ends, arc_lines, values, ok, other_lines


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


def read_dimacs(path) -> CSRNetwork:
    """Read a DIMACS max-flow file (plain, .gz or .bz2) into a :class:`CSRNetwork`.

    Vertex ids are shifted to 0-based. Memory stays bounded by the file's real content (module
    docstring).

    Raises
    ------
    DimacsError
        (a ValueError) malformed content, naming the file and line (without a
        line for corrupt compressed data); also a compressed file that decompresses to far
        more than its declared arcs need, and a vertex count far beyond what its arcs touch.
    HostMemoryError
        (a MemoryError) the network would not fit in the memory available;
        raised before it is allocated, with ``line`` (the line being read).
    OSError
        the file cannot be opened or read; ``NotARegularFileError`` for a FIFO,
        device or folder.

    Examples
    --------
    >>> from pathlib import Path
    >>> from graphcut.solver import min_cut, read_dimacs
    >>> lines = ["c a path s -> 2 -> t", "p max 3 2", "n 1 s", "n 3 t",
    ...          "a 1 2 4", "a 2 3 3"]
    >>> _ = Path("tiny.max").write_text("\\n".join(lines) + "\\n")
    >>> network = read_dimacs("tiny.max")      # vertex ids become 0-based
    >>> network.num_vertices, network.source, network.sink, network.num_arcs
    (3, 0, 2, 2)
    >>> min_cut(network, device="cpu").flow
    3

    A malformed file names the file and the line:

    >>> _ = Path("bad.max").write_text("p max 3 1\\nn 1 s\\nn 3 t\\na 1 9 4\\n")
    >>> read_dimacs("bad.max")
    Traceback (most recent call last):
        ...
    graphcut.solver.dimacs.DimacsError: bad.max, line 4: ...
    """
    path = Path(path)
    handle, raw = _open(path)
    with contextlib.ExitStack() as stack:
        if raw is not None:
            stack.enter_context(raw)
        stack.enter_context(handle)
        reader = _Reader(path)
        chunks = _Chunks(path, handle, reader.byte_limit if raw is not None else lambda: None)
        try:
            for data, first in chunks:
                reader.feed(data, first)
        except (OSError, EOFError, zlib.error) as error:
            if raw is None:
                raise
            raise DimacsError(path, None, f"not valid {path.suffix.lower()[1:]} data "
                                          f"({error})") from None
        return reader.finish(chunks.lines)


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


def write_dimacs(network: CSRNetwork | GridNetwork, path, *, comment: str | None = None) -> None:
    """Write ``network`` as a DIMACS max-flow file (plain, .gz or .bz2 by extension).

    A GridNetwork is written through :meth:`GridNetwork.to_csr` (pixel (y, x) is vertex
    y*W + x + 1 on disk, s = H*W + 1, t = H*W + 2). ``comment`` (may span lines) is written as
    ``c`` lines at the top. The file is written to a temporary name in the same folder and
    renamed into place, so readers never see a partial file.

    Examples
    --------
    >>> from pathlib import Path
    >>> from graphcut.solver import CSRNetwork, read_dimacs, write_dimacs
    >>> network = CSRNetwork.from_arcs(3, 0, 2, [0, 1], [1, 2], [4, 3])
    >>> write_dimacs(network, "path.max", comment="a path")
    >>> print(Path("path.max").read_text(), end="")
    c a path
    p max 3 2
    n 1 s
    n 3 t
    a 1 2 4
    a 2 3 3
    >>> read_dimacs("path.max").capacities
    array([4, 3], dtype=int32)
    """
    if isinstance(network, GridNetwork):
        network = network.to_csr()
    if not isinstance(network, CSRNetwork):
        raise TypeError(f"write_dimacs expects a CSRNetwork or GridNetwork, got "
                        f"{type(network).__name__}")
    path = Path(path)
    header = []
    if comment is not None:
        header += [f"c {line}".rstrip() for line in str(comment).splitlines()]
    header += [f"p max {network.num_vertices} {network.num_arcs}",
               f"n {network.source + 1} s", f"n {network.sink + 1} t"]
    tails, heads, caps = network.arcs()
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=temporary_prefix(path),
                                     suffix=".tmp")
    os.close(fd)
    temp = Path(temp_name)
    try:
        with open(temp, "wb") as raw, _compressor(raw, path.suffix.lower()) as handle:
            handle.write(("\n".join(header) + "\n").encode("ascii", errors="replace"))
            chunk = 200_000
            for begin in range(0, tails.size, chunk):
                block = np.stack([tails[begin:begin + chunk].astype(np.int64) + 1,
                                  heads[begin:begin + chunk].astype(np.int64) + 1,
                                  caps[begin:begin + chunk].astype(np.int64)], axis=1)
                count = block.shape[0]
                handle.write((("a %d %d %d\n" * count) % tuple(block.ravel().tolist()))
                             .encode("ascii"))
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        os.chmod(temp, mode)  # mkstemp creates 0600; match an ordinary new file instead
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise

