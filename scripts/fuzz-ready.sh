#!/bin/sh
# Print the names of the fuzz targets whose required public symbols are all
# exported, i.e. listed in abi/symbols.txt (which check-symbols keeps equal to
# the shared object's exports).  A harness names them on one line:
#      * fuzz-requires: iour_cbpf_validate iour_cbpf_run
# A harness without such a line is always ready.
#   fuzz-ready.sh SYMBOLS_TXT FILE.c...
set -eu
syms=$1
shift
for f in "$@"; do
	ok=1
	for s in $(sed -n 's|.*fuzz-requires:\([^*]*\).*|\1|p' "$f"); do
		grep -qx "$s" "$syms" || ok=0
	done
	[ $ok -eq 1 ] && basename "$f" .c
done
exit 0
