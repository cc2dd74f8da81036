"""docs/explorers.md's generated parts: the registry's algorithms with their parameters, so the page
cannot go stale (a test regenerates them and compares), and the measured table of which
algorithm wins where (written by ``benchmarks/explorer_guide.py``).

A generated part sits between ``<!-- begin NAME -->`` and ``<!-- end NAME -->`` lines::

    python -m hetsim.exploration.guide docs/explorers.md      # rewrite the parameter tables in place
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from hetsim.exploration.registry import Algorithm, algorithms
from hetsim.plugins import plugins

PARAMETERS = "parameters"
MEASURED = "measured"


def _value(v) -> str:
    return "–" if v is None else f"`{v!r}`"


def documented(problem: str | None = None, distribution: str = "hetsim") -> list[Algorithm]:
    """The registered algorithms docs/explorers.md covers: those of the plugins ``distribution``
    installs (hetsim's own and its papers'), not a third-party package's or a script's."""
    own = {p.name for p in plugins() if p.distribution == distribution}
    return [a for a in algorithms(problem) if a.plugin in own]


def parameters_markdown() -> str:
    """One table per problem kind: every documented algorithm (:func:`documented`), where it comes
    from, what it optimises, and its parameters with their defaults (those its name fixes in brackets)."""
    out = []
    for kind in ("pipeline", "placement", "hybrid"):
        found = documented(kind)
        if not found:
            continue
        out.append(f"**{kind} problems** ({len(found)} algorithms)\n")
        out.append("| algorithm | from | objectives | parameters (defaults) |")
        out.append("|---|---|---|---|")
        for a in found:
            params = ", ".join(f"`{k}`={_value(v)}" for k, v in a.parameters().items()) or "none"
            fixed = ", ".join(f"`{k}`={_value(v)}" for k, v in a.fixed)
            if fixed:
                params += f" [fixed by the name: {fixed}]"
            objectives = getattr(a.cls, "supported_objectives", None)
            out.append(f"| `{a.name}` | {a.paper} | {', '.join(objectives) if objectives else 'any'} | "
                       f"{params} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def section(text: str, name: str) -> str:
    """The generated part ``name`` of a page (between its begin/end marker lines)."""
    m = re.search(rf"<!-- begin {name} -->\n(.*?)<!-- end {name} -->", text, re.S)
    if m is None:
        raise ValueError(f"no '<!-- begin {name} -->' ... '<!-- end {name} -->' part")
    return m.group(1)


def replace_section(text: str, name: str, body: str) -> str:
    section(text, name)  # it must exist
    return re.sub(rf"(<!-- begin {name} -->\n).*?(<!-- end {name} -->)",
                  lambda m: m.group(1) + body + m.group(2), text, flags=re.S)


def main(argv: list[str]) -> None:
    path = Path(argv[0] if argv else "docs/explorers.md")
    path.write_text(replace_section(path.read_text(), PARAMETERS, parameters_markdown()))
    print(f"wrote the parameter tables of {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
