#!/bin/bash
# srun.sh: `mpiwatch run -- srun` on a real Slurm cluster of two nodes on this host, started by
# the test (cluster.sh: munged, slurmctld, two slurmds). Skipped (77) only when the daemons
# cannot start here (not root, not installed, a daemon that does not come up).
#
# 1. `mpiwatch run -- srun --mpi=pmix -N2 -n4 known_c`: the job runs on both nodes, the
#    summary is exactly the known pattern with 4 ranks (every rank said hello, every call
#    attributed); two nodes made the launcher switch to TCP on a port the system chose, with
#    CURVE keys made for the run: the collector logs the endpoint it really bound
#    (ZMQ_LAST_ENDPOINT) and CURVE on, the launcher names the same port; the key directory is
#    gone afterwards; srun itself ran without the library (a wrapper named srun records its own
#    LD_PRELOAD and command line: --export carries it instead).
# 2. The same from a batch script (sbatch -N2 -n4 --wait) running `mpiwatch run -- srun
#    --mpi=pmix known_c` without -N or -n: the allocation's node and task counts are used.
# 3. Too few hellos: srun -N2 -n4 where the tasks of node n2 have a client key the collector
#    does not know: the application succeeds, `mpiwatch run` exits 3, the report lists the 2
#    missing ranks and the CURVE refusals as the cause.
# 4. None at all: srun -N2 -n2 of a program that is not MPI, with the user's own --export
#    (kept, merged): exit status 3, "no valid hello", the causes listed.
#
# Open MPI between the two "nodes" of one host: its shared-memory transport keys its segments
# by host name, which both nodes share, so the ranks use TCP on loopback (OMPI_MCA_btl); srun
# starts Open MPI ranks through PMIx (--mpi=pmix; Debian's Open MPI has no Slurm PMI-2).

. "$(dirname "$0")/../integration/lib.sh"
# shellcheck source=cluster.sh
. "$(dirname "$0")/cluster.sh"

mw_setup slurm_srun
mw_require MW_LAUNCHER MW_KEYGEN
SECONDS=0
sl_up
mkdir -m 700 "$MW_T/bin"
real_srun=$(command -v srun)
# The wrapper: what srun itself was started with, then the real one.
cat >"$MW_T/bin/srun" <<EOF2
#!/bin/bash
printf '%s\n' "\${LD_PRELOAD-}" >"$MW_T/srun.preload"
printf '%s\n' "\$*" >"$MW_T/srun.args"
exec "$real_srun" "\$@"
EOF2
chmod +x "$MW_T/bin/srun"
N=20
KNOWN=$MW_PROGRAMS/known_c

# ---- 1. srun -N2 -n4 ----------------------------------------------------------------------
"$MW_LAUNCHER" run --no-record --no-viewer --quiet --summary-json "$MW_T/summary.json" \
    --report "$MW_T/report1.txt" -- "$MW_T/bin/srun" --mpi=pmix -N2 -n4 "$KNOWN" "$N" \
    >"$MW_T/app1.out" 2>"$MW_T/run1.err"
rc=$?
MW_FAILURE_LOG=$MW_T/run1.err
[ "$rc" = 0 ] || mw_fail "mpiwatch run -- srun -N2 -n4 exited with status $rc"
grep -q "^known_c: 4 ranks, N=$N, pattern ok" "$MW_T/app1.out" || mw_fail "the program did not succeed: $(cat "$MW_T/app1.out")"
MW_NP=4 mw_check --pattern known --n "$N" --label "srun -N2 -n4"
grep -q '^ranks        4 (4 said hello, 4 said bye' "$MW_T/report1.txt" || mw_fail "not every rank said hello: $(grep '^ranks' "$MW_T/report1.txt")"
port=$(sed -n 's|.*info: listening on tcp://0\.0\.0\.0:\([0-9]*\) (asked for tcp://\*:\*).*|\1|p' "$MW_T/run1.err")
[ -n "$port" ] || mw_fail "the collector did not log the TCP endpoint it bound"
grep -q 'info: CURVE on: server key' "$MW_T/run1.err" || mw_fail "CURVE was not on"
grep -q "mpiwatch: 2 nodes: the collector listens on tcp://0.0.0.0:$port, the ranks connect to tcp://[^ ]*:$port with CURVE" "$MW_T/run1.err" ||
    mw_fail "the launcher did not report the endpoint bound (port $port) and CURVE"
grep -q -- "--export=ALL,LD_PRELOAD=[^,:]*libmpiwatch[^,:]*,MPIWATCH_COLLECTOR=tcp://[^,]*:$port," "$MW_T/srun.args" ||
    mw_fail "srun did not get the library in its --export: $(cat "$MW_T/srun.args")"
if grep -q libmpiwatch "$MW_T/srun.preload"; then
    mw_fail "srun itself was started with the library preloaded: $(cat "$MW_T/srun.preload")"
fi
[ -z "$(ls -A "$MW_T/keys")" ] || mw_fail "the run's key directory was left behind: $(ls "$MW_T/keys")"
mw_log "1. srun -N2 -n4: 4 ranks, exact pattern, tcp port $port with CURVE (${SECONDS} s)"

