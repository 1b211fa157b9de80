# mk/bench.mk: benchmarks.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# Each bench/*.c is one program that writes a nested JSON object to the file
# named by its argument; scripts/bench-merge.py prints them side by side and
# merges them into $(O)/bench.json.
bench: deps
	$(Q)$(MAKE) --no-print-directory $(BENCHES)
	$(Q)set -e; for b in $(BENCHES); do $$b $$b.json; done
	$(Q)python3 scripts/bench-merge.py $(O)/bench.json $(addsuffix .json,$(BENCHES))

.PHONY: need-bench-libs
need-bench-libs:
	$(Q)$(NEED) /usr/include/liburing.h:liburing-dev /usr/include/seccomp.h:libseccomp-dev
$(BENCHES): | need-bench-libs
# tests/common/denylist.c: the CONNECT deny-list the stacking tests and
# bench_stack build alike.
$(O)/bench/%: bench/%.c tests/common/denylist.c $(STATIC_LIB) $(HDRS) $(wildcard bench/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Ibench -Ilib -Itests/common -Wno-missing-field-initializers -o $@ $< \
		tests/common/denylist.c $(STATIC_LIB) -luring -lseccomp -lm $(LDFLAGS)

# ---- the cost of a filter on a real 7.x kernel (bench/guest/bench_guest.c;
# doc/design.md, "The cost of a filter in the 7.x guest").  Not one of
# BENCHES: it runs inside a guest.  bench-guest boots Debian sid's newest
# cloud kernel under qemu (scripts/guest.sh) with the program alone in its
# initramfs (scripts/bench-guest.sh) and merges its guest.* ratios into
# $(O)/bench.json.  check-bench-guest runs its quick mode on this kernel (the
# simulator counts and the baseline; the restricted configurations skip
# before 7.0); the guests of check-kernels run the same quick mode
# (scripts/guest-payloads/30-bench.sh), where 7.x checks every
# restriction in force.
BENCH_GUEST := $(O)/bench/guest/bench_guest
$(BENCH_GUEST): bench/guest/bench_guest.c $(STATIC_LIB) $(HDRS) tests/oldkernel/guest.h \
		tests/oldkernel/mini_ring.h
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Ilib -Itests/oldkernel -o $@ $< $(STATIC_LIB) -lm $(LDFLAGS)

# Its skips ("skip NAME: skipped: why") go to make check's summary.
check-bench-guest: $(BENCH_GUEST)
	$(Q)$(BENCH_GUEST) > $(BENCH_GUEST).log 2>&1; rc=$$?; cat $(BENCH_GUEST).log; \
		sed -n 's/^skip \([^:]*\): skipped: /bench guest: \1: /p' $(BENCH_GUEST).log | \
		while IFS= read -r l; do scripts/skip-note.sh "$$l"; done; exit $$rc

bench-guest:
	$(Q)O=$(O) MAKE="$(MAKE)" scripts/bench-guest.sh

.PHONY: check-bench-guest bench-guest
