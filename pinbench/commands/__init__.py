"""The ``pinbench`` command's commands: one module each, holding its parser and what it does.

Each command's module has ``arguments(parser)`` (its options, on a
:class:`pinbench.commands.conventions.Parser`) and ``run(args) -> int`` (its exit status);
:mod:`pinbench.cli` builds the parser of the command asked for, runs it and turns a
:class:`pinbench.errors.PinbenchError` into one line. The library modules keep functions only.

This package imports nothing at start: ``python -m pinbench.measure`` imports
:mod:`pinbench.commands.measure`, and ``pinbench --help`` lists the commands from
:data:`COMMANDS` alone.
"""

#: Every command, in the order ``pinbench --help`` lists them:
#: name -> (its module in this package, its group, one line of help).
COMMANDS = {
    "run": ("campaign", "campaigns", "measure a campaign: build, trace, place, run, analyse, "
            "report"),
    "plan": ("campaign", "campaigns", "compute and print every placement of a campaign, "
             "measure nothing"),
    "report": ("campaign", "campaigns", "build the HTML report again from a campaign's results"),
    "place": ("place", "stage tools", "thread -> PU placements of any strategy for a topology"),
    "trace": ("trace", "stage tools", "trace a program's cache-line sharing into an affinity "
              "matrix"),
    "topology": ("topology", "stage tools", "a machine's tree from hwloc (this one, XML or "
                 "synthetic)"),
    "matrix": ("matrix", "stage tools", "convert an affinity matrix to another tool's layout"),
    "system": ("system", "stage tools", "is this machine quiet and stable enough to measure?"),
    "remeasure": ("remeasure", "stage tools", "measure a campaign's runs again, on purpose"),
    "speeduptest": ("speeduptest", "stage tools", "the Speedup-Test of two samples of times"),
    "analyse": ("analyse", "stage tools", "the statistics of a runs table"),
    "compare": ("compare", "stage tools", "two campaigns' cells compared: a regression gate"),
    "store": ("store", "stage tools", "keep campaigns' results, to compare them later"),
    "setup": ("setup", "installation", "build the C helpers: launcher, placement, tracers"),
}
