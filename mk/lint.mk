# mk/lint.mk: lint.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# ---- lint: clang-tidy (.clang-tidy), cppcheck, clang-format (.clang-format)
CLANG_TIDY ?= clang-tidy
CPPCHECK ?= cppcheck
CLANG_FORMAT ?= clang-format
LINT_J ?= -j2
LINT_FLAGS := -std=c11 -D_GNU_SOURCE -Iinclude -Ilib
FORMAT_FILES = $(sort $(wildcard lib/*/*.c lib/*/*.h include/iouring_restrict/*.h))
TIDY_STAMPS := $(patsubst lib/%.c,$(O)/lint/%.tidy,$(LIB_SRCS))

.PHONY: lint alloc-check tidy cppcheck format format-check fuzz fuzz-ci fuzz-build fuzz-bins fuzz-replay \
	test-valgrind coverage coverage-ci coverage-report abi-dump check-install

lint:
	$(Q)$(SUBMAKE) $(LINT_J) tidy cppcheck format-check alloc-check tracked-check layers-check kernel-facts-check

# The folder tree is the architecture (lib/README.md, tools/cli/README.md):
# dependencies between files, through includes and through the objects'
# symbols, point down the folders' ranks only, and no file circles back.
.PHONY: layers-check
layers-check: $(STATIC_LIB) $(TOOL_CLI_OBJS)
	$(call msg,LAYERS,lib/ tools/cli/ (one direction, no circles))
	$(Q)python3 scripts/check-layers.py --selftest
	$(Q)python3 scripts/check-layers.py --objects $(O)/static:lib --objects $(O)/tools/obj/cli:tools/cli

# The static assertions that tie every copy of a kernel fact to
# lib/base/kernel_facts.def fail the build when one row is wrong
# (scripts/check-kernel-facts.sh; doc/design.md, "Kernel facts").
.PHONY: kernel-facts-check
kernel-facts-check:
	$(call msg,FACTS,lib/base/kernel_facts.def (a wrong row fails the build))
	$(Q)sh scripts/check-kernel-facts.sh $(CC)

# No build output in git: a tracked file that .gitignore matches fails
# (scripts/check-tracked.sh); its self-test first proves that the ignore
# rules cover what the build writes and that a tracked output fails.
.PHONY: tracked-check
tracked-check:
	$(call msg,GIT,tracked build outputs (.gitignore))
	$(Q)sh tests/scripts/check-tracked-selftest.sh
	$(Q)sh scripts/check-tracked.sh

# Every allocation in lib/ goes through the allocation seam (lib/base/alloc.c),
# so that the failure-injection tests (tests/unit/test_alloc_faults.c)
# reach all of them.
alloc-check:
	$(call msg,ALLOC,lib/ (allocation seam))
	$(Q)if grep -nE '(^|[^_[:alnum:].>])(malloc|calloc|realloc|reallocarray|strdup|strndup|asprintf|free)\(' \
		$(filter-out lib/base/alloc.c,$(LIB_SRCS)); then \
		echo 'lib/: allocate with iour__malloc/calloc/realloc/strdup, release with iour__free'; \
		exit 1; fi

tidy: $(TIDY_STAMPS)
	$(Q)$(NEED) clang-tidy:clang-tidy

# clang-tidy on each library source (the headers it includes are checked
# through HeaderFilterRegex); a stamp per file keeps re-runs incremental.
$(O)/lint/%.tidy: lib/%.c $(HDRS) .clang-tidy
	$(call msg,TIDY,$<)
	@mkdir -p $(@D)
	$(Q)out=$$($(CLANG_TIDY) --quiet $< -- $(LINT_FLAGS) 2>&1); rc=$$?; \
		printf '%s\n' "$$out" | grep -v -e ' warnings\? generated\.$$' -e '^$$' || true; \
		[ $$rc -eq 0 ] && touch $@

# cppcheck sees no compiler-defined macros: pass the host's architecture
# macro so that per-architecture code resolves as it does in the build.  It
# does not read the system headers either, so the library's build-time
# guards (`#error` when a libc constant is missing) are left to the
# compilers: preprocessorErrorDirective is suppressed.
CPPCHECK_ARCH := $(shell $(CC) -dM -E -x c /dev/null 2>/dev/null | \
	sed -n 's/^\#define \(__\(x86_64\|i386\|aarch64\|arm\|powerpc64\|powerpc\|riscv\|s390\|loongarch\)__\) .*/-D\1/p')
cppcheck:
	$(Q)$(NEED) cppcheck:cppcheck
	$(call msg,CPPCHECK,lib/)
	$(Q)$(CPPCHECK) --quiet --enable=warning,portability,performance --error-exitcode=1 \
		--inline-suppr --suppress=preprocessorErrorDirective --std=c11 -D_GNU_SOURCE \
		-D__linux__ $(CPPCHECK_ARCH) -Iinclude -Ilib lib/

# On failure: the files and a diff of what `make format` would change.
format-check:
	$(Q)$(NEED) clang-format:clang-format
	$(call msg,FORMAT,lib/ include/ (check))
	$(Q)$(CLANG_FORMAT) --dry-run --Werror $(FORMAT_FILES) > /dev/null 2>&1 || { \
		for f in $(FORMAT_FILES); do \
			$(CLANG_FORMAT) $$f | diff -u --label $$f --label "$$f (formatted)" $$f - ; \
		done | head -n 200; \
		echo "format-check: the files above are not clang-formatted; run 'make format'"; \
		exit 1; }

format:
	$(call msg,FORMAT,lib/ include/)
	$(Q)$(CLANG_FORMAT) -i $(FORMAT_FILES)
