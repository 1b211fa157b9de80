#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/live/learn_guest.sh in a kernel guest (scripts/guest-payloads/
# 40-fio.sh): `iour-restrict learn` records fio's io_uring use through
# tracefs, then fio runs under the learned policy and under it without
# WRITE.  Its "learn_guest: N passed, M failed" line becomes the guest's
# "N passed, M failed" (every check counted).  A SKIP is a failure, since
# the guest has all it needs (fio, the tool, root, /sys; learn reads
# io_uring_submit_req from 6.2 and io_uring_submit_sqe on 5.10 and 6.1),
# except on a kernel that has neither submit tracepoint: a skip, saying so.
PATH=/usr/bin:/bin:/progs:/tools:$PATH
export PATH
n=
rel=
read -r rel </proc/sys/kernel/osrelease || true
while IFS= read -r l; do
	echo "$l"
	case $l in
	"learn_guest: "*" passed, "*" failed") n=${l#learn_guest: } ;;
	"learn_guest: SKIP"*"has neither tracepoint io_uring/io_uring_submit_req nor io_uring/io_uring_submit_sqe"*)
		echo "learn_guest_run: skipped: Linux $rel has neither io_uring_submit_req nor io_uring_submit_sqe (learn needs one)"
		n="0 passed, 0 failed, 1 skipped"
		;;
	"learn_guest: SKIP"*) n="0 passed, 1 failed" ;;
	esac
done <<EOT
$(/bin/sh /progs/learn_guest.sh /tools/iour-restrict /tmp 2>&1; echo "learn_guest: exit status $?")
EOT
[ -n "$n" ] || n="0 passed, 1 failed"
echo "$n"
case $n in *" 0 failed" | *" 0 failed, "*) exit 0 ;; *) exit 1 ;; esac
