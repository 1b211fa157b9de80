# mk/guests.mk: real kernels booted under qemu.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# Boot Debian's Linux 6.1 cloud kernel under qemu (software emulation) and
# run tests/oldkernel/t_*.c inside it as static binaries.  It downloads a
# kernel package and installs qemu-system-x86; `make check` runs it last
# (GUESTS=0 leaves both guests out, and says so).
# The guest programs link their own static build of the library in
# $(O)/oldkernel/lib, independent of the flags $(O) was built with.
check-oldkernel:
	$(Q)O=$(O) MAKE="$(MAKE)" scripts/oldkernel.sh

# The live tier inside Debian's newest Linux 7.x cloud kernel under qemu,
# where its task-level tests run for real.  It downloads a kernel package
# from Debian unstable (private apt lists in $(O)); `make check` runs it.
check-newkernel:
	$(Q)O=$(O) MAKE="$(MAKE)" scripts/newkernel.sh
