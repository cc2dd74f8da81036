"""``python -m hetsim.experiments.pim [--write]``: run the calibration (and rewrite the fitted values
of platforms/pim-zynq.yaml with ``--write``)."""

import sys

from hetsim.experiments.pim.calibration import main

sys.exit(main())
