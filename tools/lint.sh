#!/usr/bin/env bash
# lint.sh: the project's static checks; exits 1 when any check has a finding, 2 when a check
# cannot run (a missing tool), 0 otherwise. CTest runs it as the test `lint` (label lint), so
# the suite, tools/test.sh and CI (.ci/run) fail on a finding.
#   tools/lint.sh                  every check on the tree this script belongs to
#   tools/lint.sh --root DIR       the same on the tree DIR (how tests/lint/ shows a failure)
#
# DESIGN: one function per check, check_NAME, run from the root directory (the current
# directory when it runs). A check prints its findings and returns 1 when there are any, 2
# when it cannot run; every check runs even when an earlier one failed, so one run shows
# everything. Adding a check is writing its function and two lines at the end
# (`check_NAME` and `note $?`).
#
#   shell   shellcheck, with the settings of .shellcheckrc, on every shell script under
#           tools/, tests/ and bench/ (*.sh, any file starting with a sh or bash #! line,
#           the launcher template tools/mpiwatch.in) and on .ci/run.
#   layering  the layering of docs/architecture.md: no file under proto/ includes a file of
#           another folder, no proto/ target links a target defined elsewhere, tools/ defines
#           no library (add_library) and no CMake file links a library defined under tools/.
#   format  clang-format (the style of .clang-format) on every C source and header outside
#           build trees: `clang-format -i FILE` makes a finding go away.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --root ]; then
    [ $# = 2 ] || { echo "usage: lint.sh [--root DIR]" >&2; exit 2; }
    root=$(cd "$2" && pwd) || exit 2
fi
cd "$root" || exit 2

# shell_scripts: the files check_shell checks, one per line, relative to the root. The fuzz
# corpora are inputs, not scripts.
shell_scripts() {
    local f
    find tools tests bench -path tests/fuzz/corpus -prune -o -type f -print 2>/dev/null |
        LC_ALL=C sort | while IFS= read -r f; do
            case $f in
                *.sh | tools/mpiwatch.in) echo "$f" ;;
                *) head -n 1 "$f" 2>/dev/null | grep -Eq '^#!.*[/ ](ba)?sh( |$)' && echo "$f" ;;
            esac
        done
    [ ! -f .ci/run ] || echo .ci/run
}

check_shell() {
    local scripts=()
    command -v shellcheck >/dev/null || {
        echo "lint: shellcheck is not installed (tools/setup.sh installs it)" >&2
        return 2
    }
    mapfile -t scripts < <(shell_scripts)
    [ ${#scripts[@]} -gt 0 ] || { echo "lint: no shell scripts under $root" >&2; return 2; }
    # The settings (followed sources, disabled checks) are in .shellcheckrc at the root.
    shellcheck --format=gcc "${scripts[@]}"
    case $? in
        0) ;;
        1) return 1 ;;
        *) echo "lint: shellcheck could not check the scripts" >&2; return 2 ;;
    esac
    echo "lint: shellcheck: ${#scripts[@]} scripts, no finding"
}