# ---- 2. sbatch -N2 -n4, srun without counts -----------------------------------------------
# Without aggregators (the default in an allocation of two nodes: aggregators.sh), so that
# the root's summary has each rank's functions to check against the known pattern.
cat >"$MW_T/job.sh" <<EOF2
#!/bin/bash
exec "$MW_LAUNCHER" run --aggregators off --no-record --no-viewer --quiet --summary-json "$MW_T/summary2.json" \
    -- srun --mpi=pmix "$KNOWN" "$N"
EOF2
chmod +x "$MW_T/job.sh"
timeout 90 sbatch --wait -N2 -n4 -o "$MW_T/job2.out" -e "$MW_T/job2.err" "$MW_T/job.sh" >"$MW_T/sbatch.out" 2>&1
rc=$?
MW_FAILURE_LOG=$MW_T/job2.err
[ "$rc" = 0 ] || mw_fail "the batch job failed (sbatch --wait status $rc): $(cat "$MW_T/sbatch.out")"
grep -q "^known_c: 4 ranks, N=$N, pattern ok" "$MW_T/job2.out" || mw_fail "the batch job's program did not succeed: $(cat "$MW_T/job2.out")"
cp "$MW_T/summary2.json" "$MW_T/summary.json"
MW_NP=4 mw_check --pattern known --n "$N" --label "sbatch -N2 -n4"
grep -q "mpiwatch: 2 nodes: .* the ranks connect to tcp://127\.0\.0\.1:[0-9]* with CURVE" "$MW_T/job2.err" ||
    mw_fail "in the batch job the ranks were not sent to the node's address (NodeAddr 127.0.0.1) with CURVE"
mw_log "2. sbatch -N2 -n4: 4 ranks, exact pattern, NodeAddr endpoint (${SECONDS} s)"

# ---- 3. two of four ranks with another key pair ---------------------------------------------
# The tasks of node n2 present a client key the collector does not know (as with keys from
# another run): their connections are refused in the CURVE handshake and they never say hello,
# while the application runs to its end.
"$MW_KEYGEN" "$MW_T/other" >/dev/null || mw_fail "mpiwatch-keygen failed"
# shellcheck disable=SC2016 # expanded by the tasks' shell
"$MW_LAUNCHER" run --no-record --no-viewer --quiet --grace 3 --report "$MW_T/report3.txt" -- \
    srun --mpi=pmix -N2 -n4 sh -c '[ "$SLURM_NODEID" = 0 ] || export MPIWATCH_CURVE_KEY=$0; exec "$@"' \
    "$MW_T/other.key" "$KNOWN" "$N" >"$MW_T/app3.out" 2>"$MW_T/run3.err"
rc=$?
MW_FAILURE_LOG=$MW_T/run3.err
grep -q "^known_c: 4 ranks, N=$N, pattern ok" "$MW_T/app3.out" || mw_fail "the program did not succeed: $(cat "$MW_T/app3.out")"
[ "$rc" = 3 ] || mw_fail "two ranks never said hello, yet mpiwatch run exited with status $rc (want 3)"
grep -q '^  the launcher started 4 ranks; 2 said hello: 2 ranks not watched' "$MW_T/report3.txt" ||
    mw_fail "the report does not say that 2 of 4 ranks are missing: $(cat "$MW_T/report3.txt")"
grep -q '^  ranks without hello: 2, 3$' "$MW_T/report3.txt" || mw_fail "the report does not list ranks 2 and 3"
grep -q '^  1\. CURVE: [0-9]* connections\{0,1\} refused in the handshake (unauthorized [1-9]' "$MW_T/report3.txt" ||
    mw_fail "the report does not give the CURVE refusals as the first cause: $(sed -n '/^Missing/,/^$/p' "$MW_T/report3.txt")"
mw_log "3. 2 of 4 ranks with another key: exit 3, ranks 2 and 3 named, CURVE refusals (${SECONDS} s)"

# ---- 4. not an MPI program, the user's --export kept -----------------------------------------
# shellcheck disable=SC2016 # expanded by the tasks' shell
"$MW_LAUNCHER" run --no-record --no-viewer --quiet --grace 1 --report "$MW_T/report4.txt" -- \
    srun -N2 -n2 --export=ALL,MW_PROBE=kept sh -c 'echo "probe=$MW_PROBE preload=$LD_PRELOAD"' \
    >"$MW_T/app4.out" 2>"$MW_T/run4.err"
rc=$?
MW_FAILURE_LOG=$MW_T/run4.err
[ "$(grep -c "^probe=kept preload=[^ :]*libmpiwatch[^ :]*$" "$MW_T/app4.out")" = 2 ] ||
    mw_fail "the tasks did not get both the user's --export and the library: $(cat "$MW_T/app4.out")"
[ "$rc" = 3 ] || mw_fail "no rank said hello, yet mpiwatch run exited with status $rc (want 3)"
grep -q '^no job: no valid hello was received' "$MW_T/report4.txt" || mw_fail "the report does not say no hello came"
grep -q '^  the launcher started 2 ranks; 0 said hello: 2 ranks not watched' "$MW_T/report4.txt" ||
    mw_fail "the report does not count the missing ranks: $(cat "$MW_T/report4.txt")"
grep -q 'the program does not call MPI_Init' "$MW_T/report4.txt" || mw_fail "the report does not list the causes"
mw_log "4. not MPI: exit 3 with the causes (${SECONDS} s)"
mw_log "ok (${SECONDS} s)"
