# libiouring-restrict: one plain Makefile (the checks live in mk/*.mk, which
# it includes).  `make V=1` shows the commands.
#
# Main targets (`make help` prints the short list):
#   all (default)  static and shared library, examples, tools (iour-restrict)
#   test           the fast inner loop: build, then the unit suite alone (gcc,
#                  two workers; TEST_ARGS="--filter 'suite/*'" narrows it)
#   demo           install missing Debian packages, build, run examples/demo
#   check          install missing packages, build, run the whole test suite
#                  (gcc build, clang ASan+UBSan build, docs, header checks, ABI,
#                  and five or six Debian kernels, 5.10 to 7.x, under qemu; GUESTS=0
#                  leaves the guests out)
#   check-kernels  the guest suite on up to six Debian kernels under qemu (mk/guests.mk);
#                  check-oldkernel / check-newkernel: 6.1 or 7.x alone
#   check-long     the same with the long differential runs
#   check-live     the live tier: policies applied to the real kernel in
#                  forked children (task-level tests skip, saying why, on
#                  kernels without task restrictions); also run by check
#   bench          benchmarks; writes $(O)/bench.json
#   bench-guest    the cost of restrictions and filters in sid's 7.x kernel under
#                  qemu; adds guest.* ratios to $(O)/bench.json (mk/bench.mk)
#   doc            doxygen with warnings as errors
#   man / check-docs   manual pages (sections 1, 3, 7) and the tutorial
#                  programs, rendered and run (mk/docs.mk)
#   install / uninstall   honour PREFIX, DESTDIR, LIBDIR, INCLUDEDIR, PKGCONFIGDIR,
#                         BINDIR, MANDIR
# Hardening (all run by `make check` unless noted):
#   lint           clang-tidy, cppcheck, clang-format check (`make format` fixes),
#                  no tracked build output (scripts/check-tracked.sh), kernel
#                  facts asserted (scripts/check-kernel-facts.sh), the folders'
#                  layers (scripts/check-layers.py, lib/README.md)
#   fuzz / fuzz-ci libFuzzer targets tests/fuzz/*.c, FUZZ_TIME / FUZZ_CI_TIME s each
#   test-valgrind  the unit tests under valgrind memcheck, but VALGRIND_SKIP
#                  (mk/valgrind.mk says why; check-long runs more), and the
#                  fuzz corpora
#   test-asan      the unit suite and the live tier under clang ASan+UBSan,
#                  counted (--coverage, lib/ only): make check's one
#                  instrumented run (mk/tests.mk)
#   coverage       gcovr line/branch coverage of lib/ from test-asan's counts,
#                  fails below COVERAGE_MIN % (make check runs test-asan as
#                  its unit-test step and COVERAGE_CI_TARGET, coverage-check,
#                  at the end)
#   check-abi      check-symbols + abi-compliance-checker against abi/*.dump
#                  (`make abi-dump` writes the baseline of the current version)
#   check-install  DESTDIR install, pkg-config consumers, uninstall
#   deb / check-deb  the Debian packages (debian/) into build/; lintian and
#                  autopkgtest in a fresh Debian 12 root (mk/deb.mk)
#   check-python   Python bindings: pytest and examples/python (mk/python.mk)
#   check-rust     the Rust bindings (bindings/rust/): cargo test --offline
#                  and the examples, with rustc 1.63 and a newer toolchain

# ---- version: the single source of truth is include/iouring_restrict/version.h
VERSION_H := include/iouring_restrict/version.h
VERSION_MAJOR := $(shell sed -n 's/^\#define IOUR_VERSION_MAJOR[ \t]*\([0-9]*\).*/\1/p' $(VERSION_H))
VERSION_MINOR := $(shell sed -n 's/^\#define IOUR_VERSION_MINOR[ \t]*\([0-9]*\).*/\1/p' $(VERSION_H))
VERSION_PATCH := $(shell sed -n 's/^\#define IOUR_VERSION_PATCH[ \t]*\([0-9]*\).*/\1/p' $(VERSION_H))
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

MAP := lib/libiouring-restrict.map
MAP_NEWEST := $(shell sed -n 's/^IOURING_RESTRICT_\([0-9]*\.[0-9]*\) *{.*/\1/p' $(MAP) | tail -n 1)
ifneq ($(MAP_NEWEST),$(VERSION_MAJOR).$(VERSION_MINOR))
$(error newest node of $(MAP) ($(MAP_NEWEST)) is out of sync with $(VERSION_H) ($(VERSION_MAJOR).$(VERSION_MINOR)))
endif

