# The two commands of the README. Both install what is missing first.
.PHONY: run test setup

run: setup
	.venv/bin/snakemake --cores all
	@echo "pinbench: results in results/$$(.venv/bin/python -c 'import yaml; print(yaml.safe_load(open("config/config.yaml"))["campaign"])')/ (runs.csv, summary.txt)"

test: setup
	.venv/bin/python -m pytest tests

setup:
	@scripts/setup.sh
