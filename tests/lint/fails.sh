#!/usr/bin/env bash
# fails.sh LINT: tools/lint.sh fails when it should. On a scratch tree (tools/, tests/, bench/,
# .ci/run and the project's .shellcheckrc) it must pass while every script is clean, then exit
# 1 naming each bad script and its finding (a *.sh file, an extension-less script found by its
# #! line, .ci/run), and exit 2 when shellcheck is missing. Without this test a lint step that
# found no scripts, or never ran shellcheck, would pass the suite for ever.

# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init lint_fails
lint=${1:?usage: fails.sh LINT}
[ -f "$lint" ] || mw_fail "no $lint"
command -v shellcheck >/dev/null || mw_fail "shellcheck is not installed (tools/setup.sh installs it)"

tree=$MW_T/tree
mkdir -p "$tree/tools" "$tree/tests/x" "$tree/bench" "$tree/.ci"
cp "$(dirname "$lint")/../.shellcheckrc" "$tree/"
# The helpers sourced by a script are followed (.shellcheckrc), as in the project.
cat >"$tree/tests/x/lib.sh" <<'END'
# shellcheck shell=bash
lib_greet() { printf '%s\n' "$1"; }
END
cat >"$tree/tests/x/good.sh" <<'END'
#!/usr/bin/env bash
. "$(dirname "$0")/lib.sh"
lib_greet "$1"
END
cat >"$tree/bench/runme" <<'END'
#!/bin/sh
echo "$1"
END
cat >"$tree/tools/notshell.py" <<'END'
print("not a shell script: $1 unquoted")
END
cat >"$tree/.ci/run" <<'END'
#!/usr/bin/env bash
set -euo pipefail
echo ok
END

# lint_run NAME: lint.sh --root on the scratch tree; its status in rc, its output in NAME.out.
lint_run() {
    rc=0
    bash "$lint" --root "$tree" >"$MW_T/$1.out" 2>&1 || rc=$?
}

lint_run clean
[ "$rc" = 0 ] || mw_fail "a clean tree failed (status $rc): $(cat "$MW_T/clean.out")"
grep -q '4 scripts, no finding' "$MW_T/clean.out" ||
    mw_fail "the clean tree's 4 scripts were not all checked: $(cat "$MW_T/clean.out")"

# One finding in each kind of file the check must find.
cat >"$tree/tests/x/bad.sh" <<'END'
#!/usr/bin/env bash
rm -rf $1/x
END
cat >"$tree/bench/runme" <<'END'
#!/bin/bash
cd /tmp || exit 1
for f in $(ls); do echo "$f"; done
END
cat >"$tree/.ci/run" <<'END'
#!/usr/bin/env bash
read line
echo "$line"
END
lint_run bad
[ "$rc" = 1 ] || mw_fail "a tree with bad scripts gave status $rc, not 1: $(cat "$MW_T/bad.out")"
for want in 'tests/x/bad.sh:2:.*SC2086' 'bench/runme:3:.*SC2045' '.ci/run:2:.*SC2162' 'lint: FAILED'; do
    grep -q "$want" "$MW_T/bad.out" || mw_fail "no '$want' in: $(cat "$MW_T/bad.out")"
done
! grep -q 'good.sh\|lib.sh\|notshell' "$MW_T/bad.out" ||
    mw_fail "a finding in a clean file or a non-shell file: $(cat "$MW_T/bad.out")"

# Without shellcheck the check cannot run: status 2, never a pass.
mkdir "$MW_T/bin"
for t in dirname find sort head grep; do
    ln -s "$(command -v "$t")" "$MW_T/bin/$t"
done
rc=0
PATH=$MW_T/bin "$BASH" "$lint" --root "$tree" >"$MW_T/nosc.out" 2>&1 || rc=$?
{ [ "$rc" = 2 ] && grep -q 'shellcheck is not installed' "$MW_T/nosc.out"; } ||
    mw_fail "without shellcheck: status $rc: $(cat "$MW_T/nosc.out")"
mw_log "ok: a clean tree passes, each bad script fails it (status 1), no shellcheck is status 2"