# ---- install locations
PREFIX ?= /usr/local
prefix ?= $(PREFIX)
LIBDIR ?= $(prefix)/lib
BINDIR ?= $(prefix)/bin
INCLUDEDIR ?= $(prefix)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR ?=

# ---- tools and flags
O ?= build
CC ?= cc
CXX ?= c++
AR ?= ar
DOXYGEN ?= doxygen
# scripts/need.sh WHAT:PACKAGE: a step that needs a tool first checks for it
# and, if it is missing, names the Debian package (scripts/deps.sh installs
# them all) instead of failing with the tool's own message.
NEED := scripts/need.sh
SAN ?=

WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 $(WARN) -D_GNU_SOURCE -fvisibility=hidden -Iinclude -Ilib
CFLAGS ?= -O2 -g
ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
# SAN=fuzz: the static library for the libFuzzer targets (clang only).
ifeq ($(SAN),fuzz)
SAN_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) $(SAN_FLAGS) $(CPPFLAGS) $(EXTRA_CFLAGS)
# Libraries the library itself links (policy files are parsed with jansson,
# Debian's libjansson-dev): every link of the shared or static library
# appends them through LDFLAGS; the .pc lists them in Libs.private (not Requires.private: the
# install check resolves .pc files only inside its staging tree).
LIB_LIBS := -ljansson
override LDFLAGS += $(LIB_LIBS)

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' '$(1)' '$(2)';
endif

LIB_SRCS := $(sort $(wildcard lib/*/*.c))
STATIC_OBJS := $(patsubst lib/%.c,$(O)/static/%.o,$(LIB_SRCS))
PIC_OBJS := $(patsubst lib/%.c,$(O)/pic/%.o,$(LIB_SRCS))
HDRS := $(wildcard include/iouring_restrict/*.h) $(wildcard lib/*/*.h lib/*/*.def)
# Header dependencies are generated by the compiler (-MMD -MP: one .d file
# next to each object, naming the headers it really included, and an empty
# rule per header so a deleted header does not break the build); the .d
# files are included at the end of this Makefile.  DEPFLAGS goes on every
# compile that writes an object or program under $(O).
DEPFLAGS = -MMD -MP -MF $@.d -MT $@
# Every object also depends on DEP_STAMP, made once: a build tree from
# before DEPFLAGS (objects without .d files) is rebuilt once, not trusted.
DEP_STAMP := $(O)/.deps-v1

STATIC_LIB := $(O)/libiouring-restrict.a
SONAME := libiouring-restrict.so.$(VERSION_MAJOR)
SHARED_REAL := $(O)/libiouring-restrict.so.$(VERSION)
SHARED_LIB := $(O)/$(SONAME)
SHARED_DEV := $(O)/libiouring-restrict.so
PC := $(O)/iouring-restrict.pc

EXAMPLE_SRCS := $(sort $(wildcard examples/*.c))
EXAMPLES := $(patsubst examples/%.c,$(O)/examples/%,$(EXAMPLE_SRCS))

# Every tools/NAME.c is one command-line program, built from it plus the
# helpers in tools/cli/ shared by all tools.  Tools use the public API only,
# so lib/ is not on their include path.
TOOL_SRCS := $(sort $(wildcard tools/*.c))
TOOLS := $(patsubst tools/%.c,$(O)/tools/%,$(TOOL_SRCS))
TOOL_CLI_SRCS := $(sort $(wildcard tools/cli/*/*.c))
TOOL_CLI_OBJS := $(patsubst tools/cli/%.c,$(O)/tools/obj/cli/%.o,$(TOOL_CLI_SRCS))
TOOL_OBJS := $(patsubst tools/%.c,$(O)/tools/obj/%.o,$(TOOL_SRCS))
TOOL_CFLAGS = $(filter-out -Ilib,$(ALL_CFLAGS)) -Itools/cli
ifeq ($(SAN),1)
# Sanitized builds (test-asan) link the static library, as the tests do.
TOOL_DEPS = $(STATIC_LIB)
TOOL_LIBS = $(STATIC_LIB)
else
TOOL_DEPS = $(SHARED_LIB) $(SHARED_DEV)
# $ORIGIN/.. finds the library in $(O); $ORIGIN/../lib finds it after
# `make install` into BINDIR and LIBDIR under one prefix.  The Debian
# packages (debian/rules) set TOOL_RPATH empty: the library is in the
# loader's own search path there.
TOOL_RPATH ?= -Wl,-rpath,'$$ORIGIN/..:$$ORIGIN/../lib'
TOOL_LIBS = -L$(O) $(TOOL_RPATH) -liouring-restrict
endif

