# mk/coverage.mk: coverage.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# ---- coverage: gcc --coverage build in $(O)/coverage, the unit tests, then
# gcovr over lib/ (lines and branches).  `coverage` fails below
# COVERAGE_MIN percent of lines; coverage-report never fails.
GCOVR ?= gcovr
COVERAGE_MIN ?= 90
COV_O := $(O)/coverage
# What `make check` runs after its coverage-run step: coverage-check (fails
# below COVERAGE_MIN).
COVERAGE_CI_TARGET ?= coverage-check
GCOVR_ARGS = --root . --object-directory $(COV_O) --filter 'lib/' --exclude-unreachable-branches \
	--print-summary --txt $(COV_O)/coverage.txt --html-details $(COV_O)/html/index.html \
	--xml $(COV_O)/coverage.xml

# The live tier runs here too: the ring broker's workers, the peer guard
# and the accounting context act on the real kernel only, so the unit tests
# alone leave them uncounted.
# -fprofile-update=atomic: threads in the tests would otherwise corrupt the
# counters (gcov then reports negative branch counts).  _exit() is wrapped
# (tests/coverage/gcov_exit.c) so that forked children write their counters.
# Children that cannot write their counters lose them, and libgcov says
# so once per object file (about 70 lines per process): those that dropped
# their privileges ("profiling: ... Cannot open"), and those under a test's
# seccomp filter, which answers EPERM to openat and then to the mkdir of
# the first directory of the path ("profiling:/work:Cannot create
# directory"; about 650 lines per run).  Nothing can be written from
# inside such a sandbox, so no counts are lost by not printing them: the
# lines are dropped and counted in one summary line (COV_QUIET).
COV_CFLAGS := -O0 -g --coverage -fprofile-update=atomic
COV_QUIET = awk '/^profiling:.*(\.gcda:(Cannot open|Skip)|:Cannot create directory)$$/ { n++; next } \
	{ print; fflush() } END { if (n) printf "  %-8s %d libgcov notices not shown: children under seccomp or without privileges cannot write counts\n", "GCOV", n }'
coverage-run:
	$(Q)$(NEED) gcovr:gcovr
	$(Q)if [ -d $(COV_O) ]; then find $(COV_O) -name '*.gcda' -delete; fi
	$(Q)mkdir -p $(COV_O) && gcc $(COV_CFLAGS) -c tests/coverage/gcov_exit.c -o $(COV_O)/gcov_exit.o
	$(Q){ $(SUBMAKE) O=$(COV_O) CC=gcc CFLAGS='$(COV_CFLAGS)' \
		LDFLAGS='-Wl,--wrap=_exit $(abspath $(COV_O))/gcov_exit.o' test-run check-live 2>&1; \
		echo $$? > $(COV_O)/test-run.rc; } | $(COV_QUIET); \
		exit $$(cat $(COV_O)/test-run.rc)

coverage-report: coverage-run
	$(call msg,GCOVR,lib/ -> $(COV_O)/html/index.html)
	$(Q)mkdir -p $(COV_O)/html && $(GCOVR) $(GCOVR_ARGS)

coverage: coverage-run
	$(call msg,GCOVR,lib/ (at least $(COVERAGE_MIN)% of lines))
	$(Q)mkdir -p $(COV_O)/html && $(GCOVR) $(GCOVR_ARGS) --fail-under-line $(COVERAGE_MIN)

coverage-ci: coverage

# make check runs the unit tests once for both purposes: its "unit tests"
# step is coverage-run (gcc, -O0 --coverage), and its coverage step reads
# those counts with coverage-check, which runs nothing again.  The -O2 gcc
# build of the same suite still runs, under valgrind (test-valgrind).
coverage-check:
	$(Q)$(NEED) gcovr:gcovr
	$(Q)[ -f $(COV_O)/test-run.rc ] || { echo 'coverage-check: no counts: run make coverage-run first'; exit 1; }
	$(call msg,GCOVR,lib/ (at least $(COVERAGE_MIN)% of lines))
	$(Q)mkdir -p $(COV_O)/html && $(GCOVR) $(GCOVR_ARGS) --fail-under-line $(COVERAGE_MIN)
