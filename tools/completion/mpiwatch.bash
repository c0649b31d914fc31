# bash completion for mpiwatch (installed as share/bash-completion/completions/mpiwatch).
#
# The subcommands, the options of run and demo and the export formats are read from
# `mpiwatch --help` once per shell, so the completion always offers what the installed
# launcher accepts; a fixed list is the fallback when the launcher cannot be run.

_mpiwatch_help_parse() {
    [ -n "${_mpiwatch_cmds-}" ] && return
    local help line
    local -a w
    help=$(command mpiwatch --help 2>/dev/null) || help=''
    _mpiwatch_cmds='' _mpiwatch_run_opts='' _mpiwatch_formats=''
    while IFS= read -r line; do
        case $line in
            'Usage: '* | '       '*)
                # "Usage: mpiwatch run [OPTIONS]..." and the usage lines under it
                line=${line#Usage: }
                read -ra w <<<"$line"
                if [ "${w[0]-}" = mpiwatch ] && [[ ${w[1]-} == [a-z]* ]]; then
                    _mpiwatch_cmds+=" ${w[1]}"
                fi
                if [[ $line == *'--format '* ]]; then
                    line=${line#*--format }
                    line=${line%% *}
                    _mpiwatch_formats=${line//|/ }
                fi
                ;;
            '  '[a-z]*)
                # "  keygen Write a CURVE key pair: ..."
                read -ra w <<<"$line"
                [[ ${w[0]} =~ ^[a-z]+$ ]] && _mpiwatch_cmds+=" ${w[0]}"
                ;;
            '  --'*)
                read -ra w <<<"$line"
                _mpiwatch_run_opts+=" ${w[0]}"
                ;;
        esac
    done <<<"$help"
    if [ -z "$_mpiwatch_cmds" ]; then
        _mpiwatch_cmds="run exec demo export steer keygen"
    fi
    # each name once, in the order first seen
    local c seen=" " out=
    for c in $_mpiwatch_cmds; do
        [[ $seen == *" $c "* ]] || { out+=" $c"; seen+="$c "; }
    done
    _mpiwatch_cmds=${out# }
    [ -n "$_mpiwatch_formats" ] || _mpiwatch_formats="perfetto csv jsonl summary"
}

_mpiwatch() {
    local cur prev cmd i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    _mpiwatch_help_parse

    if [ "$COMP_CWORD" -eq 1 ]; then
        mapfile -t COMPREPLY < <(compgen -W "$_mpiwatch_cmds --help --version" -- "$cur")
        return
    fi
    cmd=${COMP_WORDS[1]}

    # After "--" in run and exec: the command to run, completed as a command line.
    for ((i = 2; i < COMP_CWORD; i++)); do
        if [ "${COMP_WORDS[i]}" = "--" ]; then
            if declare -F _command_offset >/dev/null; then
                _command_offset $((i + 1))
            else
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            fi
            return
        fi
    done

    case $cmd in
        run | demo)
            case $prev in
                --summary-json | --report | --stats-json | --record | --snapshot | --rules)
                    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                    return ;;
                --window-ms | --endpoint | --grace | --np | --collector-arg)
                    return ;;
            esac
            if [[ $cur == -* ]]; then
                local extra=
                [ "$cmd" = demo ] && extra="--np --steer --rules"
                mapfile -t COMPREPLY < <(compgen -W "$_mpiwatch_run_opts $extra --" -- "$cur")
            elif [ "$cmd" = run ]; then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            fi
            ;;
        exec)
            mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            ;;
        export)
            case $prev in
                --format | -f)
                    mapfile -t COMPREPLY < <(compgen -W "$_mpiwatch_formats" -- "$cur")
                    return ;;
            esac
            if [[ $cur == -* ]]; then
                mapfile -t COMPREPLY < <(compgen -W "--format --output --per-rank --help" -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi
            ;;
        steer)
            [[ $cur == -* ]] &&
                mapfile -t COMPREPLY < <(compgen -W "--ranks --timeout-ms --curve-server --curve-key" -- "$cur")
            ;;
        keygen)
            [[ $cur == -* ]] && mapfile -t COMPREPLY < <(compgen -W "--force --help" -- "$cur")
            ;;
        *)
            mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            ;;
    esac
}

complete -F _mpiwatch mpiwatch
