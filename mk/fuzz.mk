# mk/fuzz.mk: fuzzing.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# ---- fuzzing: every tests/fuzz/NAME.c is a libFuzzer target, linked with a
# static library built by clang with ASan+UBSan and coverage instrumentation
# in $(O)/fuzz.  Seeds: tests/fuzz/corpus/NAME/ (read only); new inputs go
# to $(O)/fuzz/corpus/NAME/, crashes to $(O)/fuzz/artifacts/NAME/.
# A target is built once every public symbol on its "fuzz-requires:" line is
# listed in abi/symbols.txt, so a harness can land before its module does;
# the others are listed as "not ready" (by name, never silently).
FUZZ_O := $(O)/fuzz
FUZZ_TIME ?= 60
FUZZ_CI_TIME ?= 20
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/*.c))
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(FUZZ_SRCS))
FUZZ_READY := $(shell scripts/fuzz-ready.sh abi/symbols.txt $(FUZZ_SRCS))
FUZZ_TARGETS ?= $(FUZZ_READY)
FUZZ_LIB := $(FUZZ_O)/libiouring-restrict.a
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=c11 $(WARN) -D_GNU_SOURCE -Iinclude -Ilib -Itests/common -Itests/fuzz \
	-g -O1 $(FUZZ_SAN) -Wno-missing-field-initializers
# Helpers the harnesses may use (the kernel's cBPF engine as an oracle).
FUZZ_COMMON := tests/common/kernel_oracle.c

fuzz-build:
	$(Q)$(NEED) clang:clang $$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-x86_64.a:libclang-rt-14-dev
	$(Q)$(SUBMAKE) $(BUILD_J) O=$(FUZZ_O) CC=clang SAN=fuzz CFLAGS='-O1 -g' $(FUZZ_LIB)
	$(Q)$(SUBMAKE) $(BUILD_J) fuzz-bins

fuzz-bins: $(patsubst %,$(FUZZ_O)/bin/%,$(FUZZ_TARGETS))

$(FUZZ_O)/bin/%: tests/fuzz/%.c $(FUZZ_LIB) $(FUZZ_COMMON) $(wildcard tests/fuzz/*.h) $(HDRS)
	$(call msg,FUZZCC,$@)
	@mkdir -p $(@D)
	$(Q)clang $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_COMMON) $(FUZZ_LIB) -lm $(LIB_LIBS)

fuzz: fuzz-build
	$(Q)scripts/fuzz-run.sh $(FUZZ_TIME) $(FUZZ_O) '$(FUZZ_TARGETS)' \
		'$(filter-out $(FUZZ_READY),$(FUZZ_NAMES))'

# CI: a short bounded run of each target; any crash, leak, sanitizer report
# or failed harness check fails the build.
fuzz-ci:
	$(Q)$(SUBMAKE) fuzz FUZZ_TIME=$(FUZZ_CI_TIME)

# The same targets without libFuzzer: gcc, the ordinary static library and
# a plain main() (tests/fuzz/replay/) that runs each input once.
# `make fuzz-replay` replays the committed seeds (quick regression check).
REPLAY_O := $(O)/fuzz-replay
REPLAY_BINS := $(patsubst %,$(REPLAY_O)/%,$(FUZZ_TARGETS))
$(REPLAY_O)/%: tests/fuzz/%.c tests/fuzz/replay/replay.c $(STATIC_LIB) $(FUZZ_COMMON) \
		$(wildcard tests/fuzz/*.h) $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Itests/common -Itests/fuzz -Wno-missing-field-initializers -o $@ \
		$< tests/fuzz/replay/replay.c $(FUZZ_COMMON) $(STATIC_LIB) -lm $(LDFLAGS)

fuzz-replay: $(REPLAY_BINS)
	$(Q)for n in $(FUZZ_TARGETS); do \
		printf '  %-8s %s\n' REPLAY "$$n"; \
		$(REPLAY_O)/$$n tests/fuzz/corpus/$$n || exit 1; done
