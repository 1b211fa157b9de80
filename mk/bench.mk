# mk/bench.mk: benchmarks.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# Each bench/*.c is one program that writes a nested JSON object to the file
# named by its argument; scripts/bench-merge.py prints them side by side and
# merges them into $(O)/bench.json.
bench: deps
	$(Q)$(MAKE) --no-print-directory $(BENCHES)
	$(Q)set -e; for b in $(BENCHES); do $$b $$b.json; done
	$(Q)python3 scripts/bench-merge.py $(O)/bench.json $(addsuffix .json,$(BENCHES))

$(O)/bench/%: bench/%.c $(STATIC_LIB) $(HDRS) $(wildcard bench/*.h)
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(ALL_CFLAGS) -Ibench -Itests/common -Wno-missing-field-initializers -o $@ $< \
		$(STATIC_LIB) -luring -lseccomp -lm $(LDFLAGS)
