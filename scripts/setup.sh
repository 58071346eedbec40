#!/usr/bin/env bash
# Installs what pinbench needs and is missing, for one part:
#   scripts/setup.sh [run]   a campaign (`make run`): hwloc, gcc with OpenMP, Python with venv,
#                            and the optional clang with libomp, Valgrind, binutils, make
#   scripts/setup.sh test    adds the test suite's tools (`make test`)
# As root with apt it installs the missing Debian packages of the part; otherwise (or with
# PINBENCH_SETUP_NO_INSTALL=1) scripts/requirements.sh names them, for Debian, Fedora, Spack
# and conda-forge, and the set-up goes on without the optional ones. Then the virtual
# environments .venv (pinned Python dependencies, pinbench editable, its C helpers) and
# .venv-extrap (Extra-P).
set -euo pipefail
cd "$(dirname "$0")/.."
part=${1:-run}

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null &&
   [ -z "${PINBENCH_SETUP_NO_INSTALL:-}" ]; then
  packages=$(scripts/requirements.sh --apt "$part")
  if [ -n "$packages" ]; then
    echo "pinbench setup: installing $packages"
    apt-get update -qq
    # shellcheck disable=SC2086  # one word per package
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $packages >/dev/null
  fi
fi
scripts/requirements.sh "$part" || exit 1

if [ ! -x .venv/bin/python ]; then
  echo "pinbench setup: creating .venv"
  python3 -m venv .venv
fi
if [ ! -f .venv/.installed ] || [ requirements.txt -nt .venv/.installed ] ||
   [ pyproject.toml -nt .venv/.installed ] || [ setup.py -nt .venv/.installed ]; then
  echo "pinbench setup: installing Python dependencies (requirements.txt) and pinbench (editable)"
  .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
  # the package pinbench, its pinbench command and the pinbench-* aliases (pyproject.toml)
  .venv/bin/pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
  touch .venv/.installed
fi
# pinbench's C helpers (the launcher, the placement's libraries, the tracers) into
# .venv/lib/pinbench/native/; nothing is built again when nothing changed
.venv/bin/pinbench setup
# Extra-P (the scalability models, pinbench/stats/models.py) in its own environment: its release pins
# numpy < 2 and a GUI toolkit, which the project's .venv must not get. The workflow calls its
# command line, .venv-extrap/bin/extrap; without it a campaign goes on without models.
if [ ! -x .venv-extrap/bin/python ]; then
  echo "pinbench setup: creating .venv-extrap (Extra-P)"
  python3 -m venv .venv-extrap
fi
if [ ! -f .venv-extrap/.installed ] || [ requirements-extrap.txt -nt .venv-extrap/.installed ]; then
  echo "pinbench setup: installing Extra-P (requirements-extrap.txt)"
  if .venv-extrap/bin/pip install -q --disable-pip-version-check -r requirements-extrap.txt; then
    touch .venv-extrap/.installed
  else
    echo "pinbench setup: Extra-P could not be installed (above):" \
      "campaigns go on without scalability models" >&2
  fi
fi
# Older set-ups copied a start-up hook into .venv that replaced Snakemake's config reader;
# pinbench no longer changes Snakemake (`pinbench run` reads a campaign strictly itself).
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -f "$site/pinbench-snakemake.pth"
