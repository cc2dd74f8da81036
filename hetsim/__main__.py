from hetsim.cli import main

main()
