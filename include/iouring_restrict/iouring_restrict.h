/* SPDX-License-Identifier: MIT */
/**
 * @file iouring_restrict.h
 * @brief Umbrella header of libiouring-restrict: include this one.
 *
 * libiouring-restrict restricts what io_uring may do, for a ring or for the
 * calling task and its children: allow-lists of request opcodes, register
 * opcodes and SQE flags (Linux 5.10+), and argument filters compiled to
 * classic BPF (Linux 7.0+).  It probes what the running kernel supports and
 * reports exactly what is enforced.
 *
 * Build with `pkg-config --cflags --libs iouring-restrict`.  The main page
 * of this reference is the README; the tutorial (doc/tutorial.md) is
 * under Related Pages.
 */
#ifndef IOURING_RESTRICT_H
#define IOURING_RESTRICT_H

#include "common.h"
#include "version.h"
#include "errors.h"
#include "names.h"
#include "ruleset.h"
#include "cbpf.h"
#include "filter.h"
#include "schema.h"
#include "rules.h"
#include "probe.h"
#include "ring.h"
#include "companion.h"
#include "broker.h"
#include "verify.h"
#include "policy.h"
#include "plan.h"
#include "report.h"
#include "policyfile.h"
#include "layout.h"

#endif /* IOURING_RESTRICT_H */
