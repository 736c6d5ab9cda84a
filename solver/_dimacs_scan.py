"""Low-level pieces of the DIMACS reader: opening (plain, gzip, bzip2), the chunked NumPy
tokeniser of arc lines and the error type. The format and its rules are described in
:mod:`graphcut.solver.dimacs`."""

from __future__ import annotations

import bz2
import contextlib
import gzip
import re
import warnings
from pathlib import Path

import numpy as np

from .files import open_regular_file
from .networks import INT32_MAX

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


# Users import it from graphcut.solver.dimacs (or graphcut.solver); tracebacks say so too.
DimacsError.__module__ = "graphcut.solver.dimacs"


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
