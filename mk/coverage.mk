# mk/coverage.mk: coverage.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# ---- coverage: the counts of the one instrumented run of the unit suite and
# the live tier (test-asan, mk/tests.mk: clang, ASan+UBSan and --coverage
# in $(ASAN_O)), read by gcovr over lib/ (lines and branches) through
# llvm-cov's gcov mode (clang's counters are in its gcov format).
# `coverage` runs test-asan and fails below COVERAGE_MIN percent of lines;
# coverage-report never fails.
GCOVR ?= gcovr
# llvm-cov of clang's own version (Debian's llvm-N, N = clang's major):
# gcov files are read by the tools of the compiler that wrote them.
CLANG_MAJOR := $(shell clang -dumpversion 2>/dev/null | cut -d. -f1)
LLVM_COV ?= llvm-cov-$(CLANG_MAJOR)
COVERAGE_MIN ?= 90
COV_O := $(ASAN_O)
# What `make check` runs at the end: coverage-check (fails below
# COVERAGE_MIN), over the counts its test-asan step left.
COVERAGE_CI_TARGET ?= coverage-check
GCOVR_ARGS = --root . --gcov-executable '$(LLVM_COV) gcov' --object-directory $(COV_O) \
	--filter 'lib/' --exclude-unreachable-branches \
	--print-summary --txt $(COV_O)/coverage.txt --html-details $(COV_O)/html/index.html \
	--xml $(COV_O)/coverage.xml

# The live tier runs in the counted run too: the ring broker's workers, the
# peer guard and the accounting context act on the real kernel only, so
# the unit tests alone leave them uncounted.
# -fprofile-update=atomic: threads in the tests would otherwise corrupt the
# counters (gcov then reports negative branch counts).  _exit() is wrapped
# (tests/coverage/gcov_exit.c) so that forked children write their counters.
# Children that cannot write their counters lose them: those that dropped
# their privileges, and those under a test's seccomp filter (which answers
# EPERM to openat).  Nothing can be written from inside such a sandbox, so
# no counts are lost by not printing the runtime's "profiling: ...: cannot
# open" notices: asan-run.sh's logs keep them, and the step counts them in
# one line (COV_QUIET).
COV_QUIET = awk '/^profiling: .*\.gcda: cannot open: / { n++; next } { print; fflush() } \
	END { if (n) printf "  %-8s %d gcov notices not shown (the run'"'"'s .log keeps them): children under seccomp, without privileges or out of file descriptors cannot write counts\n", "GCOV", n }'
# -O1: the sanitizers' checks are the same at any level; -O1 keeps the
# line counts close to the source (inlining is small) at about the speed of
# -O2 under ASan.
# Only the library's objects are counted (LIB_COV=1): the coverage step reads
# lib/ alone, and every process writes every counted object's counts file
# as it exits (the test and tool objects would more than double that work
# in each of the thousands of forked children).  The links take --coverage
# for the runtime.
COV_CFLAGS := --coverage -fprofile-update=atomic
ASAN_CFLAGS := -O1 -g
ifneq ($(LIB_COV),)
$(STATIC_OBJS): EXTRA_CFLAGS += $(COV_CFLAGS)
endif
coverage-run: test-asan

coverage-report: test-asan
	$(call msg,GCOVR,lib/ -> $(COV_O)/html/index.html)
	$(Q)mkdir -p $(COV_O)/html && $(GCOVR) $(GCOVR_ARGS)

coverage: test-asan
	$(Q)$(SUBMAKE) coverage-check

coverage-ci: coverage

# make check runs the unit tests once for every purpose: its "unit tests"
# step is test-asan (clang, ASan+UBSan, --coverage), and its coverage step
# reads those counts with coverage-check, which runs nothing again.  The
# -O2 gcc build runs natively in check-uring-off (the suites that reach
# io_uring, with io_uring refused), check-live and the steps that run the
# tool (CLI, learn, audit, agent), and under valgrind (test-valgrind).
coverage-check:
	$(Q)$(NEED) gcovr:gcovr $(LLVM_COV):llvm-$(CLANG_MAJOR)
	$(Q)[ -f $(COV_O)/counted ] || { echo 'coverage-check: no counts: run make test-asan first'; exit 1; }
	$(call msg,GCOVR,lib/ (at least $(COVERAGE_MIN)% of lines))
	$(Q)mkdir -p $(COV_O)/html && $(GCOVR) $(GCOVR_ARGS) --fail-under-line $(COVERAGE_MIN)
