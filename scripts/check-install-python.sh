#!/bin/sh
# Part of `make check-install`: the Python bindings from installed files.
# `pip install` of bindings/python into a fresh venv (Debian's python3 with
# --system-site-packages for Debian's setuptools and pytest; offline:
# --no-index --no-build-isolation), then the pytest suite and the examples
# run from that installed copy against the library staged under
#   check-install-python.sh STAGE_LIBDIR WORKDIR
# found by its SONAME through LD_LIBRARY_PATH (no IOURING_RESTRICT_LIBRARY).
# Environment: PYTHON (default /usr/bin/python3).
set -eu
PYTHON=${PYTHON:-/usr/bin/python3}
libdir=$1
work=$2
top=$(pwd)
fail() { echo "check-install: FAILED (python): $*"; exit 1; }
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
# A copy, so that pip's in-tree build leaves nothing in the sources.
cp -r bindings/python "$work/src"
rm -rf "$work/src/build" "$work/src"/*.egg-info
"$PYTHON" -m venv --system-site-packages "$work/venv" > "$work/venv.log" 2>&1 ||
	{ cat "$work/venv.log"; fail "python3 -m venv (Debian package python3-venv)"; }
"$work/venv/bin/python" -m pip install --no-index --no-build-isolation "$work/src" \
	> "$work/pip.log" 2>&1 || { cat "$work/pip.log"; fail "pip install ./bindings/python"; }
py=$work/venv/bin/python
export LD_LIBRARY_PATH="$libdir" PYTHONDONTWRITEBYTECODE=1
unset IOURING_RESTRICT_LIBRARY PYTHONPATH || true
# Imported from the venv's site-packages.
got=$(cd "$work" && "$py" -c 'import iouring_restrict as ir, os; print(os.path.realpath(ir.__file__))')
case $got in
"$work/venv/lib/"*/site-packages/iouring_restrict/__init__.py*) ;;
*) fail "iouring_restrict imported from '$got', not the venv" ;;
esac
# The loader resolves the SONAME to the staged copy.
loaded=$(cd "$work" && "$py" -c 'import iouring_restrict
for l in open("/proc/self/maps"):
    if "libiouring-restrict" in l: print(l.split()[-1]); break')
[ "$(realpath "$loaded")" = "$(realpath "$libdir/libiouring-restrict.so.1")" ] ||
	fail "the installed package loaded '$loaded', not the staged library"
# The tests from the sources, the package from the venv (pytest puts the
# tests' directory on sys.path, not bindings/python).
(cd "$work" && "$py" -m pytest -q -p no:cacheprovider "$top/bindings/python/tests") ||
	fail "pytest against the installed package"
for e in "$top"/examples/python/*.py; do
	(cd "$work" && "$py" "$e" > "$work/example.log" 2>&1) ||
		{ cat "$work/example.log"; fail "$(basename "$e") from the installed package"; }
done
echo "check-install: python: pip install (offline, venv) ok; pytest and examples ok against $libdir"
