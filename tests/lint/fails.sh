#!/usr/bin/env bash
# fails.sh LINT: tools/lint.sh fails when it should. On a scratch tree (tools/, tests/, bench/,
# .ci/run and the project's .shellcheckrc) it must pass while every script is clean, then exit
# 1 naming each bad script and its finding (a *.sh file, an extension-less script found by its
# #! line, .ci/run), and exit 2 when shellcheck is missing. Without this test a lint step that
# found no scripts, or never ran shellcheck, would pass the suite for ever.
# The layering check runs on the same tree (a small proto/, a component, a tools/ program):
# clean it passes; an include out of proto/, a proto/ target linking a component, a library
# defined under tools/ and a component linking it (from a *.cmake file) each fail it, named.

# shellcheck source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
mw_init lint_fails
lint=${1:?usage: fails.sh LINT}
[ -f "$lint" ] || mw_fail "no $lint"
command -v shellcheck >/dev/null || mw_fail "shellcheck is not installed (tools/setup.sh installs it)"

tree=$MW_T/tree
mkdir -p "$tree/tools" "$tree/tests/x" "$tree/bench" "$tree/.ci"
cp "$(dirname "$lint")/../.shellcheckrc" "$tree/"
cp "$(dirname "$lint")/../.clang-format" "$tree/"
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
# The layering of docs/architecture.md: proto/ includes only itself (and what it generates),
# a component links proto/, a program under tools/ links both.
mkdir -p "$tree/proto" "$tree/comp"
cat >"$tree/proto/CMakeLists.txt" <<'END'
add_library(mw_p STATIC mw_p.c) # add_library(not_a_call) in a comment
target_link_libraries(mw_p
                      PUBLIC m)
END
printf '#include "mw_p.h"\n#include "wire.pb-c.h"\n#include <stdio.h>\n' >"$tree/proto/mw_p.c"
printf '#include <stdint.h>\n' >"$tree/proto/mw_p.h"
: >"$tree/proto/wire.proto"
cat >"$tree/comp/CMakeLists.txt" <<'END'
add_library(mw_comp STATIC comp.c)
target_link_libraries(mw_comp PUBLIC mw_p)
END
printf '#include "comp.h"\n' >"$tree/comp/comp.c"
: >"$tree/comp/comp.h"
cat >"$tree/tools/CMakeLists.txt" <<'END'
add_executable(mw-tool tool.c)
target_link_libraries(mw-tool PRIVATE mw_comp mw_p)
END

# lint_run NAME [TREE]: lint.sh --root on the scratch tree (or TREE); its status in rc, its
# output in NAME.out.
lint_run() {
    rc=0
    bash "$lint" --root "${2:-$tree}" >"$MW_T/$1.out" 2>&1 || rc=$?
}

lint_run clean
[ "$rc" = 0 ] || mw_fail "a clean tree failed (status $rc): $(cat "$MW_T/clean.out")"
grep -q '4 scripts, no finding' "$MW_T/clean.out" ||
    mw_fail "the clean tree's 4 scripts were not all checked: $(cat "$MW_T/clean.out")"
grep -q 'layering: proto/ includes and links only itself' "$MW_T/clean.out" ||
    mw_fail "the layering check did not pass the clean tree: $(cat "$MW_T/clean.out")"
grep -q 'format: [1-9][0-9]* C files formatted' "$MW_T/clean.out" ||
    mw_fail "the format check did not check the clean tree's C files: $(cat "$MW_T/clean.out")"

# Each layering violation, on a copy of the clean tree (its scripts stay clean).
layers=$MW_T/layers
cp -a "$tree" "$layers"
printf '#include "../comp/comp.h"\n' >>"$layers/proto/mw_p.c"
printf '#include "comp.h"\n' >>"$layers/proto/mw_p.h"
printf '#include <comp/comp.h>\n' >"$layers/proto/mw_q.c"
printf 'target_link_libraries(mw_p PRIVATE\n    mw_comp)\n' >>"$layers/proto/CMakeLists.txt"
printf 'add_library(mw_util STATIC util.c)\n' >>"$layers/tools/CMakeLists.txt"
printf 'target_link_libraries(mw_comp PRIVATE m mw_util)\n' >"$layers/comp/extra.cmake"
lint_run layers "$layers"
[ "$rc" = 1 ] ||
    mw_fail "a tree breaking the layering gave status $rc, not 1: $(cat "$MW_T/layers.out")"
for want in 'proto/mw_p.c:4: proto/ includes ../comp/comp.h' \
    'proto/mw_p.h:2: proto/ includes comp.h' \
    'proto/mw_q.c:1: proto/ includes comp/comp.h' \
    "proto/CMakeLists.txt:4: proto's mw_p links mw_comp, a target defined outside proto/" \
    'tools/CMakeLists.txt:3: tools/ defines the library mw_util' \
    'comp/extra.cmake:1: mw_comp links mw_util, a library defined under tools/' \
    '4 scripts, no finding' 'lint: FAILED'; do
    grep -qF "$want" "$MW_T/layers.out" || mw_fail "no '$want' in: $(cat "$MW_T/layers.out")"
done
[ "$(grep -c 'proto/\|tools/' "$MW_T/layers.out")" = 6 ] ||
    mw_fail "a layering finding on an allowed include or link: $(cat "$MW_T/layers.out")"

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
# A C file that is not formatted as .clang-format says (the scratch proto/ and comp/ are).
printf 'int  f(int a){return a;}\n' >"$tree/comp/ugly.c"
lint_run bad
[ "$rc" = 1 ] || mw_fail "a tree with bad scripts gave status $rc, not 1: $(cat "$MW_T/bad.out")"
for want in 'tests/x/bad.sh:2:.*SC2086' 'bench/runme:3:.*SC2045' '.ci/run:2:.*SC2162' \
    'comp/ugly.c: not formatted' 'lint: FAILED'; do
    grep -q "$want" "$MW_T/bad.out" || mw_fail "no '$want' in: $(cat "$MW_T/bad.out")"
done
! grep -q 'good.sh\|lib.sh\|notshell\|comp/comp.c\|mw_p.c' "$MW_T/bad.out" ||
    mw_fail "a finding in a clean file or a non-shell file: $(cat "$MW_T/bad.out")"

# Without shellcheck the check cannot run: status 2, never a pass.
mkdir "$MW_T/bin"
for t in dirname find sort head grep awk; do
    ln -s "$(command -v "$t")" "$MW_T/bin/$t"
done
rc=0
PATH=$MW_T/bin "$BASH" "$lint" --root "$tree" >"$MW_T/nosc.out" 2>&1 || rc=$?
{ [ "$rc" = 2 ] && grep -q 'shellcheck is not installed' "$MW_T/nosc.out"; } ||
    mw_fail "without shellcheck: status $rc: $(cat "$MW_T/nosc.out")"
mw_log "ok: a clean tree passes, each bad script, each layering violation and an unformatted" \
    "C file fail it" \
    "(status 1), no shellcheck is status 2"
