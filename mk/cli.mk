# mk/cli.mk: the command-line tool's extras: the bash completion (installed,
# and checked by sourcing it in bash), and uring-try, the small io_uring
# program the CLI tests run under policies.  Included by the top-level
# Makefile, whose variables (O, Q, NEED, ...) it uses.

DATAROOTDIR ?= $(prefix)/share
BASHCOMPDIR ?= $(DATAROOTDIR)/bash-completion/completions
BASH_COMPLETION := tools/completion/iour-restrict.bash

# ---- uring-try: a test program (not part of `make all`, which needs no
# test headers); test-run, test-asan, check-live and the guest payloads
# build it in their O, next to the tools, where the CLI tests look for it.
URING_TRY := $(O)/tests/uring-try
# The three test programs link nothing of the library and are built without
# the sanitizers: they run confined by the peer guard, which denies
# PTRACE_ATTACH, and LeakSanitizer attaches to the process's own threads at
# exit (it then fails with "does not work under ptrace").  The library and
# the tools stay sanitized in test-asan.
PROG_CFLAGS = $(filter-out -fvisibility=hidden $(SAN_FLAGS),$(ALL_CFLAGS))
.PHONY: uring-try
uring-try: $(URING_TRY)
$(URING_TRY): tests/progs/uring_try.c | need-example-libs
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) -o $@ $< -luring $(LDFLAGS)

# ---- broker-try: the raw-syscall io_uring program (no liburing, no
# libiouring-restrict) the broker tests run under `run` and the broker API.
BROKER_TRY := $(O)/tests/broker-try
$(BROKER_TRY): tests/progs/broker_try.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) -o $@ $< -lpthread $(LDFLAGS)

# ---- escape-try: the raw-syscall program that tries to take a ring from
# another process (ptrace injection, pidfd_getfd, process_vm_*, /proc/PID/mem)
# under `run` (tests/live/test_live_escape.c).
ESCAPE_TRY := $(O)/tests/escape-try
$(ESCAPE_TRY): tests/progs/escape_try.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PROG_CFLAGS) -Itests/common -o $@ $< $(LDFLAGS)

tools: $(BROKER_TRY) $(ESCAPE_TRY)

# ---- bash completion
install: install-bash-completion
uninstall: uninstall-bash-completion
.PHONY: install-bash-completion uninstall-bash-completion check-cli-completion check-cli

install-bash-completion:
	install -d $(DESTDIR)$(BASHCOMPDIR)
	install -m 644 $(BASH_COMPLETION) $(DESTDIR)$(BASHCOMPDIR)/iour-restrict

uninstall-bash-completion:
	rm -f $(DESTDIR)$(BASHCOMPDIR)/iour-restrict

