#!/bin/sh
# Self-test of scripts/check-tracked.sh and .gitignore: in a scratch git
# repository holding this checkout's .gitignore,
#  - what the build writes (cargo target/, objects, coverage counts, Python
#    bytecode, a libFuzzer crash in the top directory) is ignored;
#  - sources that look alike (a committed fuzz reproducer under tests/fuzz/,
#    a C file) are not;
#  - the check passes on a clean tree and fails once a build output is
#    tracked (git add -f), naming it; untracked outputs alone do not fail it.
set -u
top=$(pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
fail() {
	echo "check-tracked selftest: FAILED: $*"
	fails=$((fails + 1))
}
git init -q "$dir/repo" || exit 1
cd "$dir/repo" || exit 1
git config user.email selftest@localhost
git config user.name selftest
cp "$top/.gitignore" .gitignore
mkdir -p lib tests/fuzz/corpus/policy bindings/rust/iouring-restrict/target/debug \
	bindings/python/iouring_restrict/__pycache__ build/coverage
echo 'int x;' > lib/a.c
echo seed > tests/fuzz/corpus/policy/crash-reproducer
git add .gitignore lib/a.c tests/fuzz/corpus/policy/crash-reproducer ||
	fail 'sources that resemble build outputs could not be added'
git commit -q -m sources || exit 1

for f in bindings/rust/iouring-restrict/target/debug/libx.rlib build/libiouring-restrict.a \
	lib/a.o lib/a.gcda lib/a.gcno bindings/python/iouring_restrict/__pycache__/x.cpython-311.pyc \
	crash-da39a3ee leak-1 vgcore.123; do
	mkdir -p "$(dirname "$f")" && : > "$f"
	git check-ignore -q "$f" || fail "$f (a build output) is not ignored"
done
for f in lib/a.c tests/fuzz/corpus/policy/crash-reproducer; do
	git check-ignore -q --no-index "$f" && fail "$f (a source) is ignored"
done

sh "$top/scripts/check-tracked.sh" . > ../out 2>&1 ||
	fail "clean tree (untracked outputs only) fails: $(cat ../out)"
git add -f bindings/rust/iouring-restrict/target/debug/libx.rlib
git commit -q -m 'build output'
if sh "$top/scripts/check-tracked.sh" . > ../out 2>&1; then
	fail 'a tracked target/ file passes'
elif ! grep -q 'bindings/rust/iouring-restrict/target/debug/libx.rlib' ../out; then
	fail "the failure does not name the file: $(cat ../out)"
fi
git rm -q --cached bindings/rust/iouring-restrict/target/debug/libx.rlib
git commit -q -m 'untrack'
sh "$top/scripts/check-tracked.sh" . > ../out 2>&1 || fail 'fails again after git rm --cached'

[ $fails -eq 0 ] && echo 'check-tracked selftest: ok' || exit 1
