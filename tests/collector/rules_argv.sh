#!/bin/sh
# rules_argv.sh OUT ARGS...: the program of the exec tests (test_rules.c). Writes each
# argument on a line of its own into OUT, then the MPIWATCH_* variables it was given.
out=$1
shift
{
    for a in "$@"; do
        printf '%s\n' "$a"
    done
    printf 'ENV %s\n' "$MPIWATCH_RULE" "$MPIWATCH_RANK" "$MPIWATCH_VALUE" "$MPIWATCH_WINDOW" \
        "$MPIWATCH_JOB" "$MPIWATCH_NODE" "$MPIWATCH_STEP" "$MPIWATCH_FUNCTION"
} >"$out.tmp" && mv "$out.tmp" "$out"
