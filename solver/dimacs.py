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

import contextlib
import os
import stat
import zlib
from pathlib import Path

import numpy as np

from ._dimacs_reader import _Chunks, _Reader
from ._dimacs_scan import (COMPRESSED_BYTES_PER_ARC, COMPRESSED_SLACK_BYTES,
                           ISOLATED_VERTEX_ALLOWANCE, DimacsError, _compressor, _open)
from .atomic import create_temporary, publish, sweep_stale_temporaries
from .networks import CSRNetwork, GridNetwork

__all__ = ["COMPRESSED_BYTES_PER_ARC", "COMPRESSED_SLACK_BYTES", "DimacsError",
           "ISOLATED_VERTEX_ALLOWANCE", "read_dimacs", "write_dimacs"]


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
    >>> from graphcut.solver import DimacsError
    >>> try:
    ...     read_dimacs("bad.max")
    ... except DimacsError as error:
    ...     print(error)
    bad.max, line 4: arc head 9 is out of range: expected a vertex id in 1..3
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
    folder = path.parent if str(path.parent) else Path(".")
    sweep_stale_temporaries(folder)
    descriptor, temporary = create_temporary(folder, path)
    try:
        with os.fdopen(descriptor, "wb", closefd=False) as raw:
            with _compressor(raw, path.suffix.lower()) as handle:
                handle.write(("\n".join(header) + "\n").encode("ascii", errors="replace"))
                chunk = 200_000
                for begin in range(0, tails.size, chunk):
                    block = np.stack([tails[begin:begin + chunk].astype(np.int64) + 1,
                                      heads[begin:begin + chunk].astype(np.int64) + 1,
                                      caps[begin:begin + chunk].astype(np.int64)], axis=1)
                    count = block.shape[0]
                    handle.write((("a %d %d %d\n" * count) % tuple(block.ravel().tolist()))
                                 .encode("ascii"))
            raw.flush()
            os.fsync(raw.fileno())
        with contextlib.suppress(FileNotFoundError):  # a replaced file keeps its permissions
            existing = os.lstat(path)
            if stat.S_ISREG(existing.st_mode):
                os.fchmod(descriptor, existing.st_mode & 0o777)
        publish(descriptor, temporary, path)
    except BaseException:
        if temporary is not None:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise
    finally:
        os.close(descriptor)
