# mk/python.mk: the Python bindings (bindings/python, package
# iouring_restrict).  Included by the top-level Makefile, whose variables
# (O, Q, NEED, SHARED_LIB, ...) it uses.
#
# Debian's own interpreter, not whatever python3 comes first on PATH (a
# pyenv build, say): the bindings are promised to work with Debian 12's
# python3 and its python3-pytest / python3-setuptools / python3-wheel / python3-venv.
PYTHON ?= /usr/bin/python3
PY_SRC := bindings/python
PY_EXAMPLES := $(sort $(wildcard examples/python/*.py))
PY_NEED := $(PYTHON):python3 /usr/lib/python3/dist-packages/pytest/__init__.py:python3-pytest
# No __pycache__ or .pytest_cache in the source tree.
PY_ENV := PYTHONDONTWRITEBYTECODE=1

.PHONY: check-python

# The pytest suite and the Python examples, against the build tree's
# library (IOURING_RESTRICT_LIBRARY) and the package's sources (PYTHONPATH).
# The install check runs the same suite from a pip-installed copy.
check-python: lib
	$(Q)$(NEED) $(PY_NEED)
	$(call msg,PYTEST,$(PY_SRC)/tests)
	$(Q)$(PY_ENV) PYTHONPATH=$(PY_SRC) IOURING_RESTRICT_LIBRARY=$(abspath $(SHARED_LIB)) \
		$(PYTHON) -m pytest -q -p no:cacheprovider $(PY_SRC)/tests
	$(Q)for e in $(PY_EXAMPLES); do \
		printf '  %-8s %s\n' PYEX "$$e"; \
		$(PY_ENV) PYTHONPATH=$(PY_SRC) IOURING_RESTRICT_LIBRARY=$(abspath $(SHARED_LIB)) \
			$(PYTHON) "$$e" > $(O)/python-example.log 2>&1 || \
			{ cat $(O)/python-example.log; echo "$$e failed"; exit 1; }; \
	done
