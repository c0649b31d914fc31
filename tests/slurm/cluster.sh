# cluster.sh: a Slurm cluster of two nodes on this host, for the tests (sourced, not run).
#
# DESIGN: everything lives in a directory of the test (DIR): a fresh munge key and a munged on
# its own socket, a slurm.conf naming two nodes n1 and n2 that are both this host (NodeAddr
# 127.0.0.1, a slurmd each, started with -N NAME on its own port), the controller's state, the
# spool and the logs. Debian's Slurm plugins are used as they are: select/cons_tres,
# proctrack/linuxproc, task/none (no cgroup), no accounting. TmpFS is per node (DIR/tmp/%n):
# the PMIx plugin makes a directory named after the job in it, which two slurmds on one host
# would otherwise both create. The ports are four consecutive free ones picked at random, so
# that two tests, or a site's own Slurm, do not collide. sl_start returns 1 with the reason in
# SL_WHY when a daemon cannot start (the caller skips); sl_stop ends every daemon it started,
# by the pid it recorded, and is safe to call twice.

# shellcheck shell=bash disable=SC2034
SL_DIR=''
SL_PIDS=()
SL_WHY=''

# sl_free_port P: true when nothing listens on TCP port P.
sl_free_port() {
    ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .
}

# sl_wait_file FILE SECONDS: true once FILE exists and is not empty.
sl_wait_file() {
    local i
    for ((i = 0; i < $2 * 20; i++)); do
        [ ! -s "$1" ] || return 0
        sleep 0.05
    done
    return 1
}

# sl_start DIR: munged, slurmctld and two slurmds; exports SLURM_CONF. Returns 1 (SL_WHY) when
# they cannot start or the nodes are not idle within 30 s.
sl_start() {
    local dir=$1 host base p n i ok pid
    SL_DIR=$dir
    mkdir -p "$dir/state" "$dir/spool/n1" "$dir/spool/n2" "$dir/tmp/n1" "$dir/tmp/n2" "$dir/run" ||
        { SL_WHY="cannot create $dir"; return 1; }
    chmod 700 "$dir"
    for ((i = 0; i < 50; i++)); do
        base=$((20000 + RANDOM % 40000))
        ok=1
        for p in "$base" $((base + 1)) $((base + 2)) $((base + 3)); do
            sl_free_port "$p" || ok=0
        done
        [ "$ok" = 0 ] || break
    done
    [ "$ok" = 1 ] || { SL_WHY="no four free consecutive ports"; return 1; }

    (umask 077 && head -c 1024 /dev/urandom >"$dir/munge.key") || { SL_WHY="cannot write the munge key"; return 1; }
    # --force: the directory is under /tmp, which munged would otherwise find too open.
    if ! /usr/sbin/munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" \
        --pid-file="$dir/run/munged.pid" --log-file="$dir/munged.log" \
        --seed-file="$dir/munge.seed" 2>"$dir/munged.err"; then
        SL_WHY="munged does not start: $(tail -n 2 "$dir/munged.err" "$dir/munged.log" 2>/dev/null | tr '\n' ' ')"
        return 1
    fi
    sl_wait_file "$dir/run/munged.pid" 5 && SL_PIDS+=("$(cat "$dir/run/munged.pid")")

    host=$(hostname)
    : >"$dir/plugstack.conf"
    cat >"$dir/slurm.conf" <<EOC
ClusterName=mwtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd-%n.log
PlugStackConfig=$dir/plugstack.conf
TmpFS=$dir/tmp/%n
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=n1 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + 2)) CPUs=2 State=UNKNOWN
NodeName=n2 NodeHostname=$host NodeAddr=127.0.0.1 Port=$((base + 3)) CPUs=2 State=UNKNOWN
PartitionName=debug Nodes=n[1-2] Default=YES MaxTime=INFINITE State=UP
EOC
    export SLURM_CONF=$dir/slurm.conf
    if ! /usr/sbin/slurmctld -f "$SLURM_CONF" -i 2>"$dir/slurmctld.err"; then
        SL_WHY="slurmctld does not start: $(tail -n 3 "$dir/slurmctld.err" "$dir/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
        return 1
    fi
    sl_wait_file "$dir/run/slurmctld.pid" 10 && SL_PIDS+=("$(cat "$dir/run/slurmctld.pid")")
    for n in n1 n2; do
        if ! /usr/sbin/slurmd -f "$SLURM_CONF" -N "$n" 2>"$dir/slurmd-$n.err"; then
            SL_WHY="slurmd $n does not start: $(tail -n 3 "$dir/slurmd-$n.err" "$dir/slurmd-$n.log" 2>/dev/null | tr '\n' ' ')"
            return 1
        fi
        sl_wait_file "$dir/run/slurmd-$n.pid" 10 && SL_PIDS+=("$(cat "$dir/run/slurmd-$n.pid")")
    done
    for ((i = 0; i < 300; i++)); do
        [ "$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)" = 2 ] && return 0
        sleep 0.1
    done
    SL_WHY="the nodes are not idle after 30 s: $(sinfo -N 2>&1 | tr '\n' ' '); $(tail -n 3 "$dir/slurmctld.log" 2>/dev/null | tr '\n' ' ')"
    return 1
}

