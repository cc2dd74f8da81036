"""calibrate host --from's malformed measurements (issue 29): a file without measurements, nested
100,000 deep, with NaN or a negative time, a misspelt section: each is one line on stderr, exit 2,
nothing written. The files: malformed_measurements/ (written from quick.measurements.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from hetsim.cli import main

HERE = Path(__file__).parent
CORPUS = HERE / "malformed_measurements"
EXPECT = yaml.safe_load((CORPUS / "EXPECT.yaml").read_text())


def write_corpus() -> None:
    """(Re)write the corpus from the saved quick measurements."""
    saved = json.loads((HERE / "data" / "quick.measurements.json").read_text())
    (CORPUS / "01_no_measurements.json").write_text(json.dumps({"fit": saved["fit"]}))
    (CORPUS / "02_nested_100000.json").write_text('{"a":' * 100_000 + "1" + "}" * 100_000)
    for name, change in (("03_time_nan.json", float("nan")), ("04_time_negative.json", -1e-5)):
        bad = json.loads(json.dumps(saved))
        bad["measurements"]["gemm"][0]["time_s"] = change
        (CORPUS / name).write_text(json.dumps(bad))
    bad = json.loads(json.dumps(saved))
    bad["measurements"]["gemms"] = bad["measurements"].pop("gemm")
    (CORPUS / "05_misspelt_section.json").write_text(json.dumps(bad))


@pytest.mark.parametrize("name", sorted(EXPECT))
def test_malformed_measurements(name, tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["calibrate", "host", "--from", str(CORPUS / name), "--out", str(tmp_path / "h.yaml")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetsim: error: ") and "Traceback" not in err, err
    assert EXPECT[name] in lines[0] and name in lines[0]
    assert not list(tmp_path.iterdir())


def test_every_corpus_file_has_an_expectation():
    assert {p.name for p in CORPUS.iterdir()} - {"EXPECT.yaml"} == set(EXPECT)


if __name__ == "__main__":
    write_corpus()
