# mk/rust.mk: the Rust bindings (bindings/rust/): `make check-rust` runs
# `cargo test --offline` (unit, integration and doc tests) and the
# examples as smoke tests, with Debian 12's cargo/rustc 1.63 (the minimum
# supported version) and, when one is installed, a newer toolchain (rustup's
# in PATH or ~/.cargo/bin).  Included by the top-level Makefile.
#
# 1.63 links the shared library of the build tree through
# IOURING_RESTRICT_LIB_DIR; the newer toolchain links the static library
# found with pkg-config, through a .pc file pointing at the build tree, so
# both ways of build.rs are exercised.  Target directories live under
# $(O)/rust; CARGO_HOME is private to the build, so nothing in ~/.cargo
# (registry, config) is used.

RUST_DIR := bindings/rust
RUST_OUT := $(abspath $(O))/rust
RUST_SRCS := $(shell find $(RUST_DIR) -name '*.rs' -o -name Cargo.toml -o -name Cargo.lock)
CARGO_163 ?= /usr/bin/cargo
# A newer cargo: the first one in PATH or ~/.cargo/bin that is not Debian's.
CARGO_NEW ?= $(firstword $(filter-out $(CARGO_163),$(shell command -v cargo 2>/dev/null) \
	$(wildcard $(HOME)/.cargo/bin/cargo)))
RUST_PC_DIR := $(RUST_OUT)/pkgconfig
CARGO_FLAGS := --offline --locked --manifest-path $(RUST_DIR)/Cargo.toml
RUST_EXAMPLES := restricted_ring socket_server tutorial
# The library's own dependencies (LIB_LIBS), for the static link: the .pc
# file does not list them (yet) in Libs.private.
RUST_STATIC_LIBS := IOURING_RESTRICT_STATIC_LIBS='$(patsubst -l%,%,$(LIB_LIBS))'

.PHONY: check-rust rust-163 rust-new

check-rust: rust-163 rust-new

# $(1): cargo; $(2): its bin dir; $(3): target subdir; $(4): extra environment
define rust_run
	$(Q)env CARGO_HOME=$(RUST_OUT)/cargo-home CARGO_TARGET_DIR=$(RUST_OUT)/$(3) \
		RUSTC=$(2)/rustc RUSTDOC=$(2)/rustdoc $(4) \
		$(1) test $(CARGO_FLAGS) -q
	$(Q)for ex in $(RUST_EXAMPLES); do \
		echo "  EXAMPLE  $$ex ($(3))"; \
		env CARGO_HOME=$(RUST_OUT)/cargo-home CARGO_TARGET_DIR=$(RUST_OUT)/$(3) \
			RUSTC=$(2)/rustc RUSTDOC=$(2)/rustdoc $(4) \
			$(1) run $(CARGO_FLAGS) -q --example $$ex > $(RUST_OUT)/$(3)-$$ex.log 2>&1 \
		|| { cat $(RUST_OUT)/$(3)-$$ex.log; echo "check-rust: example $$ex failed ($(3))"; exit 1; }; \
		tail -n 1 $(RUST_OUT)/$(3)-$$ex.log; \
	done
endef

rust-163: lib
	$(Q)$(NEED) $(CARGO_163):cargo /usr/bin/rustc:rustc
	$(call msg,CARGO,rustc 1.63 (Debian) with the shared library of $(O))
	$(call rust_run,$(CARGO_163),/usr/bin,1.63,IOURING_RESTRICT_LIB_DIR=$(abspath $(O)) \
		LD_LIBRARY_PATH=$(abspath $(O)))
	@# The rpath recipe of bindings/rust/README.md: the tutorial linked with
	@# -Wl,-rpath runs without LD_LIBRARY_PATH (only the example is relinked).
	$(call msg,RPATH,example tutorial (1.63) without LD_LIBRARY_PATH)
	$(Q)env CARGO_HOME=$(RUST_OUT)/cargo-home CARGO_TARGET_DIR=$(RUST_OUT)/1.63 \
		RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc IOURING_RESTRICT_LIB_DIR=$(abspath $(O)) \
		$(CARGO_163) rustc $(CARGO_FLAGS) -q -p iouring-restrict --example tutorial -- \
		-C link-arg=-Wl,-rpath,$(abspath $(O))
	$(Q)env -u LD_LIBRARY_PATH $(RUST_OUT)/1.63/debug/examples/tutorial > $(RUST_OUT)/1.63-rpath.log 2>&1 \
		|| { cat $(RUST_OUT)/1.63-rpath.log; echo "check-rust: the rpath-linked tutorial failed"; exit 1; }

rust-new: lib
ifeq ($(CARGO_NEW),)
	@echo '  CARGO    no newer Rust toolchain installed: only rustc 1.63 was run'
	@scripts/skip-note.sh 'Rust: no toolchain newer than Debian'"'"'s rustc 1.63 (cargo on PATH or in ~/.cargo/bin): only 1.63 was run'
else
	$(call msg,CARGO,$(shell $(dir $(CARGO_NEW))rustc --version) with the static library via pkg-config)
	@mkdir -p $(RUST_PC_DIR)
	$(Q)sed -e 's|@PREFIX@|$(abspath $(O))|g' -e 's|@LIBDIR@|$(abspath $(O))|g' \
		-e 's|@INCLUDEDIR@|$(abspath include)|g' -e 's|@VERSION@|$(VERSION)|g' \
		iouring-restrict.pc.in > $(RUST_PC_DIR)/iouring-restrict.pc
	$(call rust_run,$(CARGO_NEW),$(patsubst %/,%,$(dir $(CARGO_NEW))),new,\
		PKG_CONFIG_PATH=$(RUST_PC_DIR) IOURING_RESTRICT_STATIC=1 $(RUST_STATIC_LIBS))
endif
