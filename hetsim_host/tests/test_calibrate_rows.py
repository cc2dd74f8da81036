"""The host tool and `hetsim calibrate platform`: its reports as tidy rows, its command in the core
group."""

from __future__ import annotations

import pandas as pd
import pytest

from hetsim.calibrate.table import normalise
from hetsim.cli import main
from hetsim.errors import HetsimError


def test_host_reports_become_tidy_rows():
    from hetsim_host.validate import MappingResult, Report, tidy_rows

    def result(mapping, fps, layers):
        return MappingResult(mapping, fps, [fps], fps, [[0]], layers, layers, "|" not in mapping,
                             load=[1.0], other_cpu=[0.1], layer_measured_p20_s=[x * 0.9 for x in layers],
                             by_cost={"roofline": {"simulated_fps": fps, "layer_simulated_s": layers}})

    r = Report("host", "alexnet", 1.0, 30, 3, [f"l{i}" for i in range(11)],
               [result("C1:1-11", 10.0, [0.01] * 11), result("C1:1-4|C1:5-11", 15.0, [0.011] * 11)])
    t = normalise(pd.DataFrame(tidy_rows(r)), "tidy")
    assert tidy_rows(r.to_dict()) == tidy_rows(r)     # a saved report.json gives the same rows
    assert list(t.kind.value_counts().sort_index().items()) == [("layer", 22), ("network", 1), ("pipeline", 1)]
    later = t[(t.kind == "layer") & (t.stage == 2)]
    assert len(later) == 7 and set(later.layer) == {str(i) for i in range(5, 12)}
    assert t[t.kind == "pipeline"].mapping.iloc[0] == "C1:1-4|C1:5-11"


def test_a_plugin_command_joins_a_core_group(capsys):
    from hetsim.plugins import command_ref

    assert command_ref("calibrate:hetsim_host.commands:calibrate_host") == ("calibrate", "hetsim_host.commands:calibrate_host")
    assert command_ref("hetsim_host.commands:validate") == (None, "hetsim_host.commands:validate")
    with pytest.raises(HetsimError, match="group:module:command"):
        command_ref("a:b:c:d")
    try:
        main(["calibrate", "--help"])
    except SystemExit as e:
        assert e.code == 0
    listed = capsys.readouterr().out
    assert "platform" in listed and "host" in listed    # the core's and the host plugin's
