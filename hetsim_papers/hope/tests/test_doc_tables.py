"""docs/papers/hope.md's result tables come from a run's CSVs: the generator rewrites exactly the
marked blocks, from the numbers in the CSVs."""

from __future__ import annotations

import json

import pandas as pd

from hetsim_papers.hope.experiments.doc_tables import regenerate


def test_generated_blocks_are_rewritten_from_the_run_and_the_rest_is_kept(tmp_path):
    out = tmp_path / "run"
    (out / "hope").mkdir(parents=True)
    (out / "scorecard.json").write_text(json.dumps({"quick": True}))
    pd.DataFrame([{"phone": "HE big+LITTLE", "model": m, "version": v, "HOPE:LP vs StarPU": r}
                  for m, r in (("IN-V3", 12.25), ("SQZ", -1.5)) for v in ("CPU", "StarPU")]
                 ).to_csv(out / "hope" / "fig7.csv", index=False)
    doc = tmp_path / "doc.md"
    doc.write_text("intro\n<!-- generated: fig7 -->\nstale | 1.0\n<!-- /generated -->\nmiddle\n"
                   "<!-- generated: fig5 -->\nkept, no fig5.csv\n<!-- /generated -->\nend\n")
    assert regenerate(out, doc) == ["fig7"]
    text = doc.read_text()
    assert "stale" not in text and "kept, no fig5.csv" in text
    assert text.startswith("intro\n") and "\nmiddle\n" in text and text.endswith("end\n")
    assert "| model | IN-V3 | SQZ | mean |" in text
    assert "| LP vs StarPU, paper | 15.7 | 3.2 | 9.4 |" in text      # the paper's values (paper.py)
    assert "| hetsim | 12.2 | −1.5 | 5.4 |" in text                  # the run's, averaged by the generator
    assert "hetsim reproduce hope --quick" in text
    assert regenerate(out, doc) == ["fig7"] and doc.read_text() == text   # idempotent
