#!/bin/sh
# Regenerates the XML files of this corpus with hwloc's own tools (written with hwloc 2.9).
# Each file is lstopo's export of a synthetic machine, some edited the way real exports
# differ: disallowed PUs (--allow, as a cgroup would), offline PUs (in the root's
# complete_cpuset but no PU object), hwloc 1.x format (--export-xml-flags v1).
set -eu
cd "$(dirname "$0")"
export LC_ALL=C
xml() { lstopo-no-graphics "$@" --of xml - 2>/dev/null; }
# cpuset N LOCATIONS...: the hwloc bitmap string of PUs (OS indexes) of a machine of N PUs.
cpuset() { n=$1; shift; hwloc-calc -i "pu:$n" --pi "$@" 2>/dev/null; }
# Linux numbering of SMT siblings: thread t of global core c is PU c + t * cores.
smt() { awk -v cores="$1" -v threads="$2" 'BEGIN {
    for (c = 0; c < cores; c++) for (t = 0; t < threads; t++)
        printf "%s%d", (c || t) ? "," : "", c + t * cores }'; }
# Replace attribute $1 of the root (Machine) object by $2.
root_attr() { sed "/type=\"Machine\"/s/ $1=\"[^\"]*\"/ $1=\"$2\"/"; }

# POWER8 in SMT2 mode: cores have 8 hardware threads (8c..8c+7), only 2 online; the
# cpusets have empty words (0x00000303,0x03030000,,0x03030303).
xml -i "Package:2 [NUMANode(memory=64GiB)] L3Cache:1(size=32MiB) Core:4 PU:2(indexes=0,1,8,9,16,17,24,25,80,81,88,89,96,97,104,105)" \
    | root_attr complete_cpuset "$(cpuset 112 pu:0-31 pu:80-111)" > power8-smt2.v2.xml

# Two NUMA groups of two packages, L2 shared by two cores, SMT2; PUs 5 and 24-31 (a whole
# package) disallowed; hwloc 1.x format, where NUMA nodes are parents; the root's
# online_cpuset leaves out PU 1, which stays an object (hwloc 2 keeps it).
xml -i "Group:2 [NUMANode(memory=32GiB)] Package:2 L2Cache:2(size=4MiB) Core:2 PU:2" \
    --allow "$(cpuset 32 pu:0-4 pu:6-23)" --export-xml-flags v1 \
    | root_attr online_cpuset 0xfffffffd > numa-parent.v1.xml

# Sub-NUMA clustering: two NUMA nodes per package, each under a Group of 6 cores, SMT2
# with Linux numbering (siblings 24 apart); core 7 (PUs 7 and 31) disallowed.
SNC="Package:2 L3Cache:1(size=30MiB) Group:2 [NUMANode(memory=48GiB)] Core:6 PU:2(indexes=$(smt 24 2))"
xml -i "$SNC" --allow "$(cpuset 48 pu:0-6 pu:8-30 pu:32-47)" > snc2.v2.xml
xml -i "$SNC" --export-xml-flags v1 > snc2.v1.xml

# 128 PUs: 2 packages of 4 dies of 2 L3 of 4 cores, SMT2 with Linux numbering; a cgroup
# allowing PUs 0-31 and 96-127 (allowed_cpuset 0xffffffff,,,0xffffffff): first hardware
# threads of package 0, second ones of package 1.
xml -i "Package:2 [NUMANode(memory=128GiB)] Die:4 L3Cache:2(size=16MiB) Core:4 PU:2(indexes=$(smt 64 2))" \
    --allow "$(cpuset 128 pu:0-31 pu:96-127)" > epyc128.v2.xml

# Offline PUs 1 and 6: no PU object, only in the root's complete_cpuset; asymmetric cores.
xml -i "Package:2 Core:2 PU:2" --restrict 0xbd | root_attr complete_cpuset 0x000000ff > offline.v2.xml

# Nested Groups; the second inner group (PUs 4-7) and PU 9 disallowed.
xml -i "Group:2 Group:2 Package:2 Core:2 PU:1" --allow "$(cpuset 16 pu:0-3 pu:8 pu:10-15)" > groups.v2.xml

# A hybrid CPU as hwloc exports Intel's: 6 P-cores with two hardware threads (PUs 0-11, SMT
# siblings consecutive) and 8 E-cores with one (PUs 12-19), two CPU kinds (hwloc's order:
# least efficient first; E-cores IntelAtom, P-cores IntelCore).
xml -i "Package:1 L3Cache:1(size=24MiB) Core:14 PU:2(indexes=$(awk 'BEGIN {
        for (c = 0; c < 14; c++) printf "%s%d,%d", c ? "," : "", c < 6 ? 2 * c : c + 6, c < 6 ? 2 * c + 1 : c + 14 }'))" \
    --restrict 0x000fffff > hybrid.tmp.xml
hwloc-annotate hybrid.tmp.xml hybrid.tmp.xml -- none -- cpukind 0x000ff000 0 0 CoreType IntelAtom
hwloc-annotate hybrid.tmp.xml hybrid.v2.xml -- none -- cpukind 0x00000fff 1 0 CoreType IntelCore
rm hybrid.tmp.xml
