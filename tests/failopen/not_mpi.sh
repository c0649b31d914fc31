#!/usr/bin/env bash
# failopen_not_mpi: programs that never call MPI_Init stay untouched by the preloaded library:
# a shell and /bin/echo print and exit exactly as without it and the collector hears nothing;
# and mpirun itself, with LD_PRELOAD exported to it (so mpirun, orted and the ranks all load
# the library), runs the job as without it, and only the ranks report.
. "$(dirname "$0")/lib.sh"
fo_setup failopen_not_mpi needs-collector

fo_start_collector --quiet
lib_env=(env LD_PRELOAD="$MW_LIB" MPIWATCH_COLLECTOR="$MW_EP")
# shellcheck disable=SC2016 # $0 and $1 are the inner shell's
sh_cmd=(/bin/sh -c 'echo "out: $0 $1"; echo "err: to stderr" >&2; exit 4' a b)
fo_run sh_base "${sh_cmd[@]}"
fo_expect_status sh_base 4
fo_run sh_with "${lib_env[@]}" "${sh_cmd[@]}"
fo_same sh_with sh_base
fo_same_stderr sh_base sh_with
fo_run echo_base /bin/echo hello from echo
fo_run echo_with "${lib_env[@]}" /bin/echo hello from echo
fo_same echo_with echo_base
fo_same_stderr echo_base echo_with
sleep 0.5
mw_stop_collector 0
fo_nothing_received

# mpirun started with the library in its own environment.
app=("$MW_FO_BIN/failopen_app" 3 100)
fo_run base "${FO_MPI[@]}" "${app[@]}"
fo_expect_status base 3
fo_start_collector --quiet --exit-after-job
fo_run with env LD_PRELOAD="$MW_LIB" MPIWATCH_COLLECTOR="$MW_EP" "$MW_MPIRUN" --oversubscribe \
    -np "$FO_NP" "${app[@]}"
fo_same with base
mw_stop_collector 15
fo_ranks_reported
fo_nothing_rejected "mpirun or orted"
mw_log "ok"
