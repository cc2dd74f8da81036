"""``python -m hetsim_papers.pim.experiments [--write]``: run the calibration (and rewrite the fitted values
of hetsim_papers/pim/platforms/pim-zynq.yaml with ``--write``)."""

import sys

from hetsim_papers.pim.experiments.calibration import main

sys.exit(main())
