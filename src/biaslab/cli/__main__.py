from biaslab.cli import entry

entry()
