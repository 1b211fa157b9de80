# mk/guests.mk: real kernels booted under qemu.  Included by the top-level Makefile, whose
# variables (O, Q, ...) it uses.
#
# One guest suite (scripts/guest-initramfs.sh: the payloads in
# scripts/guest-payloads/, today the kernel-generation checks of
# tests/oldkernel/t_*.c and the live tier) booted by one helper
# (scripts/guest.sh) on the newest cloud kernel of each Debian suite
# (scripts/kernels.py: bullseye 5.10, bookworm 6.1, trixie 6.12,
# trixie-backports, sid 7.x, experimental if newer than both), three guests
# at a time on two CPUs (KERNELS_JOBS; scripts/kernels.py says why).  Prints a table and writes $(O)/kernels.json.  It
# downloads kernel packages (private apt lists in $(O)/guests/apt) and
# installs qemu-system-x86; `make check` runs it last (GUESTS=0 leaves it
# out, and says so).  KERNELS="bookworm sid" picks suites.
KERNELS ?=
check-kernels: check-guest-script
	$(Q)O=$(O) MAKE="$(MAKE)" scripts/kernels.py $(KERNELS)

# One kernel alone, with the same suite: Debian 12's 6.1 and sid's 7.x.
check-oldkernel:
	$(Q)O=$(O) MAKE="$(MAKE)" scripts/kernels.py bookworm

check-newkernel:
	$(Q)O=$(O) MAKE="$(MAKE)" scripts/kernels.py sid

# scripts/guest.sh's accelerator choice (KVM, TCG, the fallback from a KVM
# that cannot emulate the guest), with a stand-in qemu: seconds, no boot.
check-guest-script:
	$(Q)sh tests/scripts/guest-accel-selftest.sh