# sl_up: what every cluster test checks first (root, the Slurm and munge programs), then the
# cluster started in $MW_T/cluster and stopped when the test ends, whatever happens (then
# mw_teardown with the test's status); skips with the reason when it cannot start or srun has
# no PMIx. Exports the MPI and key settings the cluster's jobs use.
sl_up() {
    local p
    [ "$(id -u)" = 0 ] || mw_skip "the test's own slurmd must run as root to start tasks"
    for p in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd srun sbatch sinfo scontrol ss; do
        command -v "$p" >/dev/null || mw_skip "$p is not installed (Debian: munge slurmctld slurmd slurm-client)"
    done
    sl_rc=0
    trap 'sl_rc=$?; sl_stop; (exit "$sl_rc"); mw_teardown' EXIT
    sl_start "$MW_T/cluster" || mw_skip "the Slurm daemons cannot start here: $SL_WHY"
    srun --mpi=list 2>&1 | grep -q pmix || mw_skip "this Slurm has no PMIx plugin (srun --mpi=list)"
    mw_log "cluster up in ${SECONDS} s: $(sinfo -h -N -o '%N %t' | tr '\n' ' ')"
    export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo
    export MPIWATCH_KEY_DIR=$MW_T/keys
}

# sl_up_aggregators: sl_up for a test of `mpiwatch run --aggregators` (after mw_setup and
# mw_require): skips when the collector has no --upstream, then the cluster up, $MW_T/keys, and
# $MW_T/bin/srun, a wrapper that appends every srun command line (the aggregators' and the
# job's) to $MW_T/srun.args and runs the real one (put $MW_T/bin first in the job's PATH).
sl_up_aggregators() {
    local real_srun
    "$MW_COLLECTOR" --help 2>&1 | grep -q -- '--upstream ' ||
        mw_skip "this mpiwatch-collector has no --upstream: no aggregators to start"
    sl_up
    mkdir -m 700 "$MW_T/bin" "$MW_T/keys"
    real_srun=$(command -v srun)
    cat >"$MW_T/bin/srun" <<EOF2
#!/bin/bash
printf '%s\n' "\$*" >>"$MW_T/srun.args"
exec "$real_srun" "\$@"
EOF2
    chmod +x "$MW_T/bin/srun"
}

# sl_stop: ends the daemons sl_start started (SIGTERM, then SIGKILL after 5 s).
sl_stop() {
    local pid i alive
    [ "${#SL_PIDS[@]}" -gt 0 ] || return 0
    # In reverse order of their start: the slurmds, the controller, munge.
    for ((i = ${#SL_PIDS[@]} - 1; i >= 0; i--)); do
        kill -TERM "${SL_PIDS[i]}" 2>/dev/null
    done
    for ((i = 0; i < 100; i++)); do
        alive=0
        for pid in "${SL_PIDS[@]}"; do
            # A daemon that ended but was not reaped yet (a zombie) counts as gone.
            kill -0 "$pid" 2>/dev/null && [[ $(cat "/proc/$pid/stat" 2>/dev/null) != *") Z "* ]] && alive=1
        done
        [ "$alive" = 1 ] || break
        sleep 0.05
    done
    for pid in "${SL_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null
    done
    SL_PIDS=()
}
