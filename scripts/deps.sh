#!/bin/sh
# Install the Debian packages the build, tests, docs and benchmarks need,
# calling apt-get only for packages that are absent.  Safe to run repeatedly.
# Extra package names may be given as arguments (make check-oldkernel runs
# `scripts/deps.sh qemu-system-x86`).
set -eu

# build: make gcc g++ clang binutils pkgconf; libraries: libcriterion-dev
# liburing-dev libseccomp-dev; docs: doxygen; scripts: python3;
# ABI gate: abi-dumper abi-compliance-checker; hardening: libclang-rt-14-dev
# (libFuzzer and sanitizer runtimes), valgrind, gcovr, clang-tidy, cppcheck,
# clang-format.
PKGS="make gcc g++ clang binutils pkgconf libcriterion-dev liburing-dev libseccomp-dev \
doxygen python3 abi-dumper abi-compliance-checker libclang-rt-14-dev valgrind gcovr \
clang-tidy cppcheck clang-format"
[ $# -gt 0 ] && PKGS="$PKGS $*"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "deps: installing:$missing"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
