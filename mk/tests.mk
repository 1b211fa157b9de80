# mk/tests.mk: unit tests (Criterion), the live tier, the ASan+UBSan run.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# ---- tests: every tests/unit/*.c is a Criterion file; one binary.
# The headers each part includes, checked once before the first of its
# files is compiled (order-only: it never makes anything out of date).
# `make all` (library, tools, examples) needs only jansson and liburing;
# Criterion is for the tests (and uring-try, mk/cli.mk) alone, and
# libseccomp for the benchmarks alone (mk/bench.mk).
.PHONY: need-lib-libs need-example-libs need-libs
need-lib-libs:
	$(Q)$(NEED) /usr/include/jansson.h:libjansson-dev
need-example-libs:
	$(Q)$(NEED) /usr/include/liburing.h:liburing-dev
need-libs:
	$(Q)$(NEED) /usr/include/criterion/criterion.h:libcriterion-dev \
		/usr/include/liburing.h:liburing-dev
$(STATIC_OBJS) $(PIC_OBJS): | need-lib-libs
$(EXAMPLES): | need-example-libs
$(TEST_OBJS) $(LIVE_OBJS): | need-libs

$(O)/tobj/%.o: tests/%.c $(DEP_STAMP)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TEST_CFLAGS) $(DEPFLAGS) -c $< -o $@

# The list of test objects as a prerequisite: deleting a test file relinks.
UNIT_OBJS_LIST := $(O)/tests/unit.objs
$(UNIT_OBJS_LIST): FORCE
	@mkdir -p $(@D)
	@if [ "$$(cat $@ 2>/dev/null)" != '$(TEST_OBJS)' ]; then printf '%s\n' '$(TEST_OBJS)' > $@; fi

$(UNIT): $(TEST_OBJS) $(STATIC_LIB) $(UNIT_OBJS_LIST)
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
check-live: $(LIVE) examples uring-try
	$(call msg,TEST,$(LIVE) (live tier, real kernel))
	$(Q)IOUR_EXAMPLES_DIR=$(O)/examples $(LIVE) --verbose -j1 --json=$(O)/tests/live.json $(LIVE_ARGS)
	$(Q)$(SKIPS) $(O)/tests/live.json 'live tier'

# The tests a run skipped for want of something on this machine (their
# cr_skip_test() reasons, from Criterion's --json report) go to make
# check's summary (scripts/criterion-skips.py, scripts/ci-step.sh).
SKIPS := python3 scripts/criterion-skips.py

# Criterion prints "Synthesis: Tested: N | Passing: ..." on stderr.
# Criterion exits 0 without running anything on an unknown option, so the
# runs also require a report in which at least one test was not skipped
# ("disabled" counts the tests a --filter left out).
check_ran = set -- $$(sed -n 's/.*<testsuites[^>]* tests="\([0-9]*\)"[^>]* disabled="\([0-9]*\)".*/\1 \2/p' $(1)); \
	[ "$${1:-0}" -gt "$${2:-0}" ] || { echo "$(1): Criterion ran no test"; exit 1; }

test-run: $(UNIT) examples tools uring-try
	$(call msg,TEST,$(UNIT))
	$(Q)IOUR_EXAMPLES_DIR=$(O)/examples IOUR_TOOLS_DIR=$(O)/tools $(UNIT) -j2 \
		--xml=$(O)/tests/unit.xml --json=$(O)/tests/unit.json $(TEST_ARGS)
	$(Q)$(call check_ran,$(O)/tests/unit.xml)
	$(Q)$(SKIPS) $(O)/tests/unit.json 'unit tests'

