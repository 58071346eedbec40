# The two commands of the README. Both install what is missing first.
.PHONY: run test setup

run: setup
	.venv/bin/snakemake --cores all
	@echo "pinbench report: $(CURDIR)/results/$$(.venv/bin/python -c 'import yaml; print(yaml.safe_load(open("config/config.yaml"))["campaign"])')/report/index.html"

test: setup
	.venv/bin/python -m pytest

setup:
	@scripts/setup.sh
