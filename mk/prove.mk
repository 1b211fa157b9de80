# mk/prove.mk: `make prove`, the SMT proofs of compiled filters
# (tools/prove/iour-prove, Python and Debian's python3-z3; doc/cli.md
# "prove").  The library and `make all` do not need the solver: only the
# `prove` command of the CLI and this target run it.  Included by the
# top-level Makefile, whose variables (O, Q, NEED, ...) it uses.

PROVER := tools/prove/iour-prove
# The CLI finds the prover of its source tree unless IOUR_PROVE names another;
# PROVE_PATH is where an installed CLI looks (debian/rules sets it).
PROVE_PATH ?= $(abspath $(PROVER))
TOOL_CFLAGS += -DIOUR_PROVE_PATH='"$(PROVE_PATH)"'

.PHONY: prove
prove: tools
	$(Q)$(NEED) /usr/lib/python3/dist-packages/z3/__init__.py:python3-z3
	$(call msg,PROVE,every program of the test corpus and random policies)
	$(Q)/usr/bin/python3 scripts/prove-corpus.py --cli $(O)/tools/iour-restrict --gen $(PROVE_GEN) $(PROVE_ARGS)

# The differential test's random policies as a job list (tests/prove).
PROVE_GEN := $(O)/tests/prove-gen
PROVE_GEN_OBJS := $(O)/tobj/prove/prove_gen.o $(O)/tobj/common/refgen.o \
	$(O)/tobj/common/refeval.o $(O)/tobj/common/cbpf_gen.o
$(PROVE_GEN): $(PROVE_GEN_OBJS) $(STATIC_LIB)
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $(PROVE_GEN_OBJS) $(STATIC_LIB) $(LDFLAGS)

prove: $(PROVE_GEN)
