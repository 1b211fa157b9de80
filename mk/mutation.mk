# mk/mutation.mk: the mutation campaign over lib/ (doc/design.md,
# "Mutation testing").  Included by the top-level Makefile.
#
# mutation-list: every mutant's locator in tests/mutation/mutants.txt still
# matches exactly once (seconds; make check runs it in check-policies).
# mutation: applies each mutant to a scratch copy of the tree (never the
# work tree), rebuilds, runs the unit (and live) tests its line names,
# stops at the first failure (killed), prints killed / non-equivalent and
# the survivors, and writes bench/bench-mutation.json.  Every filter must
# first pass on the unmutated tree.  CPU-heavy (about 9 s a
# mutant on 6.18 with one worker: 86 in 758 s); not part of make check.  MUTATION_JOBS <= 2.
MUTATION_JOBS ?= 2
MUTATION_ARGS ?=

.PHONY: mutation mutation-list
mutation-list:
	$(Q)$(NEED) python3:python3
	$(Q)python3 scripts/mutation.py --check

mutation: unit-tests tools live-tests examples uring-try
	$(Q)$(NEED) python3:python3
	$(Q)python3 scripts/mutation.py --run -j $(MUTATION_JOBS) $(MUTATION_ARGS)
