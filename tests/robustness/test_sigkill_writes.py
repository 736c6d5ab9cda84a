"""Rule 5 of the hostile-input campaign (issue #22) for SIGKILL: a run killed while it writes
an output leaves no temporary file behind and the previous output intact.

Each case runs ``graphcut`` in a real subprocess that sends itself SIGKILL at a chosen point of
the write (inside ``os.fsync``, after every byte is written, before the file gets its name),
then looks at the output folder.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from graphcut._safety import NAME_MAX, TEMPORARY_NAME
from graphcut.io import read_image
from graphcut.solver.atomic import OUR_TEMPORARY_NAME, temporary_name
from synthetic import disc_image, disc_seeds

pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")

# Run graphcut's CLI with os.fsync of the atomic writer replaced by a SIGKILL of the process.
_KILLED_IN_FSYNC = """
import os, signal, sys
import graphcut.solver.atomic as temporary
import graphcut.io._writing as writing
if {named}:
    temporary._O_TMPFILE = 0  # as on a system without O_TMPFILE: a named temporary file
def fsync_then_killed(descriptor):
    os.kill(os.getpid(), signal.SIGKILL)
writing.os = type(sys)("os_stand_in")
writing.os.__dict__.update(os.__dict__)
writing.os.fsync = fsync_then_killed
from graphcut.cli import main
sys.argv = ["graphcut", *{args!r}]
main()
"""


def killed_in_fsync(*args, named=False) -> subprocess.CompletedProcess:
    script = _KILLED_IN_FSYNC.format(named=named, args=[os.fspath(a) for a in args])
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)


def run_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from graphcut.cli import main; main()",
                           *map(os.fspath, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def pair(tmp_path):
    inputs = tmp_path / "in"
    inputs.mkdir()
    Image.fromarray(disc_image()).save(inputs / "img.png")
    Image.fromarray(disc_seeds()).save(inputs / "img_seeds.png")
    return inputs / "img.png", inputs / "img_seeds.png"


def segment_args(pair, mask, *extra):
    image, seeds = pair
    return ("segment", image, "--seeds", seeds, "-o", mask, "--device", "cpu", *extra)


@pytest.mark.parametrize("overwrite", [False, True])
def test_sigkill_while_segment_writes_leaves_nothing_behind(tmp_path, pair, overwrite):
    out = tmp_path / "out"
    out.mkdir()
    mask = out / "mask.png"
    if overwrite:
        mask.write_bytes(b"previous mask")
    done = killed_in_fsync(*segment_args(pair, mask, "--overwrite"))
    assert done.returncode == -signal.SIGKILL, done.stderr  # killed mid-write, for real
    assert os.listdir(out) == (["mask.png"] if overwrite else [])
    if overwrite:
        assert mask.read_bytes() == b"previous mask"


def test_without_o_tmpfile_a_killed_run_leaves_a_temporary_file_the_next_run_removes(
        tmp_path, pair):
    out = tmp_path / "out"
    out.mkdir()
    mask = out / "mask.png"
    mask.write_bytes(b"previous mask")
    done = killed_in_fsync(*segment_args(pair, mask, "--overwrite"), named=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    left = [name for name in os.listdir(out) if name != "mask.png"]
    assert len(left) == 1 and OUR_TEMPORARY_NAME.match(left[0]), left  # what SIGKILL can do
    assert TEMPORARY_NAME.match(left[0])  # batch's clean-up after Ctrl-C knows it too
    # Things of that name that are not our regular files are left alone by the sweep.
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    link = out / temporary_name("link.png")
    link.symlink_to(outside)
    fifo = out / temporary_name("fifo.png")
    os.mkfifo(fifo)
    other = out / ".mask.png.abcdefgh.tmp"  # another program's pattern: not ours
    other.write_text("someone else's")
    done = run_cli(*segment_args(pair, out / "second.png"))
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(out)) == sorted(["mask.png", "second.png", link.name, fifo.name,
                                              other.name])
    assert mask.read_bytes() == b"previous mask"
    assert outside.read_text() == "not ours" and other.read_text() == "someone else's"
    assert set(np.unique(read_image(out / "second.png"))) == {0, 255}


def test_the_sweep_leaves_a_temporary_file_newer_than_the_run(tmp_path):
    script = textwrap.dedent(f"""
        import os, time
        from pathlib import Path
        from graphcut.io import atomic_write
        from graphcut.solver.atomic import temporary_name
        folder = Path({os.fspath(tmp_path)!r})
        time.sleep(0.05)
        fresh = folder / temporary_name("busy.png")  # another writer's, started after us
        fresh.write_bytes(b"being written")
        atomic_write(folder / "out.bin", lambda handle: handle.write(b"x"))
        print(fresh.name)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path)) == sorted(["out.bin", done.stdout.strip()])


