# mk/policyfile.mk: policy files.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, UNIT, ...) it uses.
#
# check-policies: every example and test policy is checked against the JSON
# Schema (doc/policy.schema.json; files under tests/policies/bad/ must be
# refused), then the unit tests of policy files run: they load each example
# with the library, compile it for 6.18 and 7.2, check requests with
# iour_policy__decide() and every loader error.  It also checks that every
# mutant of the mutation campaign still applies (make mutation-list,
# mk/mutation.mk; seconds).
POLICY_FILES := $(sort $(wildcard examples/policies/*.json tests/policies/good/*.json \
	tests/policies/bad/*.json))

check-policies: $(UNIT)
	$(Q)$(NEED) python3:python3 /usr/lib/python3/dist-packages/jsonschema:python3-jsonschema
	$(Q)python3 scripts/mutation.py --check
	$(Q)python3 scripts/check-policies.py doc/policy.schema.json $(POLICY_FILES)
	$(call msg,TEST,$(UNIT) policyfile policy_examples)
	$(Q)for s in policyfile policy_examples; do \
		$(UNIT) -j2 --filter "$$s/*" --xml=$(O)/tests/$$s.xml || exit 1; \
		$(call check_ran,$(O)/tests/$$s.xml); done

.PHONY: check-policies
