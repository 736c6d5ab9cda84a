"""Rule 2 of issue #22 for volumes stored as folders of slices: a FIFO, socket or broken
symbolic link named like a slice (in the volume's folder or its seeds folder) is refused by
name, never skipped (a volume one slice short) and never opened (a FIFO would block)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from graphcut.io import VolumeReadError, read_volume, read_volume_seeds, volume_layout

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs")


def slice_folders(tmp_path, depth=3, size=16):
    """A folder of grey slices with a bright square, and a folder of label-form seed slices."""
    images, seeds = tmp_path / "slices", tmp_path / "seeds"
    images.mkdir(), seeds.mkdir()
    for z in range(depth):
        grey = np.full((size, size), 40, np.uint8)
        grey[4:12, 4:12] = 200
        Image.fromarray(grey).save(images / f"s{z}.png")
        labels = np.zeros((size, size), np.uint8)
        labels[7:9, 7:9] = 1
        labels[0, :] = 2
        Image.fromarray(labels).save(seeds / f"s{z}.png")
    return images, seeds


def plant(kind, path):
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        server.bind(os.fspath(path))
        return server
    else:
        path.symlink_to(path.parent / "missing.png")
    return None


WORDS = {"fifo": r"named pipe \(FIFO\)", "socket": "a socket", "broken": "broken symbolic link"}


@pytest.mark.parametrize("kind", ["fifo", "socket", "broken"])
def test_a_special_file_among_slices_is_refused_by_name(tmp_path, kind):
    images, seeds = slice_folders(tmp_path)
    assert read_volume(images).shape == (3, 16, 16)
    server = plant(kind, images / "s1b.png")
    try:
        for read in (read_volume, volume_layout):
            with pytest.raises(VolumeReadError, match=WORDS[kind]) as caught:
                read(images)
            assert "s1b.png" in str(caught.value)
        os.replace(images / "s1b.png", seeds / "s1b.png")
        with pytest.raises(VolumeReadError, match=WORDS[kind]):
            read_volume_seeds(seeds, (3, 16, 16))
    finally:
        if server is not None:
            server.close()


@pytest.mark.parametrize("where", ["image", "seeds"])
def test_segment_refuses_a_fifo_among_slices_without_hanging(tmp_path, where):
    images, seeds = slice_folders(tmp_path)
    os.mkfifo((images if where == "image" else seeds) / "s9.png")
    done = subprocess.run([sys.executable, "-c", "from graphcut.cli import main; main()",
                           "segment", images, "--seeds", seeds, "-o", tmp_path / "m.tif",
                           "--device", "cpu"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "s9.png" in done.stderr and "named pipe (FIFO)" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "m.tif").exists()


def test_sub_folders_and_other_files_are_not_slices(tmp_path):
    images, _ = slice_folders(tmp_path)
    (images / "thumbs.png").mkdir()
    os.mkfifo(images / "notes.txt")  # not named like an image: not a slice, never opened
    (images / ".hidden.png").write_bytes(b"not an image")
    assert read_volume(images).shape == (3, 16, 16)