# The same suite built with clang under ASan+UBSan (static library only:
# sanitized shared objects cannot be linked with -z defs), and counted:
# the one instrumented run of the unit suite and the live tier, whose gcov
# counters (clang --coverage, mk/coverage.mk) the coverage step reads
# afterwards (coverage-check), so the suite is not run a second time under
# gcc --coverage.  The tools are rebuilt sanitized and counted too, and the
# tests run those; the examples are the gcc build's (sanitized shared
# objects cannot be linked), so the coverage step counts what the suite
# does in lib/ through the tests and the tools.
# Criterion runs each test in a worker process and counts it passed even
# when LeakSanitizer reports a leak as that worker exits (the runner's exit
# status stays 0), so each run's output is kept and any sanitizer report in
# it fails the step (scripts/asan-run.sh).  With parallel workers Criterion
# 2.4's runner leaks one 48-byte block of its own; asan-run.sh forgives
# exactly that report and only from the runner's PID (its self-test,
# tests/scripts/asan-run-selftest.sh, runs first and proves a worker's leak
# or any other report still fails), so the unit suite runs with -j2.
ASAN_O := $(O)/asan-cov
ASAN_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
test-asan:
	$(Q)$(NEED) clang:clang $$(clang -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.asan-x86_64.a:libclang-rt-14-dev /usr/include/criterion/criterion.h:libcriterion-dev
	$(Q)if [ "$$(cat $(ASAN_O)/flags 2>/dev/null)" != '$(ASAN_CFLAGS) $(COV_CFLAGS)' ]; then \
		rm -rf $(ASAN_O); fi
	$(Q)if [ -d $(ASAN_O) ]; then find $(ASAN_O) -name '*.gcda' -delete; fi
	$(Q)mkdir -p $(ASAN_O) && clang $(ASAN_CFLAGS) -c tests/coverage/gcov_exit.c -o $(ASAN_O)/gcov_exit.o
	$(Q)echo '$(ASAN_CFLAGS) $(COV_CFLAGS)' > $(ASAN_O)/flags
	$(Q)$(MAKE) --no-print-directory $(BUILD_J) O=$(ASAN_O) CC=clang SAN=1 LIB_COV=1 \
		CFLAGS='$(ASAN_CFLAGS)' LDFLAGS='--coverage -Wl,--wrap=_exit $(abspath $(ASAN_O))/gcov_exit.o' \
		unit-tests live-tests tools uring-try
	$(call msg,TEST,scripts/asan-run.sh (self-test))
	$(Q)sh tests/scripts/asan-run-selftest.sh
	$(call msg,TEST,$(ASAN_O)/tests/unit (ASan+UBSan, counted))
	$(Q){ $(ASAN_ENV) IOUR_EXAMPLES_DIR=$(O)/examples IOUR_TOOLS_DIR=$(ASAN_O)/tools \
		scripts/asan-run.sh $(ASAN_O)/tests/unit.log $(ASAN_O)/tests/unit -j2 \
		--xml=$(ASAN_O)/tests/unit.xml --json=$(ASAN_O)/tests/unit.json $(TEST_ARGS); \
		echo $$? > $(ASAN_O)/tests/unit.rc; } | $(COV_QUIET); exit $$(cat $(ASAN_O)/tests/unit.rc)
	$(Q)$(call check_ran,$(ASAN_O)/tests/unit.xml)
	$(Q)$(SKIPS) $(ASAN_O)/tests/unit.json 'unit tests (ASan)'
	$(call msg,TEST,$(ASAN_O)/tests/live (ASan+UBSan, counted))
	$(Q){ $(ASAN_ENV) IOUR_EXAMPLES_DIR=$(O)/examples \
		scripts/asan-run.sh $(ASAN_O)/tests/live.log $(ASAN_O)/tests/live -j1 \
		--json=$(ASAN_O)/tests/live.json $(LIVE_ARGS); \
		echo $$? > $(ASAN_O)/tests/live.rc; } | $(COV_QUIET); exit $$(cat $(ASAN_O)/tests/live.rc)
	$(Q)$(SKIPS) $(ASAN_O)/tests/live.json 'live tier (ASan)'
	$(Q)touch $(ASAN_O)/counted

# ---- check-uring-off: the unit suite where io_uring is unusable.
# tests/progs/uring_off.c installs a seccomp filter (no sysctl is touched)
# under which io_uring_setup, then in a second run io_uring_register, fails
# with EPERM, and execs the unit binary.  Every test that needs a real ring
# must skip saying why (UNIT_REQUIRE_URING, tests/common/uring_avail.h);
# the rest must run and pass; any failure fails the step.  The skips go to
# make check's summary like the other runs' (their one-line notices on
# stderr, the same for every test, are kept in the run's .log only).
# x86-64 and arm64 (the filter checks the native audit arch).
#
# URING_OFF_SAME: the suites that make no io_uring_setup or
# io_uring_register call at all, in any process (counted with strace -f
# over each suite, the command-line tool's children included): they are
# pure computation (cBPF, the filter compiler and simulator, policy files,
# the planner on described or emulated kernels), so a refused ring cannot
# change what they do, and the two runs leave them out (about two thirds
# of the suite's time: cbpf_validate and policyfile_stack alone are half
# of it).  They run in every other unit run.  A suite listed here must
# not hold a ring test: a file defining one of these suites that uses
# UNIT_REQUIRE_URING fails the step.  make check-long (IOUR_TEST_LONG=1)
# runs every suite both ways.
URING_OFF_SAME := cbpf_ctx cbpf_disasm cbpf_sim cbpf_validate cli_prove cli_schema errors \
	filter_64bit filter_builder filter_compile filter_diff filter_golden filter_liburing \
	filter_spec_skip fuzz_regress kernel_describe layout plan_brokered policy_api \
	policy_examples policy_faults policyfile policyfile_stack probe_emulated prop_fields \
	prop_ruleset report_table schema_api version
# The tests to run are named suite by suite (scripts/criterion-filter.py
# says why: a long negated pattern costs Criterion's runner seconds), and
# each run must select as many tests as the filter names.
ifeq ($(IOUR_TEST_LONG),)
URING_OFF_FILTER_CMD = python3 scripts/criterion-filter.py $(UNIT) $(patsubst %,'%/*',$(URING_OFF_SAME))
else
URING_OFF_FILTER_CMD = printf '0\t\n'
endif
URING_OFF := $(O)/tests/uring-off
$(URING_OFF): tests/progs/uring_off.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -fvisibility=hidden,$(ALL_CFLAGS)) -o $@ $< $(LDFLAGS)

