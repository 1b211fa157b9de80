#!/bin/sh
# Self-test of scripts/guest.sh's choice of accelerator, with a stand-in
# qemu-system-x86_64 (nothing is booted or downloaded): a KVM boot that
# stops with "KVM internal error", or whose /init has not started after
# GUEST_KVM_START seconds, is cut short and booted again under TCG;
# GUEST_ACCEL=kvm refuses that fallback; GUEST_ACCEL=tcg never tries KVM.
set -u
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
mkdir -p "$dir/bin" "$dir/o/guests/kernels/fake-kernel"
echo kernel >"$dir/o/guests/kernels/fake-kernel/vmlinuz"
echo initrd >"$dir/initrd"
: >"$dir/kvm"
cat >"$dir/bin/qemu-system-x86_64" <<'EOQ'
#!/bin/sh
echo "$*" >>"$QEMU_CALLS"
case "$*" in
*accel=kvm*)
	echo 'Booting from ROM...'
	if [ "${QEMU_KVM_SILENT:-}" != 1 ]; then
		echo 'KVM internal error. Suberror: 1'
		echo 'emulation failure'
	fi
	exec sleep 300
	;;
esac
echo 'guest kernel: Linux 6.1.0-fake #1 SMP'
echo 'guest level: 3'
echo '7 passed, 0 failed, 0 skipped'
EOQ
chmod +x "$dir/bin/qemu-system-x86_64"

run() { # NAME ACCEL EXPECTED-STATUS EXPECTED-CALLS(kvm,tcg pattern) GREP
	: >"$dir/calls"
	out=$(PATH="$dir/bin:$PATH" O="$dir/o" QEMU_CALLS="$dir/calls" GUEST_PKG=fake-kernel \
		GUEST_MIRROR=http://mirror.invalid/debian GUEST_TIMEOUT=60 GUEST_KVM_DEV="$dir/kvm" \
		GUEST_ACCEL=$2 scripts/guest.sh fakesuite fake "$dir/initrd" 2>&1)
	rc=$?
	calls=$(sed -n 's/.*accel=\([a-z]*\).*/\1/p' "$dir/calls" | tr '\n' ' ')
	if [ "$rc" -ne "$3" ] || [ "$calls" != "$4" ] || ! echo "$out" | grep -q "$5"; then
		echo "guest-accel-selftest: FAIL: $1: status $rc (want $3), boots '$calls' (want '$4')"
		echo "$out" | sed 's/^/    /'
		fails=$((fails + 1))
	else
		echo "guest-accel-selftest: ok: $1"
	fi
}
run 'auto: KVM fails, TCG boots' auto 0 'kvm tcg ' 'booting fake-kernel again under TCG'
run 'kvm: no fallback' kvm 1 'kvm ' 'forbids falling back to TCG'
run 'tcg: KVM never tried' tcg 0 'tcg ' '7 passed, 0 failed'
export QEMU_KVM_SILENT=1 GUEST_KVM_START=3
run 'auto: KVM boot that never starts /init, TCG boots' auto 0 'kvm tcg ' 'did not start within 3 s'
unset QEMU_KVM_SILENT GUEST_KVM_START
rm "$dir/kvm"
run 'auto: no /dev/kvm means TCG' auto 0 'tcg ' 'TCG: /dev/kvm is absent'
# An absolute O keeps everything under it (the private apt lists included),
# nothing lands below the source tree.
if [ -f "$dir/o/guests/apt/fakesuite/sources.list" ] && [ ! -e "tmp$dir" ] && [ ! -e ".$dir" ]; then
	echo "guest-accel-selftest: ok: absolute O keeps the apt lists under O"
else
	echo "guest-accel-selftest: FAIL: apt lists not under the absolute O ($dir/o)"
	fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]
