"""The malformed-input corpus of the import commands: each file is one line on stderr, exit 2, and
no file written (run in-process through ``hetsim.cli.main``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hetsim.cli import main

CORPUS = Path(__file__).parent / "malformed"
ONNX = yaml.safe_load((CORPUS / "onnx" / "EXPECT.yaml").read_text())
PROFILES = yaml.safe_load((CORPUS / "profiles" / "EXPECT.yaml").read_text())


def one_line_error(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetsim: error: "), err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("name", sorted(ONNX))
def test_malformed_onnx(name, tmp_path, capsys):
    # --strict: an op type hetsim cannot price is then refused too (by default it is imported as a
    # memory-bound op and listed on stderr: test_onnx_import.py)
    line = one_line_error(["workloads", "import", str(CORPUS / "onnx" / name), "--out",
                           str(tmp_path / "w.yaml"), "--strict"], capsys)
    assert ONNX[name] in line and name in line
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_malformed_profiles(name, tmp_path, capsys):
    case = PROFILES[name]
    argv = ["costs", "import-ort", "--profile", f"C1={CORPUS / 'profiles' / name}",
            "--out", str(tmp_path / "out")]
    if "model" in case:
        argv += ["--model", str(CORPUS / "profiles" / case["model"])]
    line = one_line_error(argv, capsys)
    assert case["expect"] in line and name in line
    assert not list(tmp_path.iterdir())


def test_every_corpus_file_has_an_expectation():
    for sub, expect in (("onnx", ONNX), ("profiles", PROFILES)):
        files = {p.name for p in (CORPUS / sub).iterdir()} - {"EXPECT.yaml", "model.onnx"}
        assert files == set(expect), sub


@pytest.mark.parametrize("argv,fragment", [
    (["workloads", "import", "x.onnx", "--out", "a.yaml", "--name", "b"], "--name 'b' must equal"),
    (["workloads", "import", "missing.onnx", "--out", "a.yaml"], "missing.onnx: no such file"),
    (["workloads", "export", "alexnet", "--out", "a.onnx"], "group 1 of a 2-way conv"),
    (["workloads", "export", "yolov3", "--out", "a.txt"], "ends in .onnx"),
    (["costs", "import-ort", "--profile", "nofile.json", "--out", "d"], "expected DEVICE=VALUE"),
    (["profile", "m.onnx", "--threads", "a,b", "--out", "d"], "--threads 'a,b'"),
])
def test_bad_arguments(argv, fragment, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert fragment in one_line_error(argv, capsys)
    assert not list(tmp_path.iterdir())
