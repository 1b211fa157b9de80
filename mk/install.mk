# mk/install.mk: install, uninstall and the install check.  Included by the top-level Makefile, whose
# variables (O, Q, NEED, SUBMAKE, LIB_SRCS, ...) it uses.

# ---- install check: DESTDIR staging with PREFIX=/usr, a consumer built
# with pkg-config (shared, and --static), then uninstall leaves nothing.
check-install: lib
	$(Q)$(NEED) pkg-config:pkgconf readelf:binutils man:man-db $(PY_NEED)
	$(Q)MAKE='$(MAKE)' CC='$(CC)' O='$(O)' VERSION='$(VERSION)' PYTHON='$(PYTHON)' \
		scripts/check-install.sh

install: lib tools man
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR)/iouring_restrict $(DESTDIR)$(PKGCONFIGDIR) \
		$(DESTDIR)$(BINDIR)
	install -m 644 include/iouring_restrict/*.h $(DESTDIR)$(INCLUDEDIR)/iouring_restrict/
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(SHARED_REAL) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHARED_REAL)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libiouring-restrict.so
	install -m 644 $(PC) $(DESTDIR)$(PKGCONFIGDIR)/
	install -m 755 $(TOOLS) $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7
	install -m 644 $(MAN1_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(MAN_OUT)/man3/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 644 $(MAN7_PAGES) $(DESTDIR)$(MANDIR)/man7/

uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libiouring-restrict.a $(DESTDIR)$(LIBDIR)/libiouring-restrict.so \
		$(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/$(notdir $(SHARED_REAL)) \
		$(DESTDIR)$(PKGCONFIGDIR)/iouring-restrict.pc
	rm -rf $(DESTDIR)$(INCLUDEDIR)/iouring_restrict
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(notdir $(TOOLS)))
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man1/,$(notdir $(MAN1_PAGES))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(MAN7_PAGES))) \
		$(addprefix $(DESTDIR)$(MANDIR)/man3/,$(addsuffix .3,$(MAN3_NAMES)))
