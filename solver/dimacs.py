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

Speed: arc lines are tokenised and converted with NumPy over the whole byte buffer at once; only
the few other lines (and the first bad arc line, to word the error) go through Python.
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

from .networks import INT32_MAX, CSRNetwork, GridNetwork

__all__ = ["DimacsError", "read_dimacs", "write_dimacs"]

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
    """Open for binary reading, decompressing by extension (.gz, .bz2, anything else plain)."""
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return gzip.open(path, "rb")
    if suffix == ".bz2":
        return bz2.open(path, "rb")
    return open(path, "rb")


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

    Returns ``(starts, ends, arc_lines, values, ok)``: byte offsets of each line (end exclusive,
    before the LF), the indices of the lines starting with 'a', and for those, (U, V, CAP) as
    written ((L, 3) int64) and whether the line is well formed: 'a', whitespace, then exactly
    three unsigned decimal integers. Values of lines not ok are 0; such lines are re-parsed by
    :func:`_parse_arc_line` to word the error. ``values`` is None when NumPy's text parser did
    not return the expected count (the caller then parses in Python).
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
            return starts, ends, arc_lines, None, ok
        values[ok] = parsed.reshape(-1, 3)
    return starts, ends, arc_lines, values, ok


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


def read_dimacs(path) -> CSRNetwork:
    """Read a DIMACS max-flow file (plain, .gz or .bz2) into a :class:`CSRNetwork`.

    Vertex ids are shifted to 0-based. Raises :class:`DimacsError` (a ValueError) naming the file
    and line for any malformed content (without a line for corrupt compressed data), OSError
    when the file cannot be opened or read.
    """
    path = Path(path)
    compressed = path.suffix.lower() in (".gz", ".bz2")
    with _open(path) as handle:  # a missing or unreadable file raises OSError here
        try:
            data = handle.read()
        except (OSError, EOFError, zlib.error) as error:
            if not compressed:
                raise
            raise DimacsError(path, None, f"not valid {path.suffix.lower()[1:]} data "
                                          f"({error})") from None
    buf = np.frombuffer(data, dtype=np.uint8)
    starts, ends, arc_lines, values, ok = _scan(buf)
    total_lines = starts.size
    is_arc = np.zeros(total_lines, dtype=bool)
    is_arc[arc_lines] = True

    def line_text(index: int) -> bytes:
        return data[starts[index]:ends[index]]

    # Errors are reported in file order: the first bad non-arc line, or an earlier bad arc line.
    header = _Header(path)
    header_error = None
    for index in np.flatnonzero(~is_arc).tolist():
        try:
            header.feed(index + 1, line_text(index))
        except DimacsError as error:
            header_error = error
            break
    limit = header_error.line - 1 if header_error is not None else total_lines
    n, m = header.n, header.m
    p_index = header.p_line - 1 if header.p_line is not None else total_lines
    considered = arc_lines < limit
    if values is None:  # NumPy's parser disagreed with the scan: parse the arcs in Python
        values, ok = _slow_arcs(path, arc_lines[considered], line_text, n, p_index)
        if header_error is not None:
            raise header_error
    bad = ~ok | (arc_lines < p_index)
    if n is not None:
        bad |= ((values[:, :2] < 1) | (values[:, :2] > n)).any(axis=1)
        bad |= values[:, 2] > INT32_MAX
        bad |= np.arange(arc_lines.size) >= m
    bad &= considered
    if bad.any():
        first = int(np.argmax(bad))
        line = int(arc_lines[first])
        if line > p_index and first >= m and ok[first]:
            raise DimacsError(path, line + 1, f"arc line number {m + 1}, but the problem line "
                                              f"(line {header.p_line}) declares M = {m}")
        _parse_arc_line(path, line + 1, line_text(line), n if line > p_index else None)
        # The vectorised scan was stricter than the line parser: parse every arc in Python.
        values, _ = _slow_arcs(path, arc_lines[considered], line_text, n, p_index)
    if header_error is not None:
        raise header_error

    last = max(total_lines, 1)
    if header.p_line is None:
        what = "the file is empty" if not total_lines else "no problem line in the file"
        raise DimacsError(path, last, f"{what}; expected 'p max N M'")
    if arc_lines.size > header.m:  # only reachable after the Python fallback
        raise DimacsError(path, int(arc_lines[header.m]) + 1,
                          f"arc line number {header.m + 1}, but the problem line "
                          f"(line {header.p_line}) declares M = {header.m}")
    if arc_lines.size < header.m:
        raise DimacsError(path, header.p_line, f"the problem line declares M = {header.m} arcs "
                                               f"but the file has {arc_lines.size} arc lines")
    for role, letter in (("source", "s"), ("sink", "t")):
        if getattr(header, role) is None:
            raise DimacsError(path, last, f"no {role} in the file (end of file reached); "
                                          f"expected a line 'n ID {letter}'")
    tails, heads = values[:, 0] - 1, values[:, 1] - 1
    try:
        return CSRNetwork.from_arcs(header.n, header.source - 1, header.sink - 1, tails, heads,
                                    values[:, 2])
    except ValueError:
        line = _first_overflowing_parallel_arc(tails, heads, values[:, 2], header.n)
        u, v = int(tails[line]) + 1, int(heads[line]) + 1
        raise DimacsError(path, int(arc_lines[line]) + 1,
                          f"parallel arcs {u} -> {v} sum past the int32 capacity limit "
                          f"{INT32_MAX} here") from None


def _slow_arcs(path, arc_lines, line_text, n, p_index):
    """Parse the given arc lines one by one in Python, raising at the first bad one. Used only
    where the vectorised scan could not decide."""
    values = np.array([_parse_arc_line(path, i + 1, line_text(i), n if i > p_index else None)
                       for i in arc_lines.tolist()], dtype=np.int64).reshape(-1, 3)
    return values, np.ones(len(values), dtype=bool)


def _first_overflowing_parallel_arc(tails, heads, caps, n) -> int:
    """Index of the arc at which a group of parallel arcs first sums past int32."""
    key = tails * n + heads
    order = np.argsort(key, kind="stable")
    sorted_key, sorted_caps = key[order], caps[order]
    group_start = np.flatnonzero(np.concatenate(([True], sorted_key[1:] != sorted_key[:-1])))
    running = np.cumsum(sorted_caps)
    offset = np.repeat(running[group_start] - sorted_caps[group_start],
                       np.diff(np.concatenate((group_start, [key.size]))))
    over = order[(running - offset) > INT32_MAX]
    return int(over.min())


def write_dimacs(network: CSRNetwork | GridNetwork, path, *, comment: str | None = None) -> None:
    """Write ``network`` as a DIMACS max-flow file (plain, .gz or .bz2 by extension).

    A GridNetwork is written through :meth:`GridNetwork.to_csr` (pixel (y, x) is vertex
    y*W + x + 1 on disk, s = H*W + 1, t = H*W + 2). ``comment`` (may span lines) is written as
    ``c`` lines at the top. The file is written to a temporary name in the same folder and
    renamed into place, so readers never see a partial file.
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
    fd, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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

