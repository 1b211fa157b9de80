# mk/learn.mk: `iour-restrict learn` on the running kernel (tests/learn/run.sh):
# exact recording of tests/learn/learn_prog.c (thread, child process,
# SQPOLL ring), Debian's fio learned and run under the learned policy
# (tests/live/learn_guest.sh: the fallback on kernels before 7.0), exit
# codes and the removal of the tracefs instance.  Needs root and tracefs;
# skips, saying why, without them.  Included by the top-level Makefile.

# The emulated test of learn's trace parsing (tests/learn/tracer_emulated.c):
# synthetic trace lines through the CLI's own parser; run by check-learn
# before anything that needs root.
LEARN_EMULATED := $(O)/tests/learn_tracer_emulated

$(LEARN_EMULATED): tests/learn/tracer_emulated.c $(TOOL_CLI_OBJS) $(TOOL_DEPS)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(TOOL_CFLAGS) -o $@ $< $(TOOL_CLI_OBJS) $(TOOL_LIBS) $(LDFLAGS)

LEARN_PROG := $(O)/tests/learn_prog

$(LEARN_PROG): tests/learn/learn_prog.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -luring -lpthread $(LDFLAGS)

# The every-opcode test (tests/learn/learn_allops.c): learn's policy against
# the kernel's own trace; static in the library, so the guests need no rpath.
LEARN_ALLOPS := $(O)/tests/learn_allops

$(LEARN_ALLOPS): tests/learn/learn_allops.c $(STATIC_LIB)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< $(STATIC_LIB) -luring -lpthread $(LDFLAGS)

.PHONY: check-learn
check-learn: $(LEARN_PROG) $(LEARN_ALLOPS) $(LEARN_EMULATED) $(URING_TRY) tools
	$(Q)$(LEARN_EMULATED)
	$(Q)$(NEED) fio:fio
	$(Q)tests/learn/run.sh $(O)

# `iour-restrict merge` (tests/learn/merge.sh): unions, refusals, verdicts
# of the union; needs nothing of the machine.
.PHONY: check-merge
check-merge: tools
	$(Q)tests/learn/merge.sh $(O)

# learn.fio_iops_ratio (bench/learn_fio.sh): fio's io_uring IOPS under learn
# over alone, interleaved rounds, merged into $(O)/bench.json (kept: the
# other benchmarks' metrics).  Needs root, tracefs and fio; writes
# learn.skipped with the reason otherwise.  Not part of `make bench`, which
# needs no root.
.PHONY: bench-learn
bench-learn: tools
	$(Q)mkdir -p $(O)/bench
	$(Q)bench/learn_fio.sh $(O)/tools/iour-restrict $(O)/bench/learn.json
	$(Q)python3 scripts/bench-merge.py $(O)/bench.json $(wildcard $(O)/bench.json) \
		$(O)/bench/learn.json

include mk/audit.mk
