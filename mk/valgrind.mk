# mk/valgrind.mk: valgrind.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# ---- valgrind memcheck (gcc build) over
#  (1) the unit-test binary.  Criterion forks and execs a worker per test,
#      so every process writes its own log and scripts/valgrind-run.sh fails
#      on any error or definite leak in any log.  VALGRIND_FILTER (a
#      Criterion --filter pattern) selects the tests; empty = all of them;
#  (2) the fuzz targets replaying their corpora in one process each: the
#      committed seeds and, when a fuzz run left one, up to
#      VALGRIND_REPLAY_MAX inputs of $(O)/fuzz/corpus/NAME.
#
# Tests valgrind 3.19 cannot run are left out by name (each still runs
# under ASan+UBSan, test-asan); a renamed or new test of this kind fails
# under valgrind and must be added here:
#  - they install seccomp filters, and valgrind does not implement
#    seccomp(2) (-ENOSYS): companion/*, cbpf_validate/differential_vs_kernel
#    (seccomp's checker as an oracle), emulated/emulated_seccomp_companion,
#    probe/emulated_kernel_before_5_10, probe/errors_when_the_child_cannot_run,
#    probe/seccomp_faked_kernels, ring_api/create_reports_kernel_refusals,
#    ring_api/echild_when_the_probe_cannot_run,
#    verify/seccomp_kill_on_setup_is_eperm,
#    policy_real/task_fallback_companion_blocks_setup and
#    policy_compat/real_kernel_feature_level_env (install the companion),
#    policy_faults/emulated_every_step_every_errno and
#    policy_faults/tightened_task_plan_not_tightened_before_enforcement
#    (the emulated kernel runs the companion or the ringless guard through
#    the real seccomp checker),
#    ring_fds/sqpoll_ring_inherited_across_exec (the companion, and an
#    SQPOLL ring whose completions the kernel writes),
#  - peers/*: the peer guard's seccomp filter and Landlock domain
#    (valgrind implements neither seccomp(2) nor landlock_*(2), nor
#    pidfd_getfd),
#    policy_real/task_threads_report_or_refuse (apply_task installs the
#    companion by default on kernels without task restrictions),
#    policy_emulated/emulated_7_0_apply_task_and_submit,
#    policy_emulated/emulated_7_0_nnp_rules,
#    policy_emulated/emulated_7_0_stacking_in_child and
#    policy_emulated/emulated_task_set_gates_filters (the emulated 7.0-7.2
#    task plans end with the real seccomp guard for ring-less register
#    calls, doc/security.md 2.1);
#  - attacks/feature_level_env_ignored_when_setuid runs a set-user-ID copy
#    of the test binary as another user, which valgrind can neither run
#    set-user-ID nor give a log file it may write;
#  - they compare data the kernel writes through io_uring (a READV into a
#    buffer, IORING_REGISTER_QUERY results), writes valgrind cannot see, so
#    it reports the buffers as uninitialised: ring_matrix/liburing_fixed_file,
#    emulated/emulated_vs_real_kernel_ring_differential;
#  - they shrink RLIMIT_NOFILE/RLIMIT_NPROC below what valgrind itself
#    needs: verify/resource_errors;
#  - valgrind rejects a mount() with a NULL type that the kernel accepts:
#    threads/error_codes;
#  - policy_compat/probe_failure_applies_nothing fakes a kernel with
#    seccomp (see above); policy_compat/emulated_7_0_lowered_to_level_3 and
#    policy_compat/emulated_forced_levels_on_each_generation crash with a
#    signal under valgrind 3.19 only (they pass natively and under
#    ASan+UBSan); the cause is not diagnosed yet.
#  - too slow under valgrind (35 s natively: a 100,000-address policy file
#    compiled into ~40 stacked programs and simulated on 8,500 requests);
#    the same code paths run under valgrind with smaller sets in
#    filter_stack/* and policyfile_stack's other tests:
#    policyfile_stack/json_100k_deny_list_is_stacked_and_decides_like_the_rules;
#  - the command-line tool's suites, cli/*, cli_policy/*, cli_verify/*,
#    cli_schema/* and cli_prove/*: the tool runs natively even here
#    (valgrind-run.sh does not trace */tools/*; the CLI is checked under
#    ASan+UBSan, which rebuilds it sanitized), so under valgrind these
#    tests would only watch the test harness fork and exec it, at about a
#    second of valgrind start-up per test (cli_schema, which forks the
#    harness once per opcode and field, took 14% of the valgrind step's
#    process time on its own, cli_prove 3%).
# VALGRIND_FILTER= (empty) runs every test.
VALGRIND ?= valgrind
VALGRIND_SKIP := companion/* peers/* cbpf_validate/differential_vs_kernel \
	emulated/emulated_seccomp_companion probe/emulated_kernel_before_5_10 \
	probe/errors_when_the_child_cannot_run probe/seccomp_faked_kernels \
	ring_api/create_reports_kernel_refusals ring_api/echild_when_the_probe_cannot_run \
	verify/seccomp_kill_on_setup_is_eperm ring_matrix/liburing_fixed_file \
	emulated/emulated_vs_real_kernel_ring_differential verify/resource_errors \
	threads/error_codes policy_real/task_fallback_companion_blocks_setup \
	policy_faults/emulated_every_step_every_errno \
	policy_faults/tightened_task_plan_not_tightened_before_enforcement \
	policy_compat/real_kernel_feature_level_env policy_compat/probe_failure_applies_nothing \
	policy_compat/emulated_7_0_lowered_to_level_3 \
	policy_compat/emulated_forced_levels_on_each_generation \
	ring_fds/sqpoll_ring_inherited_across_exec cli/* cli_policy/* cli_verify/* cli_schema/* \
	cli_prove/* \
	policy_real/task_threads_report_or_refuse attacks/feature_level_env_ignored_when_setuid \
	policy_emulated/emulated_7_0_apply_task_and_submit policy_emulated/emulated_7_0_nnp_rules \
	policy_emulated/emulated_7_0_stacking_in_child policy_emulated/emulated_task_set_gates_filters \
	policyfile_stack/json_100k_deny_list_is_stacked_and_decides_like_the_rules
# make check leaves out, under valgrind only, the suites whose work is
# mostly processes: real probes and enforcement checks in forked and
# exec'd children, attacks, examples (probe/*, verify/*, verify_coverage/*,
# policy_real/*, policy_compat/*, ring_matrix/*, examples/*, attacks/*).
# They run under ASan+UBSan (test-asan) in the same make check, and under
# valgrind in make check-long (IOUR_TEST_LONG=1), which runs every suite
# here.  Each costs about a second of valgrind start-up per test and per
# exec'd child; leaving them out keeps make check near its time budget.
# Also left to make check-long under valgrind:
#  - the suites of static tables and layouts, whose functions read only
#    constant arrays and allocate nothing (names/*, layout/*, errors/*,
#    version/*; names' one real-kernel test compares IORING_REGISTER_QUERY
#    results, kernel writes valgrind cannot follow): ASan+UBSan check
#    their bounds, the errors fuzz target's corpus replays
#    iour_strerror/iour_errname under valgrind below, and the other suites
#    call the name functions;
#  - filter_stack's two random differentials (four fifths of filter_stack's
#    time under valgrind, the largest tests left): the same compile, split
#    and merge paths run under valgrind in filter_stack's other tests, the
#    alloc_faults stack tests and the filter corpus replay, and the
#    random cases run in full under ASan+UBSan;
#  - prop_ruleset/export_means_the_ruleset_on_every_kernel (random
#    rulesets exported for every kernel and read back the kernel's way):
#    prop_ruleset's edge-ruleset test checks the same property under
#    valgrind, and so does the ruleset fuzz target, whose corpus replays
#    below.
# Under valgrind these three random tests took 160 of the 409 seconds the
# 312 tests spent in their bodies (IOUR_TEST_QUICK).
VALGRIND_LONG_ONLY := probe/* verify/* verify_coverage/* policy_real/* policy_compat/* \
	ring_matrix/* examples/* attacks/* names/* layout/* errors/* version/* \
	filter_stack/ipv4_points_range_precheck_differential filter_stack/split_and_merge_differential \
	prop_ruleset/export_means_the_ruleset_on_every_kernel
# What valgrind is kept for: ASan and UBSan (test-asan) see out-of-bounds
# accesses, use after free and undefined behaviour, and LeakSanitizer the
# leaks of processes that exit normally; they do not see reads of
# uninitialised memory, nor leaks in the forked children that end with
# _exit() (the library's probe, companion, broker and verify children).
# Those are valgrind's part, and they live wherever lib/ code runs, so
# valgrind keeps every suite above that reaches the kernel (the syscall
# seam, the structures filled for and by it, the children) and, of the
# pure-computation suites (URING_OFF_SAME, mk/tests.mk), those that reach
# some line of lib/ nothing else reaches under valgrind.  Measured with the
# counted build (gcov line sets of lib/, one run per suite, and one of the
# fuzz targets' replays of their seeds and of a fuzz run's corpus, at most
# VALGRIND_REPLAY_MAX inputs each): the suites of VALGRIND_COVERED reach
# 3,818 lines of lib/ (46 tests), every one of which the other suites run
# here (239 tests) or the corpus replays below also reach (29 of them only
# the replays: the replays stay).  The whole selection reached 9,440 lines
# before and 9,512 with the replays after, the 11 lines missing being the
# step-name labels of plan_exec.c that no suite reaches on its own.  They
# run in full under ASan+UBSan, and under valgrind in make check-long.
VALGRIND_COVERED := cbpf_sim/* filter_64bit/* filter_compile/* filter_golden/* \
	filter_liburing/* report_table/*
ifeq ($(IOUR_TEST_LONG),)
VALGRIND_SKIP += $(VALGRIND_LONG_ONLY) $(VALGRIND_COVERED)
endif
empty :=
space := $(empty) $(empty)
# The tests to run are named suite by suite (scripts/criterion-filter.py,
# one or more runs, each told how many tests it must run): given
# "!(VALGRIND_SKIP|...)", Criterion's runner, itself under valgrind, spent
# over three minutes matching the negated pattern before it started the
# first test.  VALGRIND_FILTER=PATTERN on the command line replaces the
# computed selection (empty: every test).
ifeq ($(origin VALGRIND_FILTER),undefined)
VALGRIND_FILTER_CMD = python3 scripts/criterion-filter.py $(UNIT) $(foreach p,$(VALGRIND_SKIP),'$(p)')
else
VALGRIND_FILTER_CMD = printf '0\t%s\n' '$(VALGRIND_FILTER)'
endif
VALGRIND_REPLAY_MAX ?= 300
test-valgrind: $(UNIT) examples tools $(REPLAY_BINS)
	$(Q)$(NEED) valgrind:valgrind
	$(Q)mkdir -p $(O)/valgrind && $(VALGRIND_FILTER_CMD) > $(O)/valgrind/filters.txt
	$(Q)i=0; while IFS='	' read -r want filter; do i=$$((i + 1)); \
		printf '  %-8s %s\n' VALGRIND "$(UNIT): run $$i, $$want tests (all but VALGRIND_SKIP: $(words $(VALGRIND_SKIP)) patterns)"; \
		IOUR_TEST_QUICK=1 IOUR_EXAMPLES_DIR=$(O)/examples IOUR_TOOLS_DIR=$(O)/tools VALGRIND='$(VALGRIND)' \
		VALGRIND_EXPECT_TESTS=$$want VALGRIND_JSON=$(O)/valgrind/unit-$$i.json \
		scripts/valgrind-run.sh --criterion $(O)/valgrind/unit-$$i $(UNIT) -j2 \
			--json=$(O)/valgrind/unit-$$i.json \
			$${filter:+--filter "$$filter"} $(TEST_ARGS) < /dev/null || exit 1; \
	done < $(O)/valgrind/filters.txt
	$(Q)for n in $(FUZZ_TARGETS); do \
		printf '  %-8s %s\n' VALGRIND "fuzz replay: $$n"; \
		IOUR_REPLAY_MAX=$(VALGRIND_REPLAY_MAX) VALGRIND='$(VALGRIND)' \
		scripts/valgrind-run.sh $(O)/valgrind/fuzz-$$n $(REPLAY_O)/$$n tests/fuzz/corpus/$$n \
			$$( [ -d $(FUZZ_O)/corpus/$$n ] && echo $(FUZZ_O)/corpus/$$n ) || exit 1; \
	done
