# bash completion for iour-restrict(1)                    -*- shell-script -*-
# SPDX-License-Identifier: MIT
#
# Installed by `make install` as share/bash-completion/completions/iour-restrict.
# Opcode names and groups come from the tool itself (`names`, `groups`), so
# they follow the library it was built with.

# Words the tool lists: request opcodes, register opcodes, SQE flags, groups.
_iour_restrict_names()
{
    local tool=$1 what=$2
    case $what in
        groups) "$tool" groups 2>/dev/null | awk '/^@/ {print $1}' ;;
        *) "$tool" names "$what" 2>/dev/null | awk '!/^#/ && NF >= 2 {print $2}' ;;
    esac
}

# Completes a comma-separated list of words: only the part after the last comma.
_iour_restrict_list()
{
    local cur=$1; shift
    local prefix="" last=$cur
    if [[ $cur == *,* ]]; then
        prefix=${cur%,*},
        last=${cur##*,}
    fi
    local IFS=$'\n'
    COMPREPLY=($(compgen -P "$prefix" -W "$*" -- "$last"))
    compopt -o nospace 2>/dev/null
}

_iour_restrict_files()
{
    local cur=$1 ext=$2
    if declare -F _filedir >/dev/null 2>&1; then
        _filedir "$ext"
    else
        local IFS=$'\n'
        COMPREPLY=($(compgen -f -X "!*.$ext" -- "$cur") $(compgen -d -- "$cur"))
    fi
}

_iour_restrict()
{
    local cur prev words cword
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
    local tool=${words[0]}
    local commands="probe names ruleset filter sim verify exec run compile check lint explain groups learn merge prove agent seccomp-profile runc-shim help"

    if ((cword == 1)); then
        COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur"))
        return
    fi
    local cmd=${words[1]} i

    # After "--", run, exec and learn take a command and its arguments.
    for ((i = 2; i < cword; i++)); do
        if [[ ${words[i]} == -- ]]; then
            case $cmd in
                run|exec|learn)
                    if declare -F _command_offset >/dev/null 2>&1; then
                        _command_offset $((i + 1))
                    elif ((cword == i + 1)); then
                        COMPREPLY=($(compgen -c -- "$cur"))
                    else
                        COMPREPLY=($(compgen -f -- "$cur"))
                    fi
                    return ;;
            esac
        fi
    done

    local opts=""
    case $cmd in
        run)
            opts="--best-effort --soft --hard --broker= --companion= --existing-rings= --allow-ptrace --audit --audit= --audit-out --log-denials --log-denials= --report-interval --quiet --help --"
            case $prev in
                --audit-out) COMPREPLY=($(compgen -f -- "$cur")); return ;;
                --report-interval) return ;;
                --companion) COMPREPLY=($(compgen -W "enosys eperm off" -- "$cur")); return ;;
                --broker) COMPREPLY=($(compgen -W "auto off" -- "$cur")); return ;;
                --existing-rings) COMPREPLY=($(compgen -W "close refuse keep" -- "$cur")); return ;;
            esac
            if [[ $cur == --companion=* ]]; then
                COMPREPLY=($(compgen -P --companion= -W "enosys eperm off" -- "${cur#--companion=}"))
                return
            fi
            if [[ $cur == --broker=* ]]; then
                COMPREPLY=($(compgen -P --broker= -W "auto off" -- "${cur#--broker=}"))
                return
            fi
            if [[ $cur == --existing-rings=* ]]; then
                COMPREPLY=($(compgen -P --existing-rings= -W "close refuse keep" -- "${cur#--existing-rings=}"))
                return
            fi
            if [[ $cur == --audit=* || $cur == --log-denials=* ]]; then
                COMPREPLY=($(compgen -P "${cur%%=*}=" -f -- "${cur#*=}"))
                return
            fi ;;
        compile)
            opts="--kernel --level --format --mechanism --help"
            case $prev in
                --kernel) return ;;
                --mechanism) COMPREPLY=($(compgen -W "task broker companion ring" -- "$cur")); return ;;
                --level) COMPREPLY=($(compgen -W "0 1 2 3 4 5" -- "$cur")); return ;;
                --format) COMPREPLY=($(compgen -W "text json c" -- "$cur")); return ;;
            esac ;;
        check)
            opts="--op --register-op --sqe-flags --kernel --expect --mechanism --help"
            case $prev in
                --mechanism) COMPREPLY=($(compgen -W "auto task broker companion ring" -- "$cur")); return ;;
                --op) COMPREPLY=($(compgen -W "$(_iour_restrict_names "$tool" ops)" -- "$cur")); return ;;
                --register-op) COMPREPLY=($(compgen -W "$(_iour_restrict_names "$tool" register)" -- "$cur")); return ;;
                --sqe-flags) _iour_restrict_list "$cur" none all $(_iour_restrict_names "$tool" flags); return ;;
                --kernel) return ;;
                --expect) COMPREPLY=($(compgen -W "allow deny" -- "$cur")); return ;;
            esac
            # FIELD=VALUE assignments once the policy is given.
            if [[ $cur != -* ]] && ((cword > 2)) && [[ ${words[cword-1]} != --* ]]; then
                COMPREPLY=($(compgen -W "user_data= sqe_flags= family= type= protocol= flags= mode= resolve= port= addr4= addr6= addrlen=" -- "$cur"))
                compopt -o nospace 2>/dev/null
                [[ ${#COMPREPLY[@]} -gt 0 ]] && return
            fi ;;
        lint)
            opts="--ignore --kernel --since --mechanism --help"
            case $prev in
                --mechanism) COMPREPLY=($(compgen -W "task broker companion ring" -- "$cur")); return ;;
                --ignore)
                    _iour_restrict_list "$cur" uring-cmd msg-ring socket-unfiltered \
                        openat-unfiltered register-files default-allow fallback-open \
                        companion-off compat-soft group-grew effect-bypass \
                        fixed-file-bypass dead-entry flags-eq no-sync sqpoll-refused \
                        companion-missing
                    return ;;
                --kernel|--since) return ;;
            esac ;;
        explain)
            opts="--kernel --mechanism --help"
            case $prev in
                --kernel) return ;;
                --mechanism) COMPREPLY=($(compgen -W "task broker companion ring" -- "$cur")); return ;;
            esac ;;
        groups)
            opts="--kernel --help"
            case $prev in
                --kernel) return ;;
            esac
            if [[ $cur != -* ]]; then
                COMPREPLY=($(compgen -W "$(_iour_restrict_names "$tool" groups)" -- "$cur"))
                return
            fi ;;
        learn)
            # learn: its options (the learn command's own; see its --help).
            opts="--output --pid --cgroup --duration --timeout --stop-at-exit --per-task --buffer-kb --quiet --help --"
            case $prev in
                --output|-o) _iour_restrict_files "$cur" json; return ;;
                --buffer-kb) COMPREPLY=($(compgen -W "1024 8192 65536" -- "$cur")); return ;;
                --pid) COMPREPLY=($(compgen -W "$(ps -e -o pid= 2>/dev/null)" -- "$cur")); return ;;
                --cgroup) COMPREPLY=($(compgen -d -- "$cur")); return ;;
                --duration|--timeout) return ;;
            esac
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return ;;
        merge)
            # merge: -o OUT and policy files.
            case $prev in
                --output|-o) _iour_restrict_files "$cur" json; return ;;
            esac
            if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "--output --help" -- "$cur"))
            else
                _iour_restrict_files "$cur" json
            fi
            return ;;
        agent)
            opts="--socket --log --log-format --policy-dir --config --default-policy --max-rings --control --query --log-denials --report-interval --help"
            case $prev in
                --max-rings) COMPREPLY=($(compgen -W "0 1024" -- "$cur")); return ;;
                --report-interval) COMPREPLY=($(compgen -W "1 10 60" -- "$cur")); return ;;
                --log-format) COMPREPLY=($(compgen -W "text json" -- "$cur")); return ;;
                --config|--default-policy) _iour_restrict_files "$cur" json; return ;;
                --socket|-s|--log|-l|--control|--query)
                    local IFS=$'\n'
                    COMPREPLY=($(compgen -f -- "$cur"))
                    return ;;
                --policy-dir|-p)
                    local IFS=$'\n'
                    COMPREPLY=($(compgen -d -- "$cur"))
                    return ;;
            esac
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return ;;
        seccomp-profile)
            opts="--listener-path --listener-metadata --engine --input --keep-peer-calls --output --help"
            case $prev in
                --engine) COMPREPLY=($(compgen -W "docker podman containerd oci" -- "$cur")); return ;;
                --input|--output|-o) _iour_restrict_files "$cur" json; return ;;
                --listener-path)
                    local IFS=$'\n'
                    COMPREPLY=($(compgen -f -- "$cur"))
                    return ;;
                --listener-metadata) return ;;
            esac
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return ;;
        runc-shim)
            opts="--socket --policy-dir --env --runc --help --"
            case $prev in
                --socket|--runc)
                    local IFS=$'\n'
                    COMPREPLY=($(compgen -f -- "$cur"))
                    return ;;
                --policy-dir)
                    local IFS=$'\n'
                    COMPREPLY=($(compgen -d -- "$cur"))
                    return ;;
                --env) COMPREPLY=($(compgen -W "IOUR_RESTRICT_POLICY" -- "$cur")); return ;;
            esac
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return ;;
        exec)
            opts="--companion-errno --no-new-privs --deny-existing --existing-rings --quiet --help --"
            case $prev in
                --companion-errno) COMPREPLY=($(compgen -W "ENOSYS EPERM EACCES" -- "$cur")); return ;;
                --existing-rings) COMPREPLY=($(compgen -W "close refuse keep" -- "$cur")); return ;;
            esac
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return ;;
        probe)
            opts="--json --no-cache --min-level --help"
            [[ $prev == --min-level ]] && { COMPREPLY=($(compgen -W "0 1 2 3 4 5" -- "$cur")); return; } ;;
        names)
            opts="ops register flags all --kernel --help"
            [[ $prev == --kernel ]] && return
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return ;;
        ruleset|verify)
            opts="--allow-op --deny-ops --allow-register --deny-register --flags-allowed --flags-required --help"
            if [[ $cmd == ruleset ]]; then
                opts+=" --kernel --running --op-last --reg-last --coupled --split --format"
            else
                opts+=" --timeout"
            fi
            case $prev in
                --allow-op) _iour_restrict_list "$cur" $(_iour_restrict_names "$tool" ops); return ;;
                --allow-register) _iour_restrict_list "$cur" $(_iour_restrict_names "$tool" register); return ;;
                --flags-allowed|--flags-required)
                    _iour_restrict_list "$cur" none all $(_iour_restrict_names "$tool" flags); return ;;
                --format) COMPREPLY=($(compgen -W "text hex c" -- "$cur")); return ;;
                --kernel|--op-last|--reg-last|--timeout) return ;;
            esac
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return ;;
        filter|sim)
            opts="--op --allow --deny --default --max-insns --addr4-literal --help"
            if [[ $cmd == filter ]]; then
                opts+=" --format"
            else
                opts+=" --ctx --expect --show-ctx"
            fi
            case $prev in
                --op) COMPREPLY=($(compgen -W "$(_iour_restrict_names "$tool" ops)" -- "$cur")); return ;;
                --default|--expect) COMPREPLY=($(compgen -W "allow deny" -- "$cur")); return ;;
                --format) COMPREPLY=($(compgen -W "text c raw" -- "$cur")); return ;;
                --allow|--deny|--ctx|--max-insns) return ;;
            esac
            COMPREPLY=($(compgen -W "$opts" -- "$cur"))
            return ;;
        prove)
            # prove: rules as filter's, or policy files (below).
            opts="--op --allow --deny --default --addr4-literal --program --kernel --timeout --mutate --quiet --help"
            case $prev in
                --op) COMPREPLY=($(compgen -W "$(_iour_restrict_names "$tool" ops)" -- "$cur")); return ;;
                --default) COMPREPLY=($(compgen -W "allow deny" -- "$cur")); return ;;
                --program) COMPREPLY=($(compgen -f -- "$cur")); return ;;
                --allow|--deny|--kernel|--timeout|--mutate) return ;;
            esac ;;
        help)
            ((cword == 2)) && COMPREPLY=($(compgen -W "${commands/help/} rules" -- "$cur"))
            return ;;
        *) return ;;
    esac

    # run, compile, check, lint, explain, groups, prove: options, or the policy file.
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$opts" -- "$cur"))
        [[ $cur == --companion=* || ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
        return
    fi
    _iour_restrict_files "$cur" json
} &&
    complete -F _iour_restrict iour-restrict

# ex: filetype=sh
