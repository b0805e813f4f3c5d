from biaslab.cli import main

main()
