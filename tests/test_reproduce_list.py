"""`hetsim reproduce --list` says how long each experiment took where it was measured (a paper's
experiments/durations.csv), and totals what is listed ('at least' when some are not measured)."""

from __future__ import annotations

import sys

from hetsim import experiment
from hetsim.cli.reproduce import _duration


def test_durations_are_read_beside_the_experiments(tmp_path, monkeypatch):
    pkg = tmp_path / "fake_paper_exps"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "durations.csv").write_text("id,quick_s,full_s\nfig1,1.5,600\nfig2,0.2,\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(experiment, "papers", lambda: {"fake": "fake_paper_exps"})
    assert experiment.expected_durations("fake") == {"fig1": (1.5, 600.0), "fig2": (0.2, None)}
    assert experiment.expected_durations("unknown") == {}
    sys.modules.pop("fake_paper_exps", None)


def test_durations_read_as_people_say_them():
    assert [_duration(s) for s in (None, 0.042, 0.42, 2.46, 12.4, 600, 9000, 4e5)] == \
        ["", "42 ms", "420 ms", "2.5 s", "12 s", "10 min", "2.5 h", "5 days"]
