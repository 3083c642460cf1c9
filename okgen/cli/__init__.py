"""okgen's command line: a thin click layer, one module per verb (see :mod:`okgen.cli.main`)."""
