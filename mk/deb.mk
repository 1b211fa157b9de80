# mk/deb.mk: the Debian packages (debian/) and their check.  Included by the
# top-level Makefile, whose variables (O, Q, NEED, ...) it uses.
#
#   deb        dpkg-buildpackage -us -uc -b in a copy of the sources
#              ($(O)/deb/src: committed and untracked files, not build/),
#              so neither the tree nor its parent directory gets a file;
#              the .debs are copied to $(O)/, the .changes stays in $(O)/deb/
#   check-deb  deb, lintian (no error or warning on any package), then the
#              autopkgtests (debian/tests) against the packages installed
#              into a fresh Debian 12 root (debootstrap minbase, cached in
#              DEB_ROOT_CACHE; needs root): scripts/check-deb.sh
#   check-deb-version  debian/changelog, CHANGELOG and version.h agree, and
#              the symbols file is the version map's (debian/check-version,
#              debian/gen-symbols; also run at the start of every package build)

DEB_SRC := $(O)/deb/src
DEB_VERSION = $(shell dpkg-parsechangelog -l debian/changelog -SVersion)
DEB_ROOT_CACHE ?= /var/tmp/iour-deb-root
.PHONY: deb check-deb check-deb-version

check-deb-version:
	$(Q)$(NEED) dpkg-parsechangelog:dpkg-dev python3:python3
	$(Q)debian/check-version
	$(Q)debian/gen-symbols --check debian/libiouring-restrict1.symbols

deb: check-deb-version
	$(Q)$(NEED) dpkg-buildpackage:dpkg-dev dh:debhelper dh_python3:dh-python doxygen:doxygen \
		/usr/include/jansson.h:libjansson-dev
	$(call msg,DEB,$(O)/deb)
	$(Q)rm -rf $(O)/deb && mkdir -p $(DEB_SRC)
	$(Q)if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then \
		git ls-files -z -co --exclude-standard | tar --null -cf - -T - | tar -C $(DEB_SRC) -xf -; \
	else \
		tar --exclude=./$(O) -cf - . | tar -C $(DEB_SRC) -xf -; \
	fi
	$(Q)cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b -j2 > ../build.log 2>&1 || \
		{ tail -n 40 ../build.log; echo "deb: dpkg-buildpackage failed; log: $(O)/deb/build.log"; exit 1; }
	$(Q)cp $(O)/deb/*.deb $(O)/
	@echo "deb: $$(cd $(O)/deb && ls *.deb | tr '\n' ' ')-> $(O)/ (log $(O)/deb/build.log)"

check-deb: deb
	$(Q)O='$(O)' DEB_ROOT_CACHE='$(DEB_ROOT_CACHE)' scripts/check-deb.sh
