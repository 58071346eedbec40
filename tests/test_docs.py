"""The documentation: the MkDocs site builds without a warning, and every relative link in the
README, the changelog, config/README.md and the docs pages leads to a file (and heading) that
exists."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The Markdown files whose links are checked.
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", ROOT / "config" / "README.md",
         *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.MULTILINE)


def prose(text: str) -> str:
    """The text without code blocks and code spans, where a bracket is no link."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it (MkDocs' toc gives the same for these pages).

    >>> slug("The study's procedure, and ours")
    'the-studys-procedure-and-ours'
    >>> slug("`pinbench run` [and](x.md) more")
    'pinbench-run-and-more'
    """
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "").lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a Markdown file's headings (repeated headings get -1, -2...)."""
    seen: dict[str, int] = {}
    found = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path) -> list[str]:
    """Every relative link of ``page`` whose file or anchor does not exist."""
    broken = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        path = (page.parent / path_part).resolve() if path_part else page
        if not path.exists():
            broken.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in anchors(path):
            broken.append(f"{target}: no heading with anchor #{anchor}")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert page.is_file()
    assert broken_links(page) == []


def test_a_broken_link_and_a_broken_anchor_are_found(tmp_path):
    (tmp_path / "other.md").write_text("# Other page\n\n## A section\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#a-section) [gone](missing.md) [no anchor](other.md#nope)\n"
                    "`[code](missing.md)` [here](#title)\n\n# Title\n")
    assert broken_links(page) == ["missing.md: no such file",
                                  "other.md#nope: no heading with anchor #nope"]


def test_the_readme_is_under_200_lines():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 200


@pytest.mark.slow
def test_the_site_builds_strictly_without_a_warning(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--config-file", str(ROOT / "mkdocs.yml"),
                           "--site-dir", str(tmp_path / "site")],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "WARNING" not in output, output
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "performance" / "index.html").is_file()
