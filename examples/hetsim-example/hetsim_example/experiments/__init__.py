"""The example plugin's experiment (``hetsim reproduce example``): registered under the plugin's
name, in the scorecard's order, as every paper's are (:func:`hetsim.experiment.register_experiments`)."""

from hetsim.experiment import register_experiments
from hetsim_example.experiments import restarts

register_experiments("example", (  # id, title, function
    ("restarts", "Random restarts vs one climb: ResNet50 on rk3588-fanless at sustained clocks",
     restarts.restarts),
))