.PHONY: check-uring-off
check-uring-off: $(UNIT) $(URING_OFF) examples tools uring-try
	$(Q)bad=$$(for s in $(URING_OFF_SAME); do grep -l "^Test($$s," tests/unit/*.c; done | \
		sort -u | xargs -r grep -l UNIT_REQUIRE_URING); \
		[ -z "$$bad" ] || { echo "check-uring-off: URING_OFF_SAME (mk/tests.mk) lists a suite with ring tests, in: $$bad"; exit 1; }
	$(Q)$(URING_OFF_FILTER_CMD) > $(O)/tests/uring-off-filters.txt
	$(Q)for call in setup register; do i=0; \
	while IFS='	' read -r want filter; do i=$$((i + 1)); run=$$call-$$i; \
		echo "  TEST     $(UNIT) (io_uring_$$call fails with EPERM: seccomp, $(URING_OFF); run $$i)"; \
		IOUR_EXAMPLES_DIR=$(O)/examples IOUR_TOOLS_DIR=$(O)/tools $(URING_OFF) $$call $(UNIT) -j2 \
			--xml=$(O)/tests/unit-uring-off-$$run.xml \
			--json=$(O)/tests/unit-uring-off-$$run.json $${filter:+--filter "$$filter"} $(TEST_ARGS) \
			< /dev/null > $(O)/tests/unit-uring-off-$$run.log 2>&1; rc=$$?; \
		grep -v '^unit: skipped: ' $(O)/tests/unit-uring-off-$$run.log; \
		[ $$rc -eq 0 ] || exit 1; \
		$(call check_ran,$(O)/tests/unit-uring-off-$$run.xml); \
		$(SKIPS) $$( [ "$$want" -gt 0 ] && echo --expect $$want) $(O)/tests/unit-uring-off-$$run.json \
			"unit tests, io_uring_$$call denied by seccomp" || exit 1; \
	done < $(O)/tests/uring-off-filters.txt || exit 1; done