TEST_SRCS := $(sort $(wildcard tests/unit/*.c) $(wildcard tests/common/*.c))
TEST_OBJS := $(patsubst tests/%.c,$(O)/tobj/%.o,$(TEST_SRCS))
UNIT := $(O)/tests/unit
TEST_CFLAGS = $(ALL_CFLAGS) -Itests/common -Wno-missing-field-initializers
COMMON_OBJS := $(patsubst tests/%.c,$(O)/tobj/%.o,$(sort $(wildcard tests/common/*.c)))

# The live tier: tests/live/*.c (Criterion) plus tests/common, one binary.
LIVE_SRCS := $(sort $(wildcard tests/live/*.c))
LIVE_OBJS := $(patsubst tests/%.c,$(O)/tobj/%.o,$(LIVE_SRCS))
LIVE := $(O)/tests/live
TEST_LIBS := -lcriterion -luring -lpthread -lm

BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCHES := $(patsubst bench/%.c,$(O)/bench/%,$(BENCH_SRCS))

.PHONY: all lib examples tools demo check check-run check-long help test unit-tests \
	test-run test-asan check-headers check-abi doc bench install uninstall clean deps \
	check-symbols check-oldkernel check-live live-tests check-newkernel check-kernels check-guest-script need-libs FORCE

all: lib examples tools

lib: $(STATIC_LIB) $(SHARED_LIB) $(SHARED_DEV) $(PC)

$(O)/static/%.o: lib/%.c $(DEP_STAMP)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(O)/pic/%.o: lib/%.c $(DEP_STAMP)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -fPIC -c $< -o $@

$(STATIC_LIB): $(STATIC_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && $(AR) rcs $@ $^

$(SHARED_REAL): $(PIC_OBJS) $(MAP)
	$(call msg,LD,$@)
	$(Q)$(CC) $(ALL_CFLAGS) -shared -fPIC -Wl,-soname,$(SONAME) \
		-Wl,--version-script=$(MAP) -Wl,-z,defs -o $@ $(PIC_OBJS) $(LDFLAGS)

$(SHARED_LIB): $(SHARED_REAL)
	$(Q)ln -sf $(notdir $<) $@

$(SHARED_DEV): $(SHARED_LIB)
	$(Q)ln -sf $(notdir $<) $@

# The .pc embeds the install paths: regenerate it whenever they change (a
# `make install PREFIX=/usr` after a plain `make` must not install a .pc
# that points to /usr/local).
PC_VARS := $(O)/pc-vars
PC_VARS_VALUE := $(prefix)|$(LIBDIR)|$(INCLUDEDIR)|$(VERSION)
$(PC_VARS): FORCE
	@mkdir -p $(@D)
	@if [ "$$(cat $@ 2>/dev/null)" != '$(PC_VARS_VALUE)' ]; then \
		printf '%s\n' '$(PC_VARS_VALUE)' > $@; fi

$(PC): iouring-restrict.pc.in $(VERSION_H) $(PC_VARS)
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(prefix)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

# Examples link the shared library (as users do) and find it next to them.
examples: $(EXAMPLES)
$(O)/examples/%: examples/%.c $(SHARED_LIB) $(SHARED_DEV) $(DEP_STAMP)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) $(DEPFLAGS) -Wno-missing-field-initializers -o $@ $< -L$(O) \
		-Wl,-rpath,'$$ORIGIN/..' -liouring-restrict -luring $(LDFLAGS)

# Tools, like the examples, link the shared library and find it in $(O).
# Each source is one object (tools/NAME.c in $(O)/tools/obj/, the shared
# helpers in $(O)/tools/obj/cli/), so a change recompiles only what it touches.
tools: $(TOOLS)
.SECONDARY: $(TOOL_OBJS) $(TOOL_CLI_OBJS)
$(O)/tools/obj/%.o: tools/%.c $(DEP_STAMP)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) $(DEPFLAGS) -c $< -o $@

$(O)/tools/%: $(O)/tools/obj/%.o $(TOOL_CLI_OBJS) $(TOOL_DEPS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) -o $@ $< $(TOOL_CLI_OBJS) $(TOOL_LIBS) $(LDFLAGS)

doc:
	$(Q)$(NEED) doxygen:doxygen
	$(call msg,DOXYGEN,doc/Doxyfile)
	@mkdir -p $(O)/doc
	$(Q)( cat doc/Doxyfile; echo "OUTPUT_DIRECTORY = $(O)/doc" ) | $(DOXYGEN) - > $(O)/doc/doxygen.log
	@echo "doc: HTML reference: $(abspath $(O))/doc/html/index.html (main page: README.md; tutorial: doc/tutorial.md)"

deps:
	$(Q)scripts/deps.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(O)/examples/demo

check: deps
	$(Q)$(MAKE) --no-print-directory check-run

# The fast inner loop: what `make check` runs first and most often, the
# unit suite of the gcc build (mk/tests.mk), without sanitizers, valgrind,
# coverage or guests.
test: test-run

help:
	@echo 'make [TARGET] [O=builddir] [V=1]; the main targets:'
	@echo '  all            library (static, shared), examples, tools (default)'
	@echo '  test           fast loop: build and run the unit suite (TEST_ARGS="--filter suite/*")'
	@echo '  check-live     the live tier: policies applied to this kernel and attacked'
	@echo '  check          install missing packages, then everything CI runs (GUESTS=0: no qemu)'
	@echo '  check-long     check with the long differential runs and the full valgrind set'
	@echo '  check-kernels  the guest suite on Debian kernels 5.10 to 7.x under qemu (KERNELS="bookworm sid")'
	@echo '  test-asan      unit suite and live tier under clang ASan+UBSan, counted for coverage'
	@echo '  check-uring-off  the suites that reach io_uring, with io_uring refused by seccomp'
	@echo '  check-learn / check-audit  learn, run --audit and --log-denials on this kernel (root)'
	@echo '  check-agent    the OCI seccomp agent with runc and crun bundles (root)'
	@echo '  check-engines  the agent behind containerd, Docker and podman (where installed)'
	@echo '  deb / check-deb  Debian packages into build/ / lintian and autopkgtest in a fresh root'
	@echo '  generate       rewrite the bindings constants from the headers (check-generate checks)'
	@echo '  test-valgrind  unit tests and fuzz corpora under valgrind memcheck'
	@echo '  coverage       test-asan, then gcovr line coverage of lib/ (fails below COVERAGE_MIN %)'
	@echo '  lint           clang-tidy, cppcheck, clang-format, no tracked build outputs,'
	@echo '                 kernel facts asserted, layers one way (lib/README.md)'
	@echo '  fuzz           libFuzzer targets (FUZZ_TIME s each)'
	@echo '  bench          benchmarks into $(O)/bench.json'
	@echo '  doc / man      doxygen reference / manual pages'
	@echo '  check-python / check-rust   the bindings'
	@echo '  install / uninstall         PREFIX, DESTDIR, LIBDIR, ...'
	@echo '  deps           install the Debian packages the build and checks need'
	@echo '  clean          remove $(O)'

# The live tier runs here too: it skips cleanly (saying why) where the
# kernel lacks a feature, and building it here keeps it from rotting.
# Everything CI runs, one titled and timed step after the other
# (scripts/ci-step.sh); the last step prints the time of each.
# Checks that skip for want of something on this machine record why in
# $(O)/check-skips.txt; the summary prints them, counted, once.
CI_STEP = CI_TIMES=$(O)/check-times.txt CI_SKIPS=$(abspath $(O))/check-skips.txt scripts/ci-step.sh
SUBMAKE = $(MAKE) --no-print-directory
# The steps that compile (the gcc build, the instrumented build of test-asan,
# the fuzz library) use two jobs, the CI machine's cores, even when make
# check was started without -j (BUILD_J= compiles one file at a time).
BUILD_J ?= -j2
check-run:
	$(Q)mkdir -p $(O) && rm -f $(O)/check-times.txt $(O)/check-skips.txt
	$(Q)$(CI_STEP) 'build (gcc: library, examples, tools, tests)' $(SUBMAKE) $(BUILD_J) all \
		unit-tests live-tests uring-try
	$(Q)$(CI_STEP) 'documentation (doxygen)' $(SUBMAKE) doc
	$(Q)$(CI_STEP) 'manual pages and tutorial (man -l, examples/tutorial)' $(SUBMAKE) check-docs
	$(Q)$(CI_STEP) 'public headers (C99, C11, C++)' $(SUBMAKE) check-headers
	$(Q)$(CI_STEP) 'ABI (exports, symbol versions, baseline)' $(SUBMAKE) check-abi
	$(Q)$(CI_STEP) 'lint (clang-tidy, cppcheck, clang-format)' $(SUBMAKE) lint
	$(Q)$(CI_STEP) 'unit tests and live tier (clang ASan+UBSan, counted for the coverage step)' $(SUBMAKE) test-asan
	$(Q)$(CI_STEP) 'unit suites that reach io_uring, with io_uring unusable (seccomp: the ring tests skip)' $(SUBMAKE) check-uring-off
	$(Q)$(CI_STEP) 'policy files (JSON Schema, examples)' $(SUBMAKE) check-policies
	$(Q)$(CI_STEP) 'CLI (bash completion, test policies against the schema)' $(SUBMAKE) check-cli
	$(Q)$(CI_STEP) 'filter proofs (z3: corpus and random policies, mutants)' $(SUBMAKE) prove
	$(Q)$(CI_STEP) 'live tier (real kernel; skips say why)' $(SUBMAKE) check-live
	$(Q)$(CI_STEP) 'learn (tracepoints, fio; needs root)' $(SUBMAKE) check-learn
	$(Q)$(CI_STEP) 'audit mode and denial log (tracepoints, fio, qemu-img; needs root)' $(SUBMAKE) check-audit
	$(Q)$(CI_STEP) 'merge (policy-file unions and refusals)' $(SUBMAKE) check-merge
	$(Q)$(CI_STEP) 'OCI seccomp agent (runc, crun; needs root)' $(SUBMAKE) check-agent
	$(Q)$(CI_STEP) 'container engines (containerd, Docker, podman where installed; needs root)' $(SUBMAKE) check-engines
	$(Q)$(CI_STEP) 'guest benchmark, quick mode (restrictions in force, simulator counts)' $(SUBMAKE) check-bench-guest
	$(Q)$(CI_STEP) 'fuzzing (libFuzzer, $(FUZZ_CI_TIME) s per target)' $(SUBMAKE) fuzz-ci
	$(Q)$(CI_STEP) 'valgrind memcheck (unit tests, fuzz corpora)' $(SUBMAKE) test-valgrind
	$(Q)$(CI_STEP) 'Python bindings (pytest, examples)' $(SUBMAKE) check-python
	$(Q)$(CI_STEP) 'install (DESTDIR, pkg-config, uninstall)' $(SUBMAKE) check-install
	$(Q)$(CI_STEP) 'Debian packages (version, symbols; IOUR_CHECK_DEB=1: build, lintian, autopkgtest)' $(SUBMAKE) check-deb-ci
	$(Q)$(CI_STEP) 'Rust bindings (cargo test, examples; rustc 1.63 and newer)' $(SUBMAKE) check-rust
	$(Q)$(CI_STEP) 'coverage (gcovr, lib/, of the test-asan run)' $(SUBMAKE) $(COVERAGE_CI_TARGET)
ifneq ($(GUESTS),0)
	$(Q)$(CI_STEP) 'Debian kernels 5.10 to 7.x (qemu: the guest suite)' $(SUBMAKE) check-kernels
else
	@echo 'check: GUESTS=0: the kernel guests (make check-kernels) were NOT run'
endif
	$(Q)CI_TIMES=$(O)/check-times.txt CI_SKIPS=$(abspath $(O))/check-skips.txt scripts/ci-step.sh --summary


check-long: deps
	$(Q)IOUR_TEST_LONG=1 $(MAKE) --no-print-directory check-run

# ==== the checks, one file each under mk/: unit and live tests, headers and
# ABI, lint, fuzzing, valgrind, coverage, install, benchmarks, qemu guests.
# Every target there picks up new files by wildcard: lib/*/*.c, lib/*/*.h,
# include/iouring_restrict/*.h, tests/unit/*.c and tests/fuzz/*.c.
include mk/tests.mk mk/abi.mk mk/lint.mk mk/fuzz.mk mk/valgrind.mk mk/coverage.mk \
	mk/install.mk mk/bench.mk mk/guests.mk mk/docs.mk mk/policyfile.mk mk/python.mk mk/rust.mk \
	mk/cli.mk mk/learn.mk mk/prove.mk mk/agent.mk mk/mutation.mk mk/deb.mk

clean:
	rm -rf $(O)

# The compiler-written header dependencies of everything built so far
# (DEPFLAGS above); absent on a first build, when everything is built anyway.
$(DEP_STAMP):
	@mkdir -p $(@D) && touch $@
-include $(wildcard $(O)/static/*/*.d $(O)/pic/*/*.d $(O)/tobj/*/*.d $(O)/tools/obj/*.d \
	$(O)/tools/obj/cli/*/*.d $(O)/examples/*.d)

FORCE:
