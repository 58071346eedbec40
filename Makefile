# The two commands of the README. Both install what is missing first: `make run` what a
# campaign needs, `make test` also the test suite's tools (scripts/setup.sh).
.PHONY: run test test-fast setup setup-test

run: setup
	.venv/bin/pinbench run

test: setup-test
	.venv/bin/python -m pytest

# The tests of a few seconds each: no campaign through Snakemake, no SLURM, no browser.
test-fast: setup-test
	.venv/bin/python -m pytest -m "not slow"

setup:
	@scripts/setup.sh run

setup-test:
	@scripts/setup.sh test
