"""The jobs of a batch: which images, which seed files, where the outputs go."""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from ..io import IMAGE_SUFFIXES, VOLUME_SUFFIXES, is_volume, segments_as_volume
from ._records import OVERLAY_FOLDER, display


@dataclass(frozen=True)
class Job:
    """One image of a batch and where its outputs go.

    ``seeds`` is None when the image has no seed file; ``problem`` says why the image cannot
    be done at all (a symbolic link loop, a FIFO, ...), None when it can.
    """

    image: Path
    seeds: Path | None
    mask: Path
    overlay: Path | None = None
    problem: str | None = None


def entry_problem(path: Path) -> str | None:
    """Why ``path`` is not a regular file that can be opened (None when it is one).

    Symbolic links are followed; a loop, a dangling link, a folder, a FIFO, a socket or a
    device each get their own words."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symbolic link loop (it never reaches a file)"
        if error.errno == errno.ENOENT and os.path.islink(path):
            return f"a broken symbolic link (its target {display(os.readlink(path))!r} " \
                   "does not exist)"
        return f"cannot be examined: {error.strerror}"
    if stat.S_ISREG(mode):
        return None
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    kind = next((name for test, name in kinds if test(mode)), "a special file")
    return f"{kind}, not a regular file"


def _same_folder(a: Path, b: Path) -> bool:
    return a.exists() and b.exists() and os.path.samefile(a, b)


def check_folders(images_dir: Path, seeds_dir: Path, out_dir: Path) -> None:
    """Raise when a folder is missing or the output folder is an input folder.

    Raises
    ------
    NotADirectoryError
        ``images_dir`` or ``seeds_dir`` is not a folder.
    ValueError
        ``out_dir`` is ``images_dir`` or ``seeds_dir`` (masks named <stem>.png
        could replace inputs), or ``seeds_dir`` is ``images_dir``.
    """
    for name, folder in (("images", images_dir), ("seeds", seeds_dir)):
        if not folder.is_dir():
            raise NotADirectoryError(f"the {name} folder {display(folder)!r} does not exist "
                                     "or is not a folder")
    if _same_folder(out_dir, images_dir):
        raise ValueError(f"the output folder {display(out_dir)!r} is the images folder; "
                         "masks would overwrite images of the same name: choose another one")
    if _same_folder(out_dir, seeds_dir):
        raise ValueError(f"the output folder {display(out_dir)!r} is the seeds folder; masks "
                         "would overwrite the seed files: choose another one")
    if _same_folder(images_dir, seeds_dir):
        raise ValueError(f"the seeds folder {display(seeds_dir)!r} is the images folder; seed "
                         "files <stem>.png would be taken for images: keep them apart")


def find_jobs(images_dir, seeds_dir, out_dir, *, overlay=False) -> list[Job]:
    """The jobs of a batch, sorted by image name: every entry directly in ``images_dir`` with
    an image suffix (:data:`graphcut.io.IMAGE_SUFFIXES`; hidden names and folders
    ignored), its seed file ``seeds_dir/<stem>.png`` (None when missing) and its outputs in
    ``out_dir``. Entries that are not regular files (symbolic link loops, broken links, FIFOs,
    ...) and seed files of that kind are jobs with a ``problem``, so that the summary lists
    them.

    Raises
    ------
    NotADirectoryError, ValueError
        see :func:`check_folders`.

    Examples
    --------
    >>> from pathlib import Path
    >>> from graphcut.batch import find_jobs
    >>> for name in ("images/b.png", "images/a.jpg", "seeds/a.png"):
    ...     Path(name).parent.mkdir(exist_ok=True)
    ...     Path(name).touch()
    >>> [(job.image.name, job.seeds is not None, job.mask.name)
    ...  for job in find_jobs("images", "seeds", "masks")]
    [('a.jpg', True, 'a.png'), ('b.png', False, 'b.png')]
    """
    images_dir, seeds_dir, out_dir = Path(images_dir), Path(seeds_dir), Path(out_dir)
    check_folders(images_dir, seeds_dir, out_dir)
    jobs = []
    for path in sorted(images_dir.iterdir()):
        if path.name.startswith(".") or path.suffix.lower() not in IMAGE_SUFFIXES + (".npy",):
            continue
        problem = entry_problem(path)
        if problem == "a folder, not a regular file":
            continue
        seeds, suffix = seeds_dir / f"{path.stem}.png", ".png"
        if problem is None and is_volume(path):
            # a volume: seeds <stem>.tif / .tiff / .npy, mask <stem>.tif (a TIFF stack whose
            # seeds are a 2-D <stem>.png is an image: its first page)
            # (lexists: a FIFO or a broken link of that name is a failed job, not "no seeds")
            volume_seeds = next((seeds_dir / f"{path.stem}{s}" for s in VOLUME_SUFFIXES
                                 if os.path.lexists(seeds_dir / f"{path.stem}{s}")), None)
            seeds_problem = None if volume_seeds is None else entry_problem(volume_seeds)
            if seeds_problem is not None:
                seeds, suffix = volume_seeds, ".tif"
            elif segments_as_volume(path, volume_seeds):
                seeds, suffix = volume_seeds or seeds_dir / f"{path.stem}.tif", ".tif"
        if path.suffix.lower() == ".npy" and suffix != ".tif":
            continue
        if problem is None and os.path.lexists(seeds):
            seeds_problem = entry_problem(seeds)
            if seeds_problem is not None:
                problem = f"the seed file {display(seeds)!r} is {seeds_problem}"
        elif problem is not None:
            problem = f"the image {display(path)!r} is {problem}"
        jobs.append(Job(path, seeds if os.path.lexists(seeds) else None,
                        out_dir / f"{path.stem}{suffix}",
                        out_dir / OVERLAY_FOLDER / f"{path.stem}{suffix}" if overlay else None,
                        problem))
    return jobs


def duplicate_stems(jobs) -> set[str]:
    """Stems shared by several images (``a.png`` and ``a.jpg``): their masks would collide."""
    seen, duplicates = set(), set()
    for job in jobs:
        (duplicates if job.image.stem in seen else seen).add(job.image.stem)
    return duplicates
