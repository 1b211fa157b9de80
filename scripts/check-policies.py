#!/usr/bin/env python3
# Validates policy files against doc/policy.schema.json (Debian's
# python3-jsonschema): every file given must be valid, except those under a
# directory named "bad", which must be invalid.  The library's own loading
# of the same files is checked by the unit tests (policy_examples/*) and by
# scripts/policy-load (mk/policyfile.mk).
import json
import os
import sys

import jsonschema

schema = json.load(open(sys.argv[1]))
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema)
bad = 0
for path in sys.argv[2:]:
    errors = list(validator.iter_errors(json.load(open(path))))
    want_invalid = os.path.basename(os.path.dirname(path)) == "bad"
    if want_invalid and not errors:
        print(f"{path}: accepted by the schema, expected to be refused")
        bad += 1
    elif not want_invalid and errors:
        print(f"{path}: {errors[0].message} at /{'/'.join(map(str, errors[0].path))}")
        bad += 1
print(f"  SCHEMA   {len(sys.argv) - 2} policy files checked against {sys.argv[1]}")
sys.exit(1 if bad else 0)
