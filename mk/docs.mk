# mk/docs.mk: manual pages (sections 1, 3, 7) and the tutorial programs.
# Included by the top-level Makefile, whose variables (O, Q, NEED, msg,
# ALL_CFLAGS, SHARED_LIB, ...) it uses.
#
#   man            $(O)/man/man3/FUNCTION.3 for every public function (from
#                  the headers' Doxygen comments: scripts/gen-man3.py),
#                  man1/iour-restrict.1 and one man1/iour-restrict-COMMAND.1
#                  per "### COMMAND" section of doc/cli.md's COMMANDS and
#                  man7/iouring-restrict.7 from doc/iouring-restrict.7.md
#                  (scripts/md2man.py)
#   check-man      every public function has a page, every command of the
#                  tool's table (tools/iour-restrict.c) and of its --help has
#                  its iour-restrict-COMMAND(1); every page renders
#                  with `man --warnings -l` without a single warning
#   tutorial       builds examples/tutorial/*.c
#   check-tutorial runs them and checks their output (scripts/check-tutorial.sh)
#   check-errsets  the error sets of lib/base/errsets.def equal the codes each
#                  function's header comment documents after @return
#                  (scripts/check-errsets.py)
#   check-schema-docs  the lists of fields, constants and payloads that
#                  doc/cli.md (so the iour-restrict(1) pages),
#                  doc/policy-files.md, doc/iouring-restrict.7.md and
#                  tools/prove/iour-prove write by hand agree with the
#                  library's request schema, and doc/policy.schema.json's
#                  field enum is what `make generate` writes
#                  (scripts/check-schema-docs.py)
#   check-man-examples  builds every program of doc/examples/man3/ (the
#                  EXAMPLES of the section 3 pages) against the library and
#                  runs each once (scripts/check-man-examples.sh)
#   check-docs     check-man, check-man-examples, check-tutorial,
#                  check-errsets and check-schema-docs (the step of
#                  `make check`)

MANDIR ?= $(prefix)/share/man
MAN_HDRS := $(sort $(wildcard include/iouring_restrict/*.h))
MAN_OUT := $(O)/man
MAN3_STAMP := $(MAN_OUT)/man3/.stamp
# One git-style page per command section of doc/cli.md, found by md2man.py
# itself, so a new section gets its page without an edit here.
MAN1_CMDS := $(shell python3 scripts/md2man.py --list-commands doc/cli.md 2>/dev/null)
MAN1_PAGES := $(MAN_OUT)/man1/iour-restrict.1 \
	$(patsubst %,$(MAN_OUT)/man1/iour-restrict-%.1,$(MAN1_CMDS))
MAN7_PAGES := $(MAN_OUT)/man7/iouring-restrict.7
# The public functions, from the headers (not from doxygen): used by
# uninstall, so that it needs neither doxygen nor a build.
MAN3_NAMES = $(shell python3 scripts/gen-man3.py --list $(MAN_HDRS))

# The programs the section 3 pages show (scripts/gen-man3.py picks, for
# each function, one that calls it).
MAN3_EXAMPLE_SRCS := $(sort $(wildcard doc/examples/man3/*.c))
MAN3_EXAMPLES := $(patsubst doc/examples/man3/%.c,$(O)/examples/man3/%,$(MAN3_EXAMPLE_SRCS))

TUTORIAL_SRCS := $(sort $(wildcard examples/tutorial/*.c))
TUTORIAL := $(patsubst examples/tutorial/%.c,$(O)/examples/tutorial/%,$(TUTORIAL_SRCS))

.PHONY: man check-man check-man-examples tutorial check-tutorial check-errsets check-schema-docs \
	check-docs

man: $(MAN3_STAMP) $(MAN1_PAGES) $(MAN7_PAGES)

# doxygen's XML of the headers alone (the HTML run of `make doc` checks the
# warnings), then one page per function.
$(MAN3_STAMP): $(MAN_HDRS) doc/Doxyfile scripts/gen-man3.py $(MAN3_EXAMPLE_SRCS)
	$(Q)$(NEED) doxygen:doxygen python3:python3
	$(call msg,GEN,$(MAN_OUT)/man3)
	$(Q)rm -rf $(O)/man-xml $(MAN_OUT)/man3 && mkdir -p $(O)/man-xml $(MAN_OUT)/man3
	$(Q)( cat doc/Doxyfile; echo "INPUT = include/iouring_restrict"; \
		echo "USE_MDFILE_AS_MAINPAGE ="; echo "OUTPUT_DIRECTORY = $(O)/man-xml"; \
		echo "GENERATE_XML = YES"; echo "GENERATE_HTML = NO"; echo "WARN_AS_ERROR = NO" ) | \
		$(DOXYGEN) - > $(O)/man-xml/doxygen.log 2>&1
	$(Q)python3 scripts/gen-man3.py $(O)/man-xml/xml $(MAN_OUT)/man3 $(MAN_HDRS)
	$(Q)touch $@

$(MAN_OUT)/man1/%.1: doc/cli.md scripts/md2man.py
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D) && python3 scripts/md2man.py $< $@

$(MAN_OUT)/man1/iour-restrict-%.1: doc/cli.md scripts/md2man.py
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D) && python3 scripts/md2man.py --command $* $< $@

$(MAN_OUT)/man7/%.7: doc/%.7.md scripts/md2man.py
	$(call msg,GEN,$@)
	$(Q)mkdir -p $(@D) && python3 scripts/md2man.py $< $@

check-man: man
	$(Q)$(NEED) man:man-db groff:groff-base
	$(Q)CLI_SRC=tools/iour-restrict.c CLI_BIN=$(O)/tools/iour-restrict \
		scripts/check-man.sh $(MAN_OUT) $(MAN_HDRS)

$(O)/examples/man3/%: doc/examples/man3/%.c $(SHARED_LIB) $(SHARED_DEV) $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -L$(O) -Wl,-rpath,'$$ORIGIN/../..' \
		-liouring-restrict -luring $(LDFLAGS)

check-man-examples: $(MAN3_EXAMPLES)
	$(Q)scripts/check-man-examples.sh $(O)/examples/man3 $(MAN3_EXAMPLES)

tutorial: $(TUTORIAL)
$(O)/examples/tutorial/%: examples/tutorial/%.c $(SHARED_LIB) $(SHARED_DEV) $(HDRS)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -o $@ $< -L$(O) -Wl,-rpath,'$$ORIGIN/../..' \
		-liouring-restrict -luring $(LDFLAGS)

check-tutorial: $(TUTORIAL)
	$(Q)scripts/check-tutorial.sh $(O)/examples/tutorial

check-errsets:
	$(Q)$(NEED) python3:python3
	$(Q)python3 scripts/check-errsets.py --cc '$(CC)' .

check-schema-docs: $(SHARED_LIB) $(SHARED_DEV)
	$(Q)$(NEED) python3:python3
	$(call msg,CHECK,schema lists of the docs (scripts/check-schema-docs.py))
	$(Q)python3 scripts/check-schema-docs.py --build $(O)

check-docs: check-man check-man-examples check-tutorial check-errsets check-schema-docs
