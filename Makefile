# The two commands of the README. Both install what is missing first.
.PHONY: run test setup

run: setup
	.venv/bin/pinbench run

test: setup
	.venv/bin/python -m pytest

setup:
	@scripts/setup.sh
