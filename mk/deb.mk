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
#   check-deb-ci  make check's step: check-deb-version, and check-deb only
#              with IOUR_CHECK_DEB=1 (it costs minutes: see DEB_CHECK_COST);
#              otherwise the summary lists it as skipped, saying why

DEB_SRC := $(O)/deb/src
DEB_ROOT_CACHE ?= /var/tmp/iour-deb-root
.PHONY: deb check-deb check-deb-version check-deb-ci
# Measured on a shared, loaded 2-core Debian 12 machine: the whole of
# check-deb 5.5 to 9 min (package build 1 to 3.5 min, lintian 35 to 97 s,
# the autopkgtests in the fresh root 112 to 207 s), and once 163 s more
# for debootstrap.
DEB_CHECK_COST := 5-9 min

check-deb-version:
	$(Q)$(NEED) python3:python3
	$(Q)debian/check-version
	$(Q)debian/gen-symbols --check debian/libiouring-restrict1.symbols

# What these targets need, installed by them alone (scripts/deps.sh --only):
# the Build-Depends of debian/control and the packaging tools, not every
# tool of make deps; check-deb adds lintian, autopkgtest and debootstrap.
DEB_DEPS := build-essential dpkg-dev debhelper dh-python doxygen libjansson-dev python3 \
	dpkg-buildpackage:dpkg-dev dh:debhelper dh_python3:dh-python doxygen:doxygen
DEB_CHECK_DEPS := lintian autopkgtest debootstrap lintian:lintian autopkgtest:autopkgtest \
	debootstrap:debootstrap

deb: check-deb-version
	$(Q)scripts/deps.sh --only $(DEB_DEPS)
	$(Q)dpkg-checkbuilddeps
	$(call msg,DEB,$(O)/deb)
	$(Q)rm -rf $(O)/deb $(O)/*iouring-restrict*.deb && mkdir -p $(DEB_SRC)
	$(Q)if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then \
		git ls-files -z -co --exclude-standard | tar --null -cf - -T - | tar -C $(DEB_SRC) -xf -; \
	else \
		tar --exclude=./$(O) -cf - . | tar -C $(DEB_SRC) -xf -; \
	fi
	$(Q)cd $(DEB_SRC) && dpkg-buildpackage -us -uc -b -jauto > ../build.log 2>&1 || \
		{ tail -n 40 ../build.log; echo "deb: dpkg-buildpackage failed; log: $(O)/deb/build.log"; exit 1; }
	$(Q)cp $(O)/deb/*.deb $(O)/
	@echo "deb: $$(cd $(O)/deb && ls *.deb | tr '\n' ' ')-> $(O)/ (log $(O)/deb/build.log)"

check-deb: deb
	$(Q)scripts/deps.sh --only $(DEB_CHECK_DEPS)
	$(Q)O='$(O)' DEB_ROOT_CACHE='$(DEB_ROOT_CACHE)' scripts/check-deb.sh

check-deb-ci: check-deb-version
	$(Q)if [ "$(IOUR_CHECK_DEB)" = 1 ]; then \
		$(SUBMAKE) check-deb; \
	else \
		echo "check-deb: SKIPPED: building the packages, lintian and the autopkgtests take $(DEB_CHECK_COST), over make check's budget; IOUR_CHECK_DEB=1 (or make check-deb) runs them"; \
		scripts/skip-note.sh "make check-deb (package build, lintian, autopkgtest in a fresh root: $(DEB_CHECK_COST)): run with IOUR_CHECK_DEB=1"; \
	fi