# cmake_calls: the calls of add_library, add_executable and target_link_libraries in every
# CMakeLists.txt and *.cmake file of the tree (build trees, those with a CMakeCache.txt, left
# out), one per line: FILE:LINE COMMAND ARG...; a call that spans lines is joined, comments
# are dropped.
cmake_calls() {
    local d files=()
    for d in */; do
        d=${d%/}
        [ ! -f "$d/CMakeCache.txt" ] || continue
        mapfile -t -O ${#files[@]} files < <(find "$d" -name CMakeLists.txt -o -name '*.cmake')
    done
    [ ! -f CMakeLists.txt ] || files+=(CMakeLists.txt)
    [ ${#files[@]} -gt 0 ] || return 0
    awk '
        function emit() {
            gsub(/[ \t]+/, " ", args); sub(/^ /, "", args); sub(/ $/, "", args)
            print FILENAME ":" start " " cmd " " args
        }
        FNR == 1 { depth = 0 }
        {
            s = $0; sub(/#.*/, "", s)
            if (depth == 0) {
                re = "(^|[^a-z0-9_])(add_library|add_executable|target_link_libraries)[ \t]*[(]"
                if (!match(tolower(s), re)) next
                cmd = tolower(substr(s, RSTART, RLENGTH)); gsub(/[^a-z_]/, "", cmd)
                s = substr(s, RSTART + RLENGTH); depth = 1; args = ""; start = FNR
            }
            for (i = 1; i <= length(s); i++) {
                c = substr(s, i, 1)
                if (c == "(") depth++
                else if (c == ")" && --depth == 0) { emit(); break }
                args = args c
            }
            if (depth > 0) args = args " "
        }' "${files[@]}"
}

# check_layering: the layering of docs/architecture.md. proto/ depends on no component: its
# files include only proto/'s own files, the sources generated from its .proto files and
# system headers; its CMake targets link no target defined elsewhere in the tree. tools/ holds
# programs only: no add_library there, and no CMake file links a library defined there.
check_layering() {
    local found=0 f line inc where cmd name rest arg tops=() calls=() args=()
    local -A outside=() in_tools=()
    [ -d proto ] || { echo "lint: layering: no proto/ under $root" >&2; return 2; }
    for f in */; do
        [ "$f" = proto/ ] || tops+=("${f%/}")
    done
    # Includes: "x.h" must be a file of proto/ (or NAME.pb-c.h generated from proto/NAME.proto);
    # <dir/x.h> must not name another top-level folder of the tree.
    while IFS= read -r line; do
        f=${line%%:*}
        inc=$(printf '%s\n' "$line" | grep -Eo '#[[:space:]]*include[[:space:]]*["<][^">]*[">]')
        inc=${inc#*include}
        inc=${inc#"${inc%%[\"<]*}"}
        case $inc in
            \"*\")
                inc=${inc#\"}
                inc=${inc%\"}
                if [ -f "proto/$inc" ] && [ "${inc#*..}" = "$inc" ]; then
                    continue
                fi
                case $inc in
                    */*) ;;
                    *.pb-c.h) [ ! -f "proto/${inc%.pb-c.h}.proto" ] || continue ;;
                esac
                ;;
            \<*\>)
                inc=${inc#<}
                inc=${inc%>}
                case " ${tops[*]} " in
                    *" ${inc%%/*} "*) [ "${inc#*/}" != "$inc" ] || continue ;;
                    *) continue ;;
                esac
                ;;
            *) continue ;;
        esac
        rest=${line#*:}
        echo "$f:${rest%%:*}: proto/ includes $inc, which is not in proto/"
        found=1
    done < <(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' proto 2>/dev/null |
        LC_ALL=C sort)
    # CMake: where each target is defined, then who links what.
    mapfile -t calls < <(cmake_calls)
    for line in "${calls[@]}"; do
        where=${line%% *}
        rest=${line#* }
        cmd=${rest%% *}
        rest=${rest#* }
        name=${rest%% *}
        [ "$cmd" != target_link_libraries ] || continue
        case $where in
            tools/*)
                if [ "$cmd" = add_library ]; then
                    echo "$where: tools/ defines the library $name (tools/ holds programs only)"
                    found=1
                    in_tools[$name]=1
                fi
                ;;
            proto/*) ;;
            *) outside[$name]=1 ;;
        esac
    done
    for line in "${calls[@]}"; do
        where=${line%% *}
        rest=${line#* }
        cmd=${rest%% *}
        [ "$cmd" = target_link_libraries ] || continue
        rest=${rest#* }
        name=${rest%% *}
        read -ra args <<<"${rest#"$name"}"
        for arg in "${args[@]}"; do
            if [ -n "${in_tools[$arg]:-}" ]; then
                echo "$where: $name links $arg, a library defined under tools/"
                found=1
            fi
            case $where in
                proto/*)
                    if [ -n "${outside[$arg]:-}" ]; then
                        echo "$where: proto's $name links $arg, a target defined outside proto/"
                        found=1
                    fi
                    ;;
            esac
        done
    done
    [ "$found" = 0 ] || return 1
    echo "lint: layering: proto/ includes and links only itself, tools/ defines no library"
}

# c_sources: the files check_format checks, one per line, relative to the root: every C file
# of the tree but build trees, the install tree out/ and the fuzz corpora.
c_sources() {
    find . \( -name .git -o -path './build*' -o -path ./out -o -path ./tests/fuzz/corpus \) \
        -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' |
        LC_ALL=C sort
}

check_format() {
    command -v clang-format >/dev/null || {
        echo "lint: format: clang-format is not installed (tools/setup.sh installs it)"
        return 2
    }
    [ -f .clang-format ] || { echo "lint: format: no .clang-format at the root"; return 1; }
    local f n=0 bad=0
    while IFS= read -r f; do
        n=$((n + 1))
        if ! clang-format --style=file --dry-run --Werror "$f" >/dev/null 2>&1; then
            echo "$f: not formatted as .clang-format says (clang-format -i $f)"
            bad=$((bad + 1))
        fi
    done < <(c_sources)
    [ "$bad" = 0 ] || return 1
    echo "lint: format: $n C files formatted"
}

# note STATUS: folds a check's status into the script's (2, a check that could not run, wins).
rc=0
note() {
    if [ "$1" = 2 ]; then
        rc=2
    elif [ "$1" != 0 ] && [ "$rc" = 0 ]; then
        rc=1
    fi
}

check_shell
note $?
check_layering
note $?
check_format
note $?
case $rc in
    1) echo "lint: FAILED (findings above)" >&2 ;;
    2) echo "lint: FAILED (a check could not run, above)" >&2 ;;
esac
exit "$rc"
