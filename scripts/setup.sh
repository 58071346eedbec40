#!/usr/bin/env bash
# Installs what pinbench needs and is missing: Debian packages (when root; otherwise it says
# which to install) and a virtual environment .venv with the pinned Python dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v lstopo-no-graphics >/dev/null || missing+=(hwloc-nox)
command -v gcc >/dev/null || missing+=(gcc)
command -v make >/dev/null || missing+=(make)
command -v pgrep >/dev/null || missing+=(procps)      # the kill-and-resume test looks for orphans
command -v taskset >/dev/null || missing+=(util-linux)
command -v clang >/dev/null || missing+=(clang)
# the cache-line sharing tracers (pintools/): C++ and Fortran test programs, the Valgrind
# tool (Debian's valgrind ships the tool headers and static core libraries it builds against)
command -v g++ >/dev/null || missing+=(g++)
command -v gfortran >/dev/null || missing+=(gfortran)
command -v valgrind >/dev/null || missing+=(valgrind)
command -v cmake >/dev/null || missing+=(cmake)     # the tsan tracer's CMake recipe is tested
# clang's OpenMP runtime (libomp): a tiny OpenMP program must link
if command -v clang >/dev/null &&
   ! printf 'int main(void){\n#pragma omp parallel\n;return 0;}\n' |
     clang -fopenmp -x c - -o /dev/null 2>/dev/null; then
  missing+=(libomp-dev)
elif ! command -v clang >/dev/null; then
  missing+=(libomp-dev)
fi
python3 -m venv --help >/dev/null 2>&1 || missing+=(python3-venv)
command -v likwid-pin >/dev/null || missing+=(likwid)  # likwid-pin expressions are checked against it
[ -x /usr/bin/chromium ] || missing+=(chromium)   # the report test opens the report in it
# the SLURM test starts a one-host cluster (slurmctld, slurmd, munged) of its own
command -v slurmctld >/dev/null && command -v slurmd >/dev/null || missing+=(slurm-wlm)
command -v munged >/dev/null || missing+=(munge)

if ((${#missing[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "pinbench setup: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "pinbench setup: please install these Debian packages first: ${missing[*]}" >&2
    echo "  sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

if [ ! -x .venv/bin/python ]; then
  echo "pinbench setup: creating .venv"
  python3 -m venv .venv
fi
if [ ! -f .venv/.installed ] || [ requirements.txt -nt .venv/.installed ] ||
   [ pyproject.toml -nt .venv/.installed ]; then
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
  .venv-extrap/bin/pip install -q --disable-pip-version-check -r requirements-extrap.txt
  touch .venv-extrap/.installed
fi
# Older set-ups copied a start-up hook into .venv that replaced Snakemake's config reader;
# pinbench no longer changes Snakemake (`pinbench run` reads a campaign strictly itself).
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
rm -f "$site/pinbench-snakemake.pth"
