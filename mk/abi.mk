# mk/abi.mk: public headers, exported symbols and the ABI baseline.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

check-headers:
	$(Q)$(NEED) g++:g++ clang:clang
	$(call msg,HDRS,c99 c11 c++)
	@mkdir -p $(O)/hdr
	$(Q)printf '#include <iouring_restrict/iouring_restrict.h>\nint main(void) { return iour_version_major() == 0; }\n' > $(O)/hdr/t.c
	$(Q)gcc -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude -c $(O)/hdr/t.c -o $(O)/hdr/c99.o
	$(Q)gcc -std=c11 -Wall -Wextra -Werror -pedantic -Iinclude -c $(O)/hdr/t.c -o $(O)/hdr/c11.o
	$(Q)clang -std=c99 -Wall -Wextra -Werror -pedantic -Iinclude -c $(O)/hdr/t.c -o $(O)/hdr/clang.o
	$(Q)g++ -std=c++11 -x c++ -Wall -Wextra -Werror -pedantic -Iinclude -c $(O)/hdr/t.c -o $(O)/hdr/cxx.o
	$(Q)for h in include/iouring_restrict/*.h; do \
		printf '#include "%s"\n#include "%s"\n' "$$h" "$$h" > $(O)/hdr/one.c; \
		gcc -std=c99 -Wall -Wextra -Werror -pedantic -I. -c $(O)/hdr/one.c -o $(O)/hdr/one.o || exit 1; \
		g++ -x c++ -Wall -Wextra -Werror -pedantic -I. -c $(O)/hdr/one.c -o $(O)/hdr/one.o || exit 1; \
	done

# Exported symbols == names in the map == abi/symbols.txt; every one iour_*.
check-symbols: $(SHARED_REAL)
	$(call msg,ABI,symbols)
	$(Q)scripts/check-symbols.sh $(SHARED_REAL) $(MAP) abi/symbols.txt


# ---- ABI gate: (a)+(b) check-symbols, (c) abi-dumper on a -g build of the
# shared object, compared by abi-compliance-checker with the committed
# baseline.  `make abi-dump` writes the baseline of the current version.
ABI_O := $(O)/abi
ABI_SO := $(ABI_O)/libiouring-restrict.so.$(VERSION)
ABI_BASE_VERSION ?= 1.0.0
ABI_BASELINE ?= abi/libiouring-restrict-$(ABI_BASE_VERSION).dump
ABI_DUMPER ?= abi-dumper
ABI_CHECKER ?= abi-compliance-checker

$(ABI_O)/current.dump: FORCE
	$(Q)$(NEED) abi-dumper:abi-dumper ctags:universal-ctags eu-readelf:elfutils vtable-dumper:vtable-dumper
	$(Q)$(SUBMAKE) O=$(ABI_O) CFLAGS='-O0 -g' $(ABI_SO)
	$(call msg,ABIDUMP,$@)
	$(Q)$(ABI_DUMPER) $(ABI_SO) -o $@ -lver $(VERSION) \
		-public-headers include/iouring_restrict -quiet > $(ABI_O)/abi-dumper.log 2>&1 \
		|| { cat $(ABI_O)/abi-dumper.log; exit 1; }

check-abi: check-symbols $(ABI_O)/current.dump
	$(Q)$(NEED) abi-compliance-checker:abi-compliance-checker ctags:universal-ctags
	$(Q)if [ ! -f $(ABI_BASELINE) ]; then \
		echo "check-abi: NO BASELINE: $(ABI_BASELINE) does not exist yet, so layer (c)"; \
		echo "check-abi: (binary compatibility) is skipped; layers (a) and (b) passed."; \
		echo "check-abi: run 'make abi-dump' when the $(ABI_BASE_VERSION) API is final and commit it."; \
	else \
		printf '  %-8s %s\n' ABICMP '$(ABI_BASELINE) -> $(VERSION)'; \
		$(ABI_CHECKER) -l libiouring-restrict -old $(ABI_BASELINE) -new $(ABI_O)/current.dump \
			-report-path $(ABI_O)/compat_report.html -log-path $(ABI_O)/abi-checker.log \
			> $(ABI_O)/abi-checker.out 2>&1; rc=$$?; \
		grep -E '^(Binary|Source|Total)' $(ABI_O)/abi-checker.out | sed 's/^/check-abi: /'; \
		if [ $$rc -ne 0 ]; then \
			echo "check-abi: INCOMPATIBLE with $(ABI_BASELINE); see $(ABI_O)/compat_report.html"; \
			exit 1; fi; \
	fi

abi-dump: $(ABI_O)/current.dump
	$(Q)cp $(ABI_O)/current.dump abi/libiouring-restrict-$(VERSION).dump
	@echo "abi-dump: wrote abi/libiouring-restrict-$(VERSION).dump (commit it)"