@pytest.mark.parametrize("named", [False, True])
def test_outputs_at_the_name_limit_are_replaced_with_and_without_o_tmpfile(tmp_path, pair,
                                                                           named):
    out = tmp_path / "out"
    out.mkdir()
    mask = out / ("m" * (NAME_MAX - 4) + ".png")
    mask.write_bytes(b"old")
    script = textwrap.dedent(f"""
        import graphcut.solver.atomic as temporary
        temporary._O_TMPFILE = 0 if {named} else temporary._O_TMPFILE
        from graphcut.cli import main
        main()
    """)
    done = subprocess.run([sys.executable, "-c", script,
                           *map(os.fspath, segment_args(pair, mask, "--overwrite"))],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert os.listdir(out) == [mask.name]
    assert set(np.unique(read_image(mask))) == {0, 255}
    assert len(os.fsencode(temporary_name(mask))) <= NAME_MAX


def test_a_symlink_planted_as_the_output_is_replaced_not_followed(tmp_path, pair):
    outside = tmp_path / "outside.png"
    outside.write_bytes(b"outside the outputs")
    out = tmp_path / "out"
    out.mkdir()
    (out / "mask.png").symlink_to(outside)
    done = run_cli(*segment_args(pair, out / "mask.png", "--overwrite"))
    assert done.returncode == 0, done.stderr
    assert outside.read_bytes() == b"outside the outputs"
    assert not (out / "mask.png").is_symlink() and os.listdir(out) == ["mask.png"]


def test_new_outputs_get_the_permissions_of_a_plain_open(tmp_path):
    from graphcut.io import atomic_write
    umask = os.umask(0o027)
    try:
        atomic_write(tmp_path / "a.bin", lambda handle: handle.write(b"1"))
    finally:
        os.umask(umask)
    assert (tmp_path / "a.bin").stat().st_mode & 0o777 == 0o640
    assert Path(tmp_path / "a.bin").read_bytes() == b"1"


def test_the_sweep_leaves_a_temporary_file_a_live_writer_holds(tmp_path):
    """A writer that started before the sweeping run (so its file is older than that run)
    but is still writing keeps its file: it holds a lock the sweep respects."""
    writer = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, sys
        import graphcut.solver.atomic as temporary
        temporary._O_TMPFILE = 0
        descriptor, name = temporary.create_temporary({os.fspath(tmp_path)!r}, "slow.png")
        os.write(descriptor, b"half")
        print(os.path.basename(name), flush=True)
        sys.stdin.readline()  # still writing until told to stop (then exits, as if killed)
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        busy = writer.stdout.readline().strip()
        assert OUR_TEMPORARY_NAME.match(busy)
        write_once = ("from graphcut.io import atomic_write; import sys; "
                      "atomic_write(sys.argv[1], lambda handle: handle.write(b'x'))")
        done = subprocess.run([sys.executable, "-c", write_once, tmp_path / "first.bin"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert sorted(os.listdir(tmp_path)) == sorted([busy, "first.bin"])
    finally:
        writer.communicate("\n", timeout=60)
    done = subprocess.run([sys.executable, "-c", write_once, tmp_path / "second.bin"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path)) == ["first.bin", "second.bin"]  # its writer is gone


@pytest.mark.parametrize("overwrite", [False, True])
def test_sigkill_while_writing_a_dimacs_file_leaves_nothing_behind(tmp_path, overwrite):
    """write_dimacs (solver package) uses the same anonymous temporary file: killed inside its
    fsync, the folder holds the previous file (intact) or nothing."""
    target = tmp_path / "net.max"
    if overwrite:
        target.write_bytes(b"previous network")
    script = textwrap.dedent(f"""
        import os, signal, sys
        import numpy as np
        import graphcut.solver.dimacs as dimacs
        from graphcut.solver import CSRNetwork
        def fsync_then_killed(descriptor):
            os.kill(os.getpid(), signal.SIGKILL)
        dimacs.os = type(sys)("os_stand_in")
        dimacs.os.__dict__.update(os.__dict__)
        dimacs.os.fsync = fsync_then_killed
        network = CSRNetwork.from_arcs(4, 0, 3, np.array([0, 1, 2]), np.array([1, 2, 3]),
                                       np.array([5, 4, 3]))
        dimacs.write_dimacs(network, {os.fspath(target)!r})
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr  # killed mid-write, for real
    expected = ["net.max"] if overwrite else []
    assert sorted(p.name for p in tmp_path.iterdir()) == expected
    if overwrite:
        assert target.read_bytes() == b"previous network"
