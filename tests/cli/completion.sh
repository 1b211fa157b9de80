#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Checks the bash completion of iour-restrict by sourcing it and asking it
# to complete command lines, as bash does on TAB.  The expectations come
# from the tool itself where they can: every command its --help lists is
# offered, and every long option each command's --help names is offered
# for "--".
#
#   IOUR_TOOL=build/tools/iour-restrict tests/cli/completion.sh COMPLETION_FILE
set -u
comp=$1
tool=${IOUR_TOOL:?set IOUR_TOOL to the built iour-restrict}
fails=0
# The completion calls the tool by the name the user typed: put the built
# one first in PATH under its own name.
bindir=$(cd "$(dirname "$tool")" && pwd)
export PATH="$bindir:$PATH"
# shellcheck source=/dev/null
source "$comp" || { echo "completion.sh: cannot source $comp"; exit 1; }
compopt() { :; } # only valid while bash itself completes

# complete WORD... : the words of the line, the last one being completed.
complete_line()
{
    COMP_WORDS=("$@")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _iour_restrict iour-restrict "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
    printf '%s\n' "${COMPREPLY[@]}"
}

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# expect_has "LINE" WORD...: completing LINE offers every WORD.
expect_has()
{
    local line=$1; shift
    local got
    # shellcheck disable=SC2086
    if [ "${line: -1}" = " " ]; then got=$(complete_line $line ""); else got=$(complete_line $line); fi
    for w in "$@"; do
        grep -qxF -- "$w" <<<"$got" || fail "'$line' does not offer '$w' (offers: $(echo $got))"
    done
}

# expect_only "LINE" WORD...: completing LINE offers exactly the WORDs.
expect_only()
{
    local line=$1; shift
    local got want
    # shellcheck disable=SC2086
    if [ "${line: -1}" = " " ]; then got=$(complete_line $line ""); else got=$(complete_line $line); fi
    got=$(sort <<<"$got" | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
    [ "$got" = "$want" ] || fail "'$line' offers '$got', expected '$want'"
}

# 1. Every command of the tool's usage is offered first.
cmds=$("$tool" --help | awk '/^Commands:/ {on=1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on=0}')
[ -n "$cmds" ] || fail "no command list in '$tool --help'"
# shellcheck disable=SC2086
expect_has "iour-restrict " $cmds --help --version

# 2. Every long option a command's --help names is offered for "--".
for c in $cmds; do
    [ "$c" = help ] && continue
    opts=$("$tool" "$c" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
    got=$(complete_line iour-restrict "$c" --)
    for o in $opts; do
        grep -qxE -- "$o=?" <<<"$got" ||
            fail "'iour-restrict $c --' does not offer $o (its --help names it)"
    done
done

# 3. Values of options.
expect_only "iour-restrict compile p.json --format " text json c
expect_only "iour-restrict compile p.json --level " 0 1 2 3 4 5
expect_only "iour-restrict explain p.json --mechanism " task broker companion ring
expect_only "iour-restrict compile p.json --mechanism " task broker companion ring
expect_only "iour-restrict lint p.json --mechanism " task broker companion ring
expect_only "iour-restrict check p.json --mechanism " auto task broker companion ring
expect_only "iour-restrict run p.json --companion " enosys eperm off
expect_only "iour-restrict run p.json --companion=e" --companion=enosys --companion=eperm
expect_only "iour-restrict run p.json --broker " auto off
expect_only "iour-restrict run p.json --existing-rings=" --existing-rings=close --existing-rings=refuse --existing-rings=keep
expect_only "iour-restrict check p.json --expect " allow deny
expect_only "iour-restrict check p.json --op OPENA" OPENAT OPENAT2
expect_only "iour-restrict lint p.json --ignore uring-cmd,ms" uring-cmd,msg-ring
expect_only "iour-restrict ruleset --allow-op NOP,REA" NOP,READ NOP,READV NOP,READ_FIXED NOP,READ_MULTISHOT NOP,READV_FIXED
expect_has "iour-restrict check p.json --op OPENAT fl" flags=
expect_has "iour-restrict help " run compile check lint groups rules

# 4. Groups come from the tool.
groups=$("$tool" groups | awk '/^@/ {print $1}')
[ -n "$groups" ] || fail "'$tool groups' lists no group"
# shellcheck disable=SC2086
expect_only "iour-restrict groups " $groups

# 5. Policy files, and the command after "--".
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
touch "$dir/web.json" "$dir/notes.txt"
expect_has "iour-restrict compile $dir/w" "$dir/web.json"
got=$(complete_line iour-restrict lint "$dir/")
grep -qF notes.txt <<<"$got" && fail "a policy file argument offers notes.txt (not .json)"
expect_has "iour-restrict run p.json -- bas" bash
expect_has "iour-restrict exec -- bas" bash
mkdir "$dir/policies"
expect_only "iour-restrict agent --socket /run/iour.sock --policy-dir $dir/pol" "$dir/policies"

if [ "$fails" -gt 0 ]; then
    echo "completion.sh: $fails failure(s)"
    exit 1
fi
echo "completion.sh: the bash completion offers every command and option ($(echo $cmds | wc -w) commands)"
