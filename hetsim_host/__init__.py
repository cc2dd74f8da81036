"""Host calibration: a tool on top of hetsim that measures the machine it runs on and fits a platform
YAML (``hetsim calibrate host``), then checks it against real OS-process pipelines
(``hetsim validate host``). The core only reads the YAML it writes."""

from hetsim.plugins import Plugin

plugin = Plugin(
    "host", "host calibration",
    commands=["calibrate:hetsim_host.commands:calibrate_host", "hetsim_host.commands:validate"],
    order=200,
)
