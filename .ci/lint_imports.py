"""Check the import contracts of pyproject.toml ([tool.importlinter]) with import-linter.

import-linter (grimp) finds a package's modules by walking its folder, but in a checkout the
``graphcut`` package is spread over three folders (pyproject's ``package-dir``: ``graphcut/``,
``solver/`` as ``graphcut.solver``, ``gui/`` as ``graphcut.gui``). So this copies the Python
files into a temporary folder in the installed layout and runs ``lint-imports`` there.

Usage: ``python .ci/lint_imports.py [--root DIR]`` (DIR: the checkout, default this file's);
exits with lint-imports' status (0: every contract kept).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter depends on tomli there
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def staged_package(root: Path, target: Path) -> Path:
    """Copy ``root``'s Python sources into ``target`` in the installed layout (the package-dir
    mapping of ``root/pyproject.toml``); returns the folder that holds ``graphcut``."""
    config = tomllib.loads((root / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    # parents before children, so that a mapped subpackage lands inside its parent's copy
    for package, folder in sorted(mapping.items(), key=lambda item: item[0].count(".")):
        destination = target.joinpath(*package.split("."))
        shutil.copytree(root / folder, destination, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "_binaries", "*.so"))
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    linter = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) \
        or shutil.which("lint-imports")
    if linter is None:
        print("lint-imports is not installed (pip install import-linter)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="graphcut-imports-") as folder:
        staged = staged_package(root, Path(folder))
        environment = {**os.environ, "PYTHONPATH": str(staged)}
        done = subprocess.run([linter, str(root / "pyproject.toml"), "--no-cache"],
                              cwd=staged, env=environment)
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
