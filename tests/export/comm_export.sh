#!/bin/bash
# comm_export.sh EXPORT COMMGEN: mpiwatch-export --format otf2 on crafted communicator
# definitions (mw-commgen.c)
#   - chain: 20,000 communicators, each one's parent the next id. Exported in one walk of the
#     parent forest; the time is printed (the test does not depend on it: machines are shared),
#     every communicator written, all but the top one with their parent, each parent defined
#     before its child (otf2-print -G), the barrier on the deepest one kept;
#   - cycle: three communicators each other's parents: the cycle reported and broken at one
#     member, the archive valid, the children of the cycle and of MPI_COMM_WORLD with parents;
#   - badworld: a member of world rank 5 in a 2-rank job, two members of one world rank, three
#     members claimed in a 2-rank job: no group of the archive names a rank the job does not
#     have (otf2-print -G says nothing), their messages and collective reported and written as
#     Enter/Leave only, the sound communicator's send and receive written.
export_bin=$1
commgen=$2
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
. "$here/../lib/common.sh"
mw_init export_otf2_comms
dir=$MW_T
fails=0
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# otf2_valid NAME: the archive $dir/NAME reads without error or warning.
otf2_valid() {
    local a="$dir/$1/traces.otf2"
    otf2-print --silent -Werror "$a" >"$dir/$1.silent" 2>&1 ||
        fail "$1: otf2-print --silent -Werror: $(head -5 "$dir/$1.silent")"
    otf2-print -G "$a" >"$dir/$1.defs" 2>"$dir/$1.defs.err" || fail "$1: otf2-print -G exited $?"
    if [ -s "$dir/$1.defs.err" ] || grep -qi invalid "$dir/$1.defs"; then
        fail "$1: otf2-print -G: $(head -3 "$dir/$1.defs.err") $(grep -m3 -i invalid "$dir/$1.defs")"
    fi
}

# comm_parents NAME: from otf2-print -G, the number of communicators with a parent; fails when a
# parent is not defined before its child (a reference to a later id).
comm_parents() {
    awk '$1 == "COMM" {
             id = $2
             if (match($0, /Parent: .*<[0-9]+>, Flags/)) {
                 p = substr($0, RSTART, RLENGTH)
                 sub(/.*</, "", p)
                 sub(/>.*/, "", p)
                 if (p + 0 >= id + 0) { print "late " id " " p; exit 1 }
                 n++
             }
         }
         END { print n + 0 }' "$dir/$1.defs"
}

# chain
n=20000
"$commgen" chain "$dir/chain.mpiw" "$n" || fail "mw-commgen chain"
t0=$(date +%s%N)
"$export_bin" --format otf2 "$dir/chain.mpiw" -o "$dir/chain" 2>"$dir/chain.err" ||
    fail "chain: --format otf2 exited $?: $(cat "$dir/chain.err")"
t1=$(date +%s%N)
echo "chain of $n communicators (parents against the id order) exported in" \
    "$(((t1 - t0) / 1000000)) ms"
grep -q "$((n + 2)) communicator(s): Enter 1 Leave 1 MpiCollectiveBegin 1 MpiCollectiveEnd 1$" \
    "$dir/chain.err" || fail "chain: not every communicator, or the barrier: $(cat "$dir/chain.err")"
if grep -q warning "$dir/chain.err"; then
    fail "chain: warnings: $(grep warning "$dir/chain.err")"
fi
otf2_valid chain
parents=$(comm_parents chain) || fail "chain: a parent after its child: $parents"
[ "$parents" = "$((n - 1))" ] || fail "chain: $parents communicators with a parent, not $((n - 1))"

# cycle
"$commgen" cycle "$dir/cycle.mpiw" || fail "mw-commgen cycle"
"$export_bin" --format otf2 "$dir/cycle.mpiw" -o "$dir/cycle" 2>"$dir/cycle.err" ||
    fail "cycle: --format otf2 exited $?: $(cat "$dir/cycle.err")"
grep -q "warning: 1 cycle(s) of parent communicators" "$dir/cycle.err" ||
    fail "cycle: not reported: $(cat "$dir/cycle.err")"
grep -q "7 communicator(s): Enter 1 Leave 1 MpiCollectiveBegin 1 MpiCollectiveEnd 1$" \
    "$dir/cycle.err" || fail "cycle: not every communicator, or the barrier: $(cat "$dir/cycle.err")"
otf2_valid cycle
parents=$(comm_parents cycle) || fail "cycle: a parent after its child: $parents"
[ "$parents" = 4 ] || fail "cycle: $parents communicators with a parent, not 4"

# badworld
"$commgen" badworld "$dir/bw.mpiw" || fail "mw-commgen badworld"
"$export_bin" --format otf2 "$dir/bw.mpiw" -o "$dir/bw" 2>"$dir/bw.err" ||
    fail "badworld: --format otf2 exited $?: $(cat "$dir/bw.err")"
grep -q "warning: 3 communicator(s) with a member that is not a rank of the job" "$dir/bw.err" ||
    fail "badworld: the communicators are not reported: $(cat "$dir/bw.err")"
grep -q "warning: 3 message or collective event(s) on a communicator whose group" "$dir/bw.err" ||
    fail "badworld: the events left out are not reported: $(cat "$dir/bw.err")"
grep -q "3 communicator(s): Enter 5 Leave 5 MpiSend 1 MpiRecv 1$" "$dir/bw.err" ||
    fail "badworld: not the expected events: $(cat "$dir/bw.err")"
otf2_valid bw
ngroups=$(grep -c '^GROUP .*COMM_GROUP' "$dir/bw.defs")
[ "$ngroups" = 2 ] || fail "badworld: $ngroups communicator groups, not 2 (WORLD and the sound one)"
# The checks must see a group with a rank the job does not have.
sed 's/, 2 Members: 1 (/, 2 Members: 5 (INVALID) (/' "$dir/bw.defs" >"$dir/bw.bad"
cmp -s "$dir/bw.defs" "$dir/bw.bad" && fail "badworld: could not plant an invalid member"
grep -qi invalid "$dir/bw.bad" || fail "badworld: the invalid member is not seen"
# --format trace reads the same definitions: it warns alike and still writes every record.
"$export_bin" --format trace "$dir/bw.mpiw" -o "$dir/bw.jsonl" 2>"$dir/bw.trace.err" ||
    fail "badworld: --format trace exited $?"
grep -q "3 communicator(s) with a member that is not a rank" "$dir/bw.trace.err" ||
    fail "badworld: --format trace does not warn"
[ "$(grep -c '"type":"record"' "$dir/bw.jsonl")" = 5 ] || fail "badworld: trace lines missing"

[ "$fails" -eq 0 ] || mw_fail "$fails failure(s)"
mw_log "ok"
