# The two commands of the README. Both install what is missing first.
.PHONY: run test test-fast setup

run: setup
	.venv/bin/pinbench run

test: setup
	.venv/bin/python -m pytest

# The tests of a few seconds each: no campaign through Snakemake, no SLURM, no browser.
test-fast: setup
	.venv/bin/python -m pytest -m "not slow"

setup:
	@scripts/setup.sh
