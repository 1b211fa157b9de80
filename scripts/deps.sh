#!/bin/sh
# Install the Debian packages that every make target in the README and
# .ci/run needs, and the tools those tools call, calling apt-get only for
# what is absent.  Safe to run repeatedly.
#
# Two lists, both checked:
# - PKGS: Debian packages, checked with dpkg-query;
# - CMDS: "command:package" pairs, checked with command -v.  This catches a
#   tool that a package only recommends (abi-compliance-checker calls ctags,
#   which its package merely recommends, and apt-get runs here with
#   --no-install-recommends) and a command removed by hand.
# After installing, every command of CMDS must be found; otherwise the script
# names the command and the package, and fails.
#
# Extra package names may be given as arguments (scripts/guest.sh runs
# `scripts/deps.sh qemu-system-x86`); "command:package" arguments add to CMDS;
# with --only first, only those are checked (mk/deb.mk).
set -eu

# build: make gcc g++ clang binutils pkgconf; libraries: libcriterion-dev
# liburing-dev libseccomp-dev; docs: doxygen; scripts: python3 (bench-merge,
# mkinitramfs), coreutils' timeout; ABI gate: abi-dumper (calls eu-readelf
# from elfutils and vtable-dumper), abi-compliance-checker (calls ctags from
# universal-ctags, only recommended by its package); hardening:
# libclang-rt-14-dev (libFuzzer and sanitizer runtimes), valgrind, gcovr and
# llvm-14 (llvm-cov-14 gcov reads the counts of clang's --coverage build),
# clang-tidy, cppcheck, clang-format; manual pages: man-db (man -l) and
# groff-base (groff, tbl); policy files: libjansson-dev (the parser) and
# python3-jsonschema (the schema check); Python bindings: python3-pytest,
# python3-setuptools, python3-wheel (bdist_wheel, which pip calls) and
# python3-venv (pip install offline into a venv); Rust bindings: cargo and
# rustc (1.63, checked by path: a rustup toolchain in PATH does not count);
# iour-restrict learn's tests: fio; run's broker tests: qemu-utils
# (qemu-io --aio io_uring); iour-restrict prove and make prove:
# python3-z3 (the SMT solver; the library does not use it); iour-restrict
# agent's tests: runc and crun (the OCI runtimes whose seccomp listener the
# agent serves).
PKGS="make gcc g++ clang binutils pkgconf libcriterion-dev liburing-dev libseccomp-dev \
doxygen python3 abi-dumper abi-compliance-checker universal-ctags elfutils vtable-dumper \
libclang-rt-14-dev valgrind gcovr llvm-14 clang-tidy cppcheck clang-format man-db groff-base \
libjansson-dev python3-jsonschema python3-pytest python3-setuptools python3-wheel python3-venv \
cargo rustc fio qemu-utils python3-z3 runc crun"
CMDS="make:make gcc:gcc g++:g++ clang:clang ar:binutils nm:binutils readelf:binutils \
pkg-config:pkgconf doxygen:doxygen python3:python3 timeout:coreutils \
abi-dumper:abi-dumper abi-compliance-checker:abi-compliance-checker \
ctags:universal-ctags eu-readelf:elfutils vtable-dumper:vtable-dumper \
valgrind:valgrind gcovr:gcovr llvm-cov-14:llvm-14 clang-tidy:clang-tidy cppcheck:cppcheck \
clang-format:clang-format man:man-db groff:groff-base /usr/bin/cargo:cargo /usr/bin/rustc:rustc fio:fio qemu-io:qemu-utils runc:runc crun:crun"
# --only: the packages and commands given, not the lists above (make deb
# needs its build dependencies alone, not every check's tools).
if [ "${1:-}" = --only ]; then
	shift
	PKGS="" CMDS=""
fi
for a in "$@"; do
	case $a in
	*:*) CMDS="$CMDS $a" ;;
	*) PKGS="$PKGS $a" ;;
	esac
done

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
for c in $CMDS; do
	command -v "${c%%:*}" >/dev/null 2>&1 && continue
	case " $missing " in *" ${c#*:} "*) ;; *) missing="$missing ${c#*:}" ;; esac
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# A package installed but whose command is gone is reinstalled.
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends --reinstall $missing >/dev/null

bad=0
for c in $CMDS; do
	if ! command -v "${c%%:*}" >/dev/null 2>&1; then
		echo "deps: command '${c%%:*}' still missing after installing Debian package '${c#*:}'" >&2
		bad=1
	fi
done
exit $bad
