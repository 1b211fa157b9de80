# libiouring-restrict: one plain Makefile.  `make V=1` shows the commands.
#
# Main targets:
#   all (default)  static and shared library, examples, tools (iour-restrict)
#   demo           install missing Debian packages, build, run examples/demo
#   check          install missing packages, build, run the whole test suite
#                  (gcc build, clang ASan+UBSan build, docs, header checks, ABI)
#   check-long     the same with the long differential runs
#   check-live     the live tier: policies applied to the real kernel in
#                  forked children (task-level tests skip, saying why, on
#                  kernels without task restrictions); also run by check
#   bench          benchmarks; writes $(O)/bench.json
#   doc            doxygen with warnings as errors
#   install / uninstall   honour PREFIX, DESTDIR, LIBDIR, INCLUDEDIR, PKGCONFIGDIR,
#                         BINDIR

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
SAN ?=

WARN := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 $(WARN) -D_GNU_SOURCE -fvisibility=hidden -Iinclude -Ilib
CFLAGS ?= -O2 -g
ifeq ($(SAN),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
endif
ALL_CFLAGS = $(BASE_CFLAGS) $(CFLAGS) $(SAN_FLAGS) $(CPPFLAGS) $(EXTRA_CFLAGS)

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-8s %s\n' '$(1)' '$(2)';
endif

LIB_SRCS := $(sort $(wildcard lib/*.c))
STATIC_OBJS := $(patsubst lib/%.c,$(O)/static/%.o,$(LIB_SRCS))
PIC_OBJS := $(patsubst lib/%.c,$(O)/pic/%.o,$(LIB_SRCS))
HDRS := $(wildcard include/iouring_restrict/*.h) $(wildcard lib/*.h)

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
TOOL_CLI_SRCS := $(sort $(wildcard tools/cli/*.c))
TOOL_CLI_HDRS := $(wildcard tools/cli/*.h)
TOOL_CFLAGS = $(filter-out -Ilib,$(ALL_CFLAGS)) -Itools/cli
ifeq ($(SAN),1)
# Sanitized builds (test-asan) link the static library, as the tests do.
TOOL_DEPS = $(STATIC_LIB)
TOOL_LIBS = $(STATIC_LIB)
else
TOOL_DEPS = $(SHARED_LIB) $(SHARED_DEV)
# $ORIGIN/.. finds the library in $(O); $ORIGIN/../lib finds it after
# `make install` into BINDIR and LIBDIR under one prefix.
TOOL_LIBS = -L$(O) -Wl,-rpath,'$$ORIGIN/..:$$ORIGIN/../lib' -liouring-restrict
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

.PHONY: all lib examples tools demo check check-run check-long check-fast unit-tests \
	test-run test-asan check-headers check-abi doc bench install uninstall clean deps \
	check-symbols check-oldkernel check-live live-tests check-newkernel

all: lib examples tools

lib: $(STATIC_LIB) $(SHARED_LIB) $(SHARED_DEV) $(PC)

$(O)/static/%.o: lib/%.c $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(O)/pic/%.o: lib/%.c $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -fPIC -c $< -o $@

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

$(PC): iouring-restrict.pc.in $(VERSION_H)
	$(call msg,GEN,$@)
	@mkdir -p $(@D)
	$(Q)sed -e 's|@PREFIX@|$(prefix)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

# Examples link the shared library (as users do) and find it next to them.
examples: $(EXAMPLES)
$(O)/examples/%: examples/%.c $(SHARED_LIB) $(SHARED_DEV) $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Wno-missing-field-initializers -o $@ $< -L$(O) \
		-Wl,-rpath,'$$ORIGIN/..' -liouring-restrict -luring $(LDFLAGS)

# Tools, like the examples, link the shared library and find it in $(O).
tools: $(TOOLS)
$(O)/tools/%: tools/%.c $(TOOL_CLI_SRCS) $(TOOL_CLI_HDRS) $(TOOL_DEPS) $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) -o $@ $< $(TOOL_CLI_SRCS) $(TOOL_LIBS) $(LDFLAGS)

# ---- tests: every tests/unit/*.c is a Criterion file; one binary.
$(O)/tobj/%.o: tests/%.c $(HDRS) $(wildcard tests/common/*.h) $(wildcard tests/live/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) -c $< -o $@

$(UNIT): $(TEST_OBJS) $(STATIC_LIB)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(TEST_OBJS) $(STATIC_LIB) $(TEST_LIBS) $(LDFLAGS)

unit-tests: $(UNIT)

$(LIVE): $(LIVE_OBJS) $(COMMON_OBJS) $(STATIC_LIB)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(LIVE_OBJS) $(COMMON_OBJS) $(STATIC_LIB) $(TEST_LIBS) $(LDFLAGS)

live-tests: $(LIVE)

# --verbose prints every test with its outcome, and a skipped test with
# its reason ("[SKIP] live_task::...: skipped: kernel lacks ...").
check-live: $(LIVE) examples
	$(call msg,TEST,$(LIVE) (live tier, real kernel))
	$(Q)IOUR_EXAMPLES_DIR=$(O)/examples $(LIVE) --verbose -j1 $(LIVE_ARGS)

# Criterion prints "Synthesis: Tested: N | Passing: ..." on stderr.
test-run: $(UNIT) examples tools
	$(call msg,TEST,$(UNIT))
	$(Q)IOUR_EXAMPLES_DIR=$(O)/examples IOUR_TOOLS_DIR=$(O)/tools $(UNIT) -j2 --xml=$(O)/tests/unit.xml $(TEST_ARGS)

# The same suite built with clang under ASan+UBSan (static library only:
# sanitized shared objects cannot be linked with -z defs).  The tools are
# rebuilt sanitized too, and the tests run those.
test-asan:
	$(Q)$(MAKE) --no-print-directory O=$(O)/asan CC=clang SAN=1 unit-tests live-tests tools
	$(call msg,TEST,$(O)/asan/tests/unit (ASan+UBSan))
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		IOUR_EXAMPLES_DIR=$(O)/examples IOUR_TOOLS_DIR=$(O)/asan/tools $(O)/asan/tests/unit -j2 $(TEST_ARGS)
	$(call msg,TEST,$(O)/asan/tests/live (ASan+UBSan))
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		IOUR_EXAMPLES_DIR=$(O)/examples $(O)/asan/tests/live -j1 $(LIVE_ARGS)

check-headers:
	$(call msg,HDRS,c99 c11 c++)
	@mkdir -p $(O)/hdr
	$(Q)printf '#include <iouring_restrict/iouring_restrict.h>\nint main(void) { return iour_version_major() == 0; }\n' > $(O)/hdr/t.c
	$(Q)gcc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude -c $(O)/hdr/t.c -o $(O)/hdr/c99.o
	$(Q)gcc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -c $(O)/hdr/t.c -o $(O)/hdr/c11.o
	$(Q)clang -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude -c $(O)/hdr/t.c -o $(O)/hdr/clang.o
	$(Q)g++ -std=c++11 -x c++ -Wall -Wextra -Werror -pedantic -Iinclude -c $(O)/hdr/t.c -o $(O)/hdr/cxx.o
	$(Q)for h in include/iouring_restrict/*.h; do \
		printf '#include "%s"\n#include "%s"\n' "$$h" "$$h" > $(O)/hdr/one.c; \
		gcc -std=c99 -Wall -Wextra -Werror -pedantic -I. -c $(O)/hdr/one.c -o $(O)/hdr/one.o || exit 1; \
		g++ -x c++ -Wall -Wextra -Werror -pedantic -I. -c $(O)/hdr/one.c -o $(O)/hdr/one.o || exit 1; \
	done

# Exported symbols == names in the map == abi/symbols.txt; every one iour_*.
check-symbols: $(SHARED_REAL)
	$(call msg,ABI,symbols)
	$(Q)scripts/check-symbols.sh $(SHARED_REAL) $(MAP) abi/symbols.txt

doc:
	$(call msg,DOXYGEN,doc/Doxyfile)
	@mkdir -p $(O)/doc
	$(Q)( cat doc/Doxyfile; echo "OUTPUT_DIRECTORY = $(O)/doc" ) | $(DOXYGEN) - > $(O)/doc/doxygen.log

deps:
	$(Q)scripts/deps.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(O)/examples/demo

check: deps
	$(Q)$(MAKE) --no-print-directory check-run

# The live tier runs here too: it skips cleanly (saying why) where the
# kernel lacks a feature, and building it here keeps it from rotting.
check-run: all
	$(Q)$(MAKE) --no-print-directory doc check-headers check-symbols
	$(Q)$(MAKE) --no-print-directory test-run
	$(Q)$(MAKE) --no-print-directory check-live
	$(Q)$(MAKE) --no-print-directory test-asan

# Boot Debian's Linux 6.1 cloud kernel under qemu (software emulation) and
# run tests/oldkernel/t_*.c inside it as static binaries.  Not part of check:
# it downloads a kernel package and needs qemu-system-x86 (.ci/run runs it).
# The guest programs link their own static build of the library in
# $(O)/oldkernel/lib, independent of the flags $(O) was built with.
check-oldkernel:
	$(Q)O=$(O) MAKE="$(MAKE)" scripts/oldkernel.sh

# The live tier inside Debian's newest Linux 7.x cloud kernel under qemu,
# where its task-level tests run for real.  Not part of check: it downloads
# a kernel package from Debian unstable (private apt lists in $(O)).
check-newkernel:
	$(Q)O=$(O) MAKE="$(MAKE)" scripts/newkernel.sh

check-long: deps
	$(Q)IOUR_TEST_LONG=1 $(MAKE) --no-print-directory check-run

# Each bench/*.c is one program that writes a nested JSON object to the file
# named by its argument; scripts/bench-merge.py prints them side by side and
# merges them into $(O)/bench.json.
bench: deps
	$(Q)$(MAKE) --no-print-directory $(BENCHES)
	$(Q)set -e; for b in $(BENCHES); do $$b $$b.json; done
	$(Q)python3 scripts/bench-merge.py $(O)/bench.json $(addsuffix .json,$(BENCHES))

$(O)/bench/%: bench/%.c $(STATIC_LIB) $(HDRS) $(wildcard bench/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Ibench -Itests/common -Wno-missing-field-initializers -o $@ $< \
		$(STATIC_LIB) -luring -lseccomp -lm $(LDFLAGS)

install: lib tools
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/iouring_restrict $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(BINDIR)
	install -m 644 include/iouring_restrict/*.h $(DESTDIR)$(INCLUDEDIR)/iouring_restrict/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHARED_REAL)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libiouring-restrict.so
	install -m 644 $(PC) $(DESTDIR)$(PKGCONFIGDIR)/
	install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libiouring-restrict.a $(DESTDIR)$(LIBDIR)/libiouring-restrict.so \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(notdir $(SHARED_REAL)) \
		$(DESTDIR)$(PKGCONFIGDIR)/iouring-restrict.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/iouring_restrict
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(TOOLS)))

clean:
	rm -rf $(O)
