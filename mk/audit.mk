# mk/audit.mk: `iour-restrict run --audit` and `run --log-denials` on the
# running kernel (tests/audit/run.sh): the would-be denials of a known mix
# (tests/audit/mix_prog.c) against the kernel's own submit trace minus the
# policy, the --audit-out delta through merge, the denial log's pids and
# opcodes with its positive control, and Debian's fio and qemu-img under a
# policy without FSYNC.  Needs root and tracefs; skips, saying why,
# without them.  Included by mk/learn.mk (audit mode uses learn's tracefs
# instance).

AUDIT_MIX := $(O)/tests/audit_mix

$(AUDIT_MIX): tests/audit/mix_prog.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -luring $(LDFLAGS)

.PHONY: check-audit
check-audit: $(AUDIT_MIX) tools
	$(Q)$(NEED) fio:fio qemu-img:qemu-utils
	$(Q)tests/audit/run.sh $(O)

# audit.fio_iops_ratio and denials.fio_iops_ratio (bench/audit_fio.sh):
# fio's io_uring IOPS under `run --audit` and under `run --log-denials`
# over fio under plain `run` with the same policy (which allows fio's
# requests), interleaved rounds, merged into $(O)/bench.json.  Needs root,
# tracefs and fio; writes audit.skipped with the reason otherwise.
.PHONY: bench-audit
bench-audit: tools
	$(Q)mkdir -p $(O)/bench
	$(Q)bench/audit_fio.sh $(O)/tools/iour-restrict $(O)/bench/audit.json
	$(Q)python3 scripts/bench-merge.py $(O)/bench.json $(wildcard $(O)/bench.json) \
		$(O)/bench/audit.json
