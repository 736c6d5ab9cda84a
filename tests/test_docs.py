"""The README and the documentation site hold together: the README is short and its commands
are the ones CI runs, every link points at a file that exists, every page of the site's
navigation exists, and every CLI command has a guide page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_README_LINES = 200
# the guide page of each `graphcut` sub-command (its options are on docs/cli.md, generated)
COMMAND_PAGES = {"segment": "segment.md", "batch": "batch.md", "maxflow": "maxflow.md",
                 "stereo": "stereo.md", "gui": "getting-started.md"}


def _bash_commands(markdown: str) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", markdown, flags=re.S)
    return [line.strip() for block in blocks for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines (at most {MAX_README_LINES})"


def test_ci_runs_the_readme_test_command():
    commands = _bash_commands(README.read_text(encoding="utf-8"))
    test_command = next(c for c in commands if "pytest" in c and "pip install" in c)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    quiet_pip = [line.replace("pip install -q ", "pip install ") for line in ci.splitlines()]
    assert test_command in quiet_pip, f"{test_command!r} is not a line of .ci/run"
    assert "mkdocs build --strict" in ci


def _links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    return [target for target in re.findall(r"\]\(([^)\s]+)\)", text)
            if not re.match(r"[a-z]+:", target) and not target.startswith("#")]


@pytest.mark.parametrize("page", [README] + sorted((ROOT / "docs").rglob("*.md")),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_lead_to_files(page):
    missing = [target for target in _links(page)
               if not (page.parent / target.split("#")[0]).exists()]
    assert not missing, f"{page.relative_to(ROOT)} links to missing files: {missing}"


def test_every_navigation_page_exists():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config.split("\nnav:\n", 1)[1].split("\n\n", 1)[0].split("\nmarkdown_extensions:")[0]
    pages = re.findall(r":\s*(\S+\.md)\s*$", nav, flags=re.M)
    assert len(pages) >= 20
    assert [p for p in pages if not (ROOT / "docs" / p).is_file()] == []


def test_every_cli_command_has_a_guide():
    from graphcut.cli import COMMANDS
    assert set(COMMANDS) == set(COMMAND_PAGES), "a new command needs a guide page here"
    for command, page in COMMAND_PAGES.items():
        text = (ROOT / "docs" / page).read_text(encoding="utf-8")
        assert f"graphcut {command}" in text, f"docs/{page} does not show graphcut {command}"
    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert ":module: graphcut.cli" in reference and ":depth: 1" in reference


REFERENCE_PACKAGES = ("graphcut", "graphcut.solver", "graphcut.segmentation", "graphcut.io",
                      "graphcut.stereo", "graphcut.labeling", "graphcut.batch", "graphcut.models")


def test_every_public_function_and_class_has_an_api_entry():
    import importlib
    pages = "\n".join(p.read_text(encoding="utf-8")
                      for p in sorted((ROOT / "docs" / "reference").glob("*.md")))
    listed = set(re.findall(r"^\s+- (\w+)\s*$", pages, flags=re.M))
    whole_modules = set(re.findall(r"^::: ([\w.]+)\n(?!    options:\n(?:      .*\n)*      members:)",
                                   pages, flags=re.M))
    missing = []
    for name in REFERENCE_PACKAGES:
        package = importlib.import_module(name)
        if name in whole_modules:
            continue
        missing += [f"{name}.{public}" for public in package.__all__
                    if callable(getattr(package, public)) and public not in listed]
    assert not missing, f"no entry in docs/reference/ for {missing}"