# make check's CLI step: the completion, and the CLI's test policies against
# the JSON Schema (their behaviour is tested in tests/unit/test_cli_policy.c,
# part of test-run).
check-cli: check-cli-completion check-generate check-schema-extra
	$(Q)$(NEED) python3:python3 /usr/lib/python3/dist-packages/jsonschema:python3-jsonschema
	$(Q)python3 scripts/check-policies.py doc/policy.schema.json $(sort $(wildcard tests/cli/policies/*.json))

# Sources the completion in bash and checks what it offers for each
# command, against the tool's own lists (tests/cli/completion.sh).
check-cli-completion: tools
	$(call msg,TEST,$(BASH_COMPLETION))
	$(Q)IOUR_TOOL=$(O)/tools/iour-restrict bash tests/cli/completion.sh $(BASH_COMPLETION)

# ---- golden outputs of `compile` (tests/unit/test_cli_policy.c compares
# them byte for byte).  Regenerate after a deliberate change to the plan's
# text, then review the diff: `make cli-golden`.
CLI_GOLDEN := \
	client:6.18:text client:7.2:text client:7.2:json client:7.2:c \
	nop-only:6.18:text nop-only:7.0:text nop-only:6.18:json nop-only:6.18:c \
	sealed:6.1:text sealed:7.2:text risky:6.18:text risky:7.2:text
.PHONY: cli-golden
cli-golden: tools
	$(Q)mkdir -p tests/cli/golden
	$(Q)for g in $(CLI_GOLDEN); do \
		p=$${g%%:*}; r=$${g#*:}; k=$${r%%:*}; f=$${r#*:}; \
		$(O)/tools/iour-restrict compile tests/cli/policies/$$p.json --kernel $$k --format $$f \
			> tests/cli/golden/$$p.$$k.$$f || exit 1; \
	done
	@echo "cli-golden: $(words $(CLI_GOLDEN)) files in tests/cli/golden/"

# The live tier runs `iour-restrict run` (tests/live/test_live_cli.c).
check-live: tools
# The unit suite's CLI tests run uring-try wherever the suite runs.
test-valgrind: uring-try

# ---- generated lists: the bindings' opcode, register-opcode, SQE-flag and
# field lists are written from the library's tables (lib/base/names.c,
# lib/base/schema.def) by scripts/gen-bindings.py, which compiles and runs
# scripts/gen-bindings.c against the static library; every other public
# constant (enum members, #defines: the -sys crate's constants, the Python
# enums' members) from the headers, valued by a program it compiles against
# them; doc/policy.schema.json's
# field enum by scripts/check-schema-docs.py (checked by check-docs).
# `make generate` rewrites them; check-generate (part of check-cli, so of make check) fails
# if regenerating would change a committed file.  It compares in memory,
# not with git, so it works in a tarball too.
.PHONY: generate check-generate
generate: $(STATIC_LIB) $(SHARED_LIB) $(SHARED_DEV)
	$(call msg,GEN,bindings (scripts/gen-bindings.py))
	$(Q)python3 scripts/gen-bindings.py --build $(O) --cc $(CC) --cflags '$(CPPFLAGS) $(EXTRA_CFLAGS)'
	$(call msg,GEN,doc/policy.schema.json (scripts/check-schema-docs.py --write))
	$(Q)python3 scripts/check-schema-docs.py --build $(O) --write

check-generate: $(STATIC_LIB)
	$(call msg,GEN,bindings (check: regenerating changes nothing))
	$(Q)python3 scripts/gen-bindings.py --build $(O) --cc $(CC) --cflags '$(CPPFLAGS) $(EXTRA_CFLAGS)' --check

# ---- the fictitious payload (tests/schema/fictitious.def): a copy of the
# library and the tools built with -DIOUR_SCHEMA_TEST_EXTRA, which adds its
# rows to lib/base/schema.def, in its own output directory; tests/schema/run.sh
# shows that the public view, the rule language, the disassembler, the
# simulator, policy files and the bindings' generator handle it with no
# other source edit (doc/design.md, "Adding a filterable opcode or field").
SCHEMA_EXTRA_O := $(O)/schema-extra
SCHEMA_EXTRA_CFLAGS := $(EXTRA_CFLAGS) -DIOUR_SCHEMA_TEST_EXTRA -I$(CURDIR)/tests/schema
.PHONY: check-schema-extra
check-schema-extra: tools
	$(call msg,BUILD,$(SCHEMA_EXTRA_O) (-DIOUR_SCHEMA_TEST_EXTRA))
	$(Q)$(MAKE) --no-print-directory O=$(SCHEMA_EXTRA_O) \
		EXTRA_CFLAGS='$(SCHEMA_EXTRA_CFLAGS)' lib tools
	$(call msg,TEST,tests/schema/run.sh)
	$(Q)$(NEED) python3:python3
	$(Q)sh tests/schema/run.sh $(SCHEMA_EXTRA_O) $(O)/tools/iour-restrict '$(CC)' \
		'$(CPPFLAGS) $(SCHEMA_EXTRA_CFLAGS)'

# ---- seccomp-profile on Docker's, podman's and containerd's default
# profiles: golden outputs (examples/seccomp/) and the changes printed
# (tests/cli/seccomp/*.changes), plus refusals (tests/cli/seccomp.sh).
# `make seccomp-golden` rewrites the golden files; review the diff.
.PHONY: check-seccomp-profile seccomp-golden check-runc-shim
check-cli: check-seccomp-profile check-runc-shim
check-seccomp-profile: tools
	$(call msg,TEST,seccomp-profile)
	$(Q)sh tests/cli/seccomp.sh $(O)

# runc-shim with a stand-in runc (tests/cli/runc-shim.sh); with Docker:
# make check-engines.
check-runc-shim: tools
	$(call msg,TEST,runc-shim)
	$(Q)sh tests/cli/runc-shim.sh $(O)

SECCOMP_GOLDEN := docker:docker-20.10.24 podman:podman-4.3.1 containerd:containerd-1.6.20
seccomp-golden: tools
	$(Q)for e in $(SECCOMP_GOLDEN); do \
		eng=$${e%%:*}; f=tests/cli/seccomp/$${e#*:}; \
		$(O)/tools/iour-restrict seccomp-profile --engine $$eng --input $$f.json \
			--listener-path /run/iour-restrict/agent.sock \
			-o examples/seccomp/$$eng.json 2>$$f.changes || exit 1; \
	done
