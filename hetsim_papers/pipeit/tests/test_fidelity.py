"""The fidelity harnesses of hetsim_papers/pipeit/fidelity and hetsim_papers/pipesearch/fidelity.py
(docs/fidelity.md): their variants name real fields of the boards' gemm2 blocks, and the summary
counts passes and flips from the scorecards the variants write. Nothing here runs a reproduction."""

from __future__ import annotations

import json
import sys

import pytest

from hetsim.platform import load_platform
from hetsim_papers.pipeit.fidelity import scorecard


def _claim(paper: str, id: str, claim: str, passed: bool, cls: str = "prediction") -> dict:
    return {"paper": paper, "id": id, "claim": claim, "class": cls, "pass": passed,
            "paper_value": 1.0, "sim_value": 2.0 if passed else 3.0}


def _write(root, variant: str, paper: str, claims: list[dict]) -> None:
    d = root / variant / paper
    d.mkdir(parents=True)
    (d / "scorecard.json").write_text(json.dumps({"claims": claims}))


def test_the_summary_counts_passes_per_paper_and_every_flip(tmp_path):
    _write(tmp_path, "after", "pipeit", [_claim("pipeit", "fig8", "a", True), _claim("pipeit", "fig8", "b", False),
                                         _claim("pipeit", "fig12", "c", True, "structural")])
    _write(tmp_path, "after", "pipesearch", [_claim("pipesearch", "table6", "d", True)])
    _write(tmp_path, "before", "pipeit", [_claim("pipeit", "fig8", "a", False), _claim("pipeit", "fig8", "b", False),
                                          _claim("pipeit", "fig12", "c", False, "structural")])
    _write(tmp_path, "no-tiles", "pipeit", [_claim("pipeit", "fig8", "a", True), _claim("pipeit", "fig8", "b", True),
                                            _claim("pipeit", "fig12", "c", True, "structural")])
    lines = scorecard.summary(tmp_path).splitlines()
    # the variants in the harness's order, each paper's independent predictions, flips of every class
    assert "| before | 0/2 |  | +0 / -2 |" in lines
    assert "| after | 1/2 | 1/1 |  |" in lines
    assert "| no-tiles | 2/2 |  | +1 / -0 |" in lines
    assert "| pipeit:fig8 | 0/2 | 1/2 |" in lines
    assert "| pipeit:fig12 c | structural | 1 | 3 | 2 | pass |" in lines       # before -> after
    assert "| pipeit:fig8 b | prediction | 1 | 3 | 2 | pass |" in lines       # after -> no-tiles


@pytest.mark.parametrize("module, platform", [("hetsim_papers.pipeit.fidelity.scorecard", "hikey970"),
                                              ("hetsim_papers.pipesearch.fidelity", "jetson-tx2")])
def test_every_variant_overrides_fields_the_board_has(module, platform):
    """A misspelt field would fail only hours into a full run: each variant's overrides load."""
    mod = __import__(module, fromlist=["VARIANTS"])
    for name, v in mod.VARIANTS.items():
        assert v.get("model", "gemm2") in ("roofline", "gemm2"), name
        load_platform(platform, overrides=list(v.get("extra", ())))


def test_the_pipesearch_harness_lists_flips_against_after(tmp_path, monkeypatch, capsys):
    from hetsim_papers.pipesearch import fidelity

    _write(tmp_path, "after", "pipesearch", [_claim("pipesearch", "table6", "d", True),
                                             _claim("pipesearch", "fig4", "e", False)])
    _write(tmp_path, "before", "pipesearch", [_claim("pipesearch", "table6", "d", True),
                                              _claim("pipesearch", "fig4", "e", True)])
    monkeypatch.setattr(sys, "argv", ["fidelity", "--summary", str(tmp_path)])
    fidelity.main()
    out = capsys.readouterr().out.splitlines()
    assert "| before | 2/2 | fig4 e |" in out and "| after | 1/2 | none |" in out
