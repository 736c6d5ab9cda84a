"""MkDocs hook: show mkdocstrings the package as it is installed.

``pyproject.toml`` maps ``graphcut.solver`` to ``solver/`` and ``graphcut.gui`` to ``gui/``
(setuptools ``package-dir``), but mkdocstrings (griffe) reads the source files statically and
looks for ``graphcut/solver/``. Before each build this hook lays out the installed layout as
a copy of the source files in ``build/docs-src/`` (ignored by git), the path ``mkdocs.yml``
gives the Python handler, so the API reference is read from the sources without importing them.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from mkdocs.plugins import event_priority

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
LAYOUT = ROOT / "build" / "docs-src"


def package_dirs(root: Path = ROOT) -> dict[str, Path]:
    """The ``package-dir`` mapping of ``pyproject.toml``: package name -> source folder."""
    with open(root / "pyproject.toml", "rb") as handle:
        config = tomllib.load(handle)
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {name: (root / folder).resolve() for name, folder in mapping.items()}


def lay_out(mapping: dict[str, Path], target: Path) -> None:
    """Copy each package's source folder of ``mapping`` to where its name puts it under
    ``target`` (outer packages first, so a mapped subpackage replaces what was there)."""
    if target.exists():
        shutil.rmtree(target)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "_binaries")
    for name in sorted(mapping, key=lambda n: n.count(".")):
        shutil.copytree(mapping[name], target.joinpath(*name.split(".")), ignore=ignore,
                        dirs_exist_ok=True)


@event_priority(100)  # before mkdocstrings' own on_config makes its loader look at the folder
def on_config(config):
    lay_out(package_dirs(), LAYOUT)
    return config


# Sphinx roles in docstrings (:func:`name`, :class:`name`, ...) become cross-references where
# the reference documents the name (autorefs, optional: no warning where it does not), else code.
_ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):<code>~?([\w.]+)(\(\))?</code>")


def on_page_content(html, **_):
    return _ROLE.sub(lambda m: f'<autoref optional identifier="{m.group(1)}">'
                               f'<code>{m.group(1)}{m.group(2) or ""}</code></autoref>', html)
