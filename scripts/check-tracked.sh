#!/bin/sh
# Fail when git tracks a file that .gitignore calls a build output: a build
# output committed by mistake (a cargo target/ directory, objects, coverage
# counts, Python bytecode) is matched by the ignore rules, which `git add`
# alone would have refused.  Run by make lint.
#   check-tracked.sh [DIR]      (default: the current directory)
# Outside a git checkout (a release tarball) there is nothing to check: the
# step says so and passes.
set -u
dir=${1:-.}
if ! command -v git > /dev/null 2>&1 ||
	! git -C "$dir" rev-parse --is-inside-work-tree > /dev/null 2>&1; then
	echo 'check-tracked: skipped: not a git checkout (or no git)'
	sh "$(dirname "$0")/skip-note.sh" 'tracked build outputs: not a git checkout (or no git)'
	exit 0
fi
bad=$(git -C "$dir" ls-files --cached --ignored --exclude-standard) || exit 1
if [ -n "$bad" ]; then
	n=$(printf '%s\n' "$bad" | wc -l | tr -d ' ')
	echo "check-tracked: $n tracked file(s) match .gitignore (build outputs must not be committed):"
	printf '%s\n' "$bad" | head -n 20 | sed 's/^/  /'
	[ "$n" -gt 20 ] && echo "  ... and $((n - 20)) more"
	echo "check-tracked: remove them with 'git rm -r --cached PATH' (or narrow .gitignore if one is a source)"
	exit 1
fi
exit 0
