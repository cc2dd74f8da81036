"""The fidelity harness of hetsim_papers/pipesearch/fidelity.py (docs/fidelity.md): its variants
name real fields of the TX2's gemm2 blocks, and the summary lists flips against 'after'. Nothing
here runs a reproduction."""

from __future__ import annotations

import json
import sys

from hetsim.platform import load_platform
from hetsim_papers.pipesearch import fidelity


def _claim(paper: str, id: str, claim: str, passed: bool, cls: str = "prediction") -> dict:
    return {"paper": paper, "id": id, "claim": claim, "class": cls, "pass": passed,
            "paper_value": 1.0, "sim_value": 2.0 if passed else 3.0}


def _write(root, variant: str, paper: str, claims: list[dict]) -> None:
    d = root / variant / paper
    d.mkdir(parents=True)
    (d / "scorecard.json").write_text(json.dumps({"claims": claims}))


def test_every_variant_overrides_fields_the_board_has():
    """A misspelt field would fail only hours into a full run: each variant's overrides load."""
    for name, v in fidelity.VARIANTS.items():
        assert v.get("model", "gemm2") in ("roofline", "gemm2"), name
        load_platform("jetson-tx2", overrides=list(v.get("extra", ())))


def test_the_pipesearch_harness_lists_flips_against_after(tmp_path, monkeypatch, capsys):
    _write(tmp_path, "after", "pipesearch", [_claim("pipesearch", "table6", "d", True),
                                             _claim("pipesearch", "fig4", "e", False)])
    _write(tmp_path, "before", "pipesearch", [_claim("pipesearch", "table6", "d", True),
                                              _claim("pipesearch", "fig4", "e", True)])
    monkeypatch.setattr(sys, "argv", ["fidelity", "--summary", str(tmp_path)])
    fidelity.main()
    out = capsys.readouterr().out.splitlines()
    assert "| before | 2/2 | fig4 e |" in out and "| after | 1/2 | none |" in out
