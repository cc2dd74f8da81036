"""Links into a section of a page (``docs/fidelity.md#errors-on-this-machine``), in the docs and in
code comments, cannot go stale: the page exists and has a heading with that anchor (GitHub's rule:
lower case, punctuation dropped, spaces to hyphens)."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = [p for folder in ("docs", "hetsim", "hetsim_papers", "hetsim_host", "platforms", "tests", "benchmarks")
           for p in sorted((REPO / folder).rglob("*")) if p.suffix in (".md", ".py", ".yaml")] + [REPO / "README.md"]
LINK = re.compile(r"([\w./-]*\.md)#([\w-]+)")


def slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text())       # no headings inside code blocks
    return frozenset(slug(m.group(1)) for m in re.finditer(r"(?m)^#+\s+(.*)$", text))


def test_slug_follows_githubs_rule():
    assert slug("The gemm2 model (`hetsim/cost/gemm2.py`, `--cost-model gemm2`)") == \
        "the-gemm2-model-hetsimcostgemm2py---cost-model-gemm2"
    assert slug("Decision: the default ground truth") == "decision-the-default-ground-truth"


def test_every_section_link_resolves():
    bad = []
    for source in SOURCES:
        for m in LINK.finditer(source.read_text(errors="ignore")):
            ref, anchor = m.groups()
            page = next((c for c in (source.parent / ref, REPO / ref, REPO / "docs" / ref) if c.is_file()), None)
            where = source.relative_to(REPO)
            if page is None:
                bad.append(f"{where}: {ref}: no such page")
            elif anchor not in anchors(page.resolve()):
                bad.append(f"{where}: {ref}#{anchor}: no such heading")
    assert not bad, "\n".join(bad)


#: Pages and folders not yet converted to the papers' own references (issue 26 item 9): none left.
DIGEST_EXEMPT: tuple[str, ...] = ()
#: A citation of the paper digests, which live outside the repository: a reader cannot follow it.
DIGEST_CITATION = re.compile(r"digest(?:'s)? (?:§|\\u00a7)|/work" r"/shared/")
CITABLE = [p for p in sorted(REPO.rglob("*"))
           if p.suffix in (".md", ".py", ".yaml", ".ipynb") and p.is_file()
           and not any(part.startswith(".") or part in ("build", "results") for part in p.relative_to(REPO).parts)]


def test_no_digest_citation():
    """Code and docs cite the papers' own sections, equations and tables, or a line of
    docs/papers/<paper>.md for what a paper leaves open, never the digests' numbering."""
    section = "\u00a7"                     # spelled out so that this file does not match itself
    assert DIGEST_CITATION.search(f"the 000 digest {section}8 item 13")
    assert DIGEST_CITATION.search(f"the digest's {section}9") and not DIGEST_CITATION.search("Pipe-search §4.4")
    assert DIGEST_CITATION.search("/work" + "/shared/seeds/000.txt")     # a path of the maintainers' machine
    bad = [f"{p.relative_to(REPO)}:{i}: {line.strip()[:100]}"
           for p in CITABLE if not str(p.relative_to(REPO)).startswith(DIGEST_EXEMPT)
           for i, line in enumerate(p.read_text(errors="ignore").splitlines(), 1) if DIGEST_CITATION.search(line)]
    assert not bad, "cite the paper (e.g. 'Pipe-search §4.4, Alg. 2') or docs/papers/<paper>.md:\n" + "\n".join(bad)
