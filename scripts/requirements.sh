#!/usr/bin/env bash
# What pinbench needs from the system and this machine lacks, for one part of the set-up:
#   scripts/requirements.sh [run|test]   run: a campaign (`make run`); test: adds the tools of
#                                        the test suite (`make test`)
#   scripts/requirements.sh --apt PART   only the Debian packages of what is missing, on one line
# It names each missing tool in one line with what it enables, then the packages to install on
# Debian/Ubuntu, Fedora/RHEL, Spack and conda-forge. It installs nothing (scripts/setup.sh does,
# as root with apt) and exits 1 only when a campaign cannot run at all: without hwloc, without a
# gcc that links OpenMP programs, or without Python >= 3.11 and its venv module.
set -euo pipefail

usage="usage: scripts/requirements.sh [--apt] [run|test]"
apt_only=0
if [ "${1:-}" = --apt ]; then apt_only=1; shift; fi
part=${1:-run}
case $part in run | test) ;; *) echo "$usage" >&2; exit 2 ;; esac

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The checks: each succeeds when the tool is there and works.
on_path() { command -v "$1" >/dev/null; }
links_openmp() {  # the compiler $1 links a tiny OpenMP program (gcc: libgomp; clang: libomp)
  on_path "$1" && printf 'int main(void){\n#pragma omp parallel\n;return 0;}\n' |
    "$1" -fopenmp -x c - -o "$scratch/openmp" 2>/dev/null
}
python_venv() {
  python3 -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null
}
slurm() { on_path slurmctld && on_path slurmd && on_path munged; }
util_linux() { on_path taskset && on_path unshare; }

missing=() required=() debian=() fedora=() spack=() conda=()
# need PART WHAT ENABLES DEBIAN FEDORA SPACK CONDA-FORGE CHECK...: ENABLES is what an optional
# tool is for, empty for what a campaign cannot run without; a package list left empty has no
# package there.
need() {
  local in=$1 what=$2 enables=$3 deb=$4 fed=$5 spk=$6 cf=$7
  shift 7
  [ "$in" = run ] || [ "$part" = test ] || return 0
  "$@" && return 0
  if [ -z "$enables" ]; then required+=("$what"); else missing+=("$what, for $enables"); fi
  # shellcheck disable=SC2206  # one word per package
  debian+=($deb) fedora+=($fed) spack+=($spk) conda+=($cf)
}

need run "hwloc (lstopo-no-graphics)" "" \
  hwloc-nox hwloc hwloc hwloc  on_path lstopo-no-graphics
need run "gcc with OpenMP (gcc -fopenmp)" "" \
  gcc "gcc libgomp" gcc "gcc libgomp"  links_openmp gcc
need run "Python >= 3.11 with venv (python3)" "" \
  "python3 python3-venv" python3 python python  python_venv
need run "clang with libomp" \
  "the OMPT explanations of why a placement wins, and builds with clang" \
  "clang libomp-dev" "clang libomp-devel" llvm "clang llvm-openmp"  links_openmp clang
need run "valgrind" "the Valgrind tracer (tracer: valgrind)" \
  valgrind "valgrind valgrind-tools-devel" valgrind valgrind  on_path valgrind
need run "ar (binutils)" "the tsan tracer (the strategies that need a trace)" \
  binutils binutils binutils binutils  on_path ar
need run "make" "make run, make test, and benchmarks built with make" \
  make make gmake make  on_path make
need test "g++" "the tests' C++ programs" g++ gcc-c++ gcc gxx  on_path g++
need test "gfortran" "the tests' Fortran programs" \
  gfortran gcc-gfortran gcc gfortran  on_path gfortran
need test "cmake" "the test of the tsan tracer's CMake recipe" \
  cmake cmake cmake cmake  on_path cmake
need test "likwid-pin" "the tests that check likwid-pin expressions against likwid" \
  likwid likwid likwid ""  on_path likwid-pin
need test "chromium" "the test that opens the report in a browser" \
  chromium chromium "" ""  on_path chromium
need test "SLURM and munge" "the tests on a one-host SLURM cluster" \
  "slurm-wlm munge" "slurm slurm-slurmctld slurm-slurmd munge" "slurm munge" ""  slurm
need test "pgrep" "the tests that look for processes left behind" \
  procps procps-ng procps procps-ng  on_path pgrep
need test "taskset and unshare" "the tests on restricted CPU sets" \
  util-linux util-linux util-linux ""  util_linux

# unique WORD...: the words, each once, in their first order
unique() {
  local -A seen=()
  local words=() word
  for word; do [[ ${seen[$word]+x} ]] || { seen[$word]=1; words+=("$word"); }; done
  echo "${words[*]}"
}
# install HOW WORD...: one line of the packages to install, none when none is there
install() {
  local how=$1
  shift
  if (($#)); then echo "  $how $(unique "$@")" >&2; fi
}

if ((apt_only)); then
  unique "${debian[@]}"
  exit 0
fi
for line in "${missing[@]}"; do
  echo "pinbench setup: not installed (optional): $line" >&2
done
if ((${#required[@]})); then
  what=$(printf '%s, ' "${required[@]}")
  them=$( ((${#required[@]} > 1)) && echo them || echo it)
  echo "pinbench setup: a campaign cannot run without ${what%, }:" \
    "install $them, then run the set-up again" >&2
fi
if ((${#debian[@]})); then
  echo "pinbench setup: to install what is missing (Spack: then spack load it):" >&2
  install "Debian/Ubuntu: sudo apt-get install" "${debian[@]}"
  install "Fedora/RHEL:   sudo dnf install" "${fedora[@]}"
  install "Spack:         spack install" "${spack[@]}"
  install "conda-forge:   conda install -c conda-forge" "${conda[@]}"
fi
((${#required[@]} == 0))
