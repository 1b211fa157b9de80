#!/bin/sh
# The static assertions that tie every copy of a kernel fact to
# lib/base/kernel_facts.def (doc/design.md, "Kernel facts") must bite: a
# copy of lib/base with one row of the table made wrong must not compile,
# and the unchanged copy must.  Each case is a compile of one file
# (-fsyntax-only), so the whole check takes about a second.  Run by make lint.
#   check-kernel-facts.sh [CC]      (default: cc)
set -u
cc=${1:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kfacts.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
cases=0

# compile FILE (names.c, miniring.c, ...) of the copy; 0 if it compiles
compile() {
	"$cc" -std=c11 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -I"$tmp" \
		-fsyntax-only "$tmp/base/$1" > "$tmp/out" 2>&1
}

# case NAME FILE SED: FILE must fail with a static assertion once SED is
# applied to the table
case_() {
	cases=$((cases + 1))
	rm -rf "$tmp/base" && cp -r lib/base "$tmp/base" || exit 1
	sed -i "$3" "$tmp/base/kernel_facts.def"
	if cmp -s lib/base/kernel_facts.def "$tmp/base/kernel_facts.def"; then
		echo "check-kernel-facts: $1: the edit changed nothing (stale case)"
		fails=$((fails + 1))
	elif compile "$2"; then
		echo "check-kernel-facts: $1: $2 still compiles"
		fails=$((fails + 1))
	elif ! grep -q -e 'static assert' -e 'Werror' "$tmp/out"; then
		echo "check-kernel-facts: $1: $2 fails for another reason:"
		sed 's/^/  /' "$tmp/out" | head -n 5
		fails=$((fails + 1))
	fi
}

cases=$((cases + 1))
rm -rf "$tmp/base" && cp -r lib/base "$tmp/base" || exit 1
for f in names.c miniring.c kernels.c schema.c; do
	if ! compile "$f"; then
		echo "check-kernel-facts: the unchanged copy of lib/base/$f does not compile:"
		sed 's/^/  /' "$tmp/out" | head -n 5
		fails=$((fails + 1))
	fi
done

case_ "request opcode number" names.c 's/^IOUR_KF_OP(PIPE, 62,/IOUR_KF_OP(PIPE, 63,/'
case_ "request opcode missing" names.c '/^IOUR_KF_OP(URING_CMD128,/d'
case_ "register opcode number" names.c 's/^IOUR_KF_REG(REGISTER_QUERY, 35,/IOUR_KF_REG(REGISTER_QUERY, 36,/'
case_ "SQE flag bit" names.c 's/^IOUR_KF_SQE(ASYNC, 4,/IOUR_KF_SQE(ASYNC, 5,/'
case_ "setup flag bit" miniring.c 's/^IOUR_KF_SETUP(R_DISABLED, 6,/IOUR_KF_SETUP(R_DISABLED, 7,/'
case_ "syscall number" miniring.c 's/^IOUR_KF_NR(SETUP, 425,/IOUR_KF_NR(SETUP, 424,/'
case_ "generation missing" kernels.c '/^IOUR_KF_GEN(NEWEST,/d'

if [ "$fails" -ne 0 ]; then
	echo "check-kernel-facts: $fails of $cases cases failed"
	exit 1
fi
echo "check-kernel-facts: $cases cases: every wrong row fails the build, the table as it is compiles"
