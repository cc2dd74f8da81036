from hetsim.cli import entry

entry()
