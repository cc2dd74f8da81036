"""The teaching notebooks, committed with their outputs: run them, and check that what is committed
is what the current code prints.

    python -m hetsim.notebooks                 # execute every notebook, keep its outputs (make notebooks)
    python -m hetsim.notebooks --check         # execute each in a scratch folder and compare (CI)
    python -m hetsim.notebooks hetsim_papers/hope/notebook.ipynb   # one notebook

The notebooks are the repository's ``notebooks/*.ipynb`` and each installed plugin's
``notebook.ipynb`` (one per paper). A notebook runs in a scratch folder (the files it writes stay
out of the repository), top to bottom, in a fresh kernel.

*Current* means two things. Cheap, in every test run: the notebook's metadata
(``hetsim.source_sha256``) holds the hash of its cells' sources when its outputs were made, so a
source edited without re-running is caught (:func:`stale`). Thorough, in the slow tests and
``--check``: the notebook is executed again and its outputs compared with the committed ones
(:func:`normalized`): printed text and tables exactly, a figure as "a figure" (its pixels depend on
the matplotlib version), and a cell tagged ``volatile`` (wall times) only for having an output.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

#: Cells tagged so print what changes from run to run (a wall time): compared for being there only.
VOLATILE = "volatile"
#: Seconds a cell may run.
CELL_TIMEOUT_S = 600
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def notebooks() -> list[Path]:
    """The repository's notebooks (a source checkout) and each installed plugin's."""
    from hetsim.plugins import plugins

    root = Path(__file__).resolve().parent.parent
    found = sorted((root / "notebooks").glob("*.ipynb")) if (root / "notebooks").is_dir() else []
    for p in plugins():
        spec = importlib.util.find_spec(p.package) if p.package else None
        if spec is not None and spec.origin:
            nb = Path(spec.origin).parent / "notebook.ipynb"
            if nb.is_file():
                found.append(nb)
    return found


def source_hash(nb) -> str:
    """The hash of a notebook's cells (type and source, in order)."""
    text = json.dumps([[c.cell_type, c.source] for c in nb.cells])
    return hashlib.sha256(text.encode()).hexdigest()


def _read(path: Path):
    import nbformat

    return nbformat.read(path, as_version=4)


def stale(path: Path) -> str | None:
    """Why the committed outputs of ``path`` are not those of its cells (None: they are): never
    executed, a source changed since, or a code cell without its execution."""
    nb = _read(path)
    recorded = nb.metadata.get("hetsim", {}).get("source_sha256")
    if recorded is None:
        return f"{path}: never executed with its outputs kept (python -m hetsim.notebooks {path})"
    if recorded != source_hash(nb):
        return f"{path}: a cell changed after its outputs were made (python -m hetsim.notebooks {path})"
    missing = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.source.strip()
               and c.get("execution_count") is None]
    if missing:
        return f"{path}: code cell(s) {missing} have no execution (python -m hetsim.notebooks {path})"
    return None


def normalized(nb) -> list[list[Any]]:
    """Per code cell, its outputs as compared: stream text and text/plain exactly (object addresses
    blanked), a figure as ``"<figure>"``, a volatile cell's outputs as ``"<volatile>"``."""
    out: list[list[Any]] = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        if VOLATILE in c.get("metadata", {}).get("tags", []):
            out.append(["<volatile>"] if c.get("outputs") else [])
            continue
        cell: list[Any] = []
        for o in c.get("outputs", []):
            kind = o.get("output_type")
            if kind == "stream":
                cell.append(("stream", o.get("name"), _ADDRESS.sub(" at 0x", o.get("text", ""))))
            elif kind in ("execute_result", "display_data"):
                data = o.get("data", {})
                if "image/png" in data or "image/svg+xml" in data:
                    cell.append("<figure>")
                else:
                    cell.append((kind, _ADDRESS.sub(" at 0x", str(data.get("text/plain", "")))))
            elif kind == "error":
                cell.append(("error", o.get("ename"), o.get("evalue")))
        out.append(cell)
    return out


def execute(path: Path):
    """``path`` executed top to bottom in a scratch folder: the notebook with its outputs and the
    hash of its sources in its metadata (execution timings dropped)."""
    from nbclient import NotebookClient

    nb = _read(path)
    with tempfile.TemporaryDirectory(prefix="hetsim-notebook-") as tmp:
        NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                       resources={"metadata": {"path": tmp}}).execute()
    for c in nb.cells:
        c.get("metadata", {}).pop("execution", None)
    nb.metadata.setdefault("hetsim", {})["source_sha256"] = source_hash(nb)
    nb.metadata.get("language_info", {}).pop("version", None)   # the interpreter's patch level
    return nb


def differences(committed, fresh) -> list[str]:
    """Where a fresh execution's outputs differ from the committed ones (cell numbers 1-based)."""
    a, b = normalized(committed), normalized(fresh)
    if len(a) != len(b):
        return [f"{len(a)} code cells committed, {len(b)} executed"]
    return [f"code cell {i}: committed {x!r:.200} != now {y!r:.200}" for i, (x, y) in enumerate(zip(a, b, strict=True), 1)
            if x != y]


def main(argv: list[str] | None = None) -> int:
    import nbformat

    ap = argparse.ArgumentParser(prog="python -m hetsim.notebooks", description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", type=Path, help="notebooks (default: every one)")
    ap.add_argument("--check", action="store_true", help="execute and compare, do not write")
    args = ap.parse_args(argv)
    paths = args.paths or notebooks()
    bad = 0
    for path in paths:
        committed = _read(path)
        fresh = execute(path)
        errors = [o for c in fresh.cells if c.cell_type == "code" for o in c.get("outputs", [])
                  if o.get("output_type") == "error"]
        if errors:
            print(f"{path}: a cell raised {errors[0].get('ename')}: {errors[0].get('evalue')}", file=sys.stderr)
            bad += 1
            continue
        if args.check:
            diff = differences(committed, fresh) + ([why] if (why := stale(path)) else [])
            for line in diff:
                print(f"{path}: {line}", file=sys.stderr)
            bad += bool(diff)
            print(f"{path}: {'stale' if diff else 'current'}")
        else:
            keep = copy.deepcopy(fresh)
            nbformat.write(keep, path)
            print(f"wrote {path}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
