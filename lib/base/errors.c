/* SPDX-License-Identifier: MIT */
/* Error names and messages, and the boundary filter for error codes. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "iouring_restrict/iouring_restrict.h"
#include "internal.h"

struct err_desc {
	int code;
	const char *name;
	const char *msg;
};

/* System errno values the library documents anywhere, with messages written
 * for this library's context. */
static const struct err_desc sys_errs[] = {
	{ EPERM, "-EPERM", "Operation not permitted (already restricted, or io_uring disabled)" },
	{ ENOENT, "-ENOENT", "No such entry" },
	{ EINTR, "-EINTR", "Interrupted" },
	{ EBADF, "-EBADF", "Bad file descriptor" },
	{ ECHILD, "-ECHILD", "A helper child process failed" },
	{ EAGAIN, "-EAGAIN", "Resource temporarily unavailable" },
	{ ENOMEM, "-ENOMEM", "Out of memory" },
	{ EACCES, "-EACCES", "Permission denied (request forbidden, or no_new_privs missing)" },
	{ EFAULT, "-EFAULT", "Bad address" },
	{ EBUSY, "-EBUSY", "Restrictions already registered" },
	{ EEXIST, "-EEXIST", "Already exists" },
	{ ENODEV, "-ENODEV", "No such device" },
	{ EINVAL, "-EINVAL", "Invalid argument" },
	{ ENFILE, "-ENFILE", "Too many open files in system" },
	{ EMFILE, "-EMFILE", "Too many open files" },
	{ ENOMSG, "-ENOMSG", "Restriction set incomplete: SQE flags not decided" },
	{ ENOSPC, "-ENOSPC", "No space left (limit reached)" },
	{ EDOM, "-EDOM", "Field not defined for this opcode" },
	{ ERANGE, "-ERANGE", "Value out of range, or buffer too small" },
	{ E2BIG, "-E2BIG", "Options struct has unknown non-zero fields" },
	{ ENOSYS, "-ENOSYS", "io_uring is not available (function not implemented)" },
	{ EOVERFLOW, "-EOVERFLOW", "Value too large" },
	{ EBADFD, "-EBADFD",
	  "Ring is not in the required state (not R_DISABLED, or already enabled)" },
	{ EMSGSIZE, "-EMSGSIZE", "Filter payload size does not match the kernel's" },
	{ EBADMSG, "-EBADMSG", "Rule text does not parse (struct iour_rule_error says where)" },
	{ EOPNOTSUPP, "-EOPNOTSUPP", "Operation not supported" },
	{ ENOTSUP == EOPNOTSUPP ? 0 : ENOTSUP, "-ENOTSUP", "Operation not supported" },
	{ ESRCH, "-ESRCH", "No such process" },
	{ ETIMEDOUT, "-ETIMEDOUT", "Timed out" },
	{ ENOTTY, "-ENOTTY", "Not a ring" },
	{ ENXIO, "-ENXIO", "No such device or address" },
	{ ECONNREFUSED, "-ECONNREFUSED", "Connection refused" },
	{ ECANCELED, "-ECANCELED",
	  "Operation canceled (for example, another member of its link failed)" },
};

static const struct err_desc lib_errs[] = {
	{ IOUR_ERRNO__INTERNAL, "-IOUR_ERRNO__INTERNAL",
	  "Internal error in libiouring-restrict (please report)" },
	{ IOUR_ERRNO__PROG_TOO_LARGE, "-IOUR_ERRNO__PROG_TOO_LARGE",
	  "Compiled filter would exceed 4096 instructions" },
	{ IOUR_ERRNO__INVALID_PROG, "-IOUR_ERRNO__INVALID_PROG",
	  "cBPF program rejected by the validator (kernel checker rules)" },
	{ IOUR_ERRNO__UNSUPPORTED, "-IOUR_ERRNO__UNSUPPORTED",
	  "The running kernel lacks a required feature" },
	{ IOUR_ERRNO__PARTIAL, "-IOUR_ERRNO__PARTIAL",
	  "Policy only partly applied; see the report" },
	{ IOUR_ERRNO__KERNEL_MISMATCH, "-IOUR_ERRNO__KERNEL_MISMATCH",
	  "Kernel answer contradicts the documented io_uring interface" },
	{ IOUR_ERRNO__NOT_ENFORCED, "-IOUR_ERRNO__NOT_ENFORCED",
	  "Enforcement check failed: a forbidden request was not denied" },
};

/* |err| without overflow: -INT_MIN is not an int. */
static unsigned int magnitude(int err)
{
	return err < 0 ? 0U - (unsigned int)err : (unsigned int)err;
}

static const struct err_desc *lookup(int err)
{
	unsigned int mag = magnitude(err);
	size_t i;

	if (mag == 0)
		return NULL;
	for (i = 0; i < IOUR_ARRAY_SIZE(lib_errs); i++)
		if (lib_errs[i].code > 0 && (unsigned int)lib_errs[i].code == mag)
			return &lib_errs[i];
	for (i = 0; i < IOUR_ARRAY_SIZE(sys_errs); i++)
		if (sys_errs[i].code > 0 && (unsigned int)sys_errs[i].code == mag)
			return &sys_errs[i];
	return NULL;
}

/* Documented in include/iouring_restrict/errors.h */
const char *iour_errname(int err)
{
	const struct err_desc *d = lookup(err);

	if (err == 0)
		return "0";
	return d ? d->name : "UNKNOWN";
}

/* Documented in include/iouring_restrict/errors.h */
int iour_strerror(int err, char *buf, size_t len)
{
	const struct err_desc *d = lookup(err);
	char tmp[96];
	const char *msg;
	int rc = 0, n;

	if (!buf && len)
		return -EINVAL;
	if (err == 0) {
		msg = "Success";
	} else if (d) {
		msg = d->msg;
	} else {
		snprintf(tmp, sizeof(tmp), "Unknown error %u", magnitude(err));
		msg = tmp;
		rc = -ENOENT;
	}
	if (!len)
		return -ERANGE;
	n = snprintf(buf, len, "%s", msg);
	if (n < 0 || (size_t)n >= len)
		return -ERANGE;
	return rc;
}

const char *iour_strerror_desc(int err)
{
	const struct err_desc *d = lookup(err);

	if (err == 0)
		return "Success";
	return d ? d->msg : "Unknown error";
}

/* The calling thread's error detail (internal.h).  A fixed buffer: no
 * allocation, and nothing to free when the thread ends. */
static __thread struct {
	const char *function; /* NULL: no detail */
	unsigned int err;     /* magnitude of the code it goes with */
	char msg[256];
} detail;

void iour__detail_reset(const char *function)
{
	if (detail.function && !strcmp(detail.function, function))
		detail.function = NULL;
}

void iour__detail_set(const char *function, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail.msg, sizeof(detail.msg), fmt, ap);
	va_end(ap);
	detail.err = magnitude(err);
	detail.function = function;
}

/* Documented in include/iouring_restrict/errors.h */
const char *iour_errdetail(const char *function, int err)
{
	if (!detail.function || detail.err != magnitude(err) || err == 0)
		return NULL;
	if (function && strcmp(function, detail.function) != 0)
		return NULL;
	return detail.msg;
}

/* The sets, each 0-terminated, from the one table. */
#define IOUR_ERRSET(id, function, ...) static const int errset_##id[] = { __VA_ARGS__, 0 };
#include "errsets.def"

static const struct {
	const int *errs;
	const char *function;
} errsets[IOUR__ERRSET_COUNT] = {
#define IOUR_ERRSET(id, function, ...) [IOUR__ERRSET_##id] = { errset_##id, function },
#include "errsets.def"
};

const int *iour__errset(enum iour__errset id)
{
	return (unsigned int)id < IOUR__ERRSET_COUNT ? errsets[id].errs : NULL;
}

const char *iour__errset_function(enum iour__errset id)
{
	return (unsigned int)id < IOUR__ERRSET_COUNT ? errsets[id].function : NULL;
}

int iour__err_public(int rc, enum iour__errset set)
{
	const int *p;

	if (rc >= 0)
		return rc;
	for (p = iour__errset(set); p && *p; p++)
		if (-rc == *p)
			return rc;
	return -IOUR_ERRNO__INTERNAL;
}

int iour__opts_check(const void *opts, size_t user_sz, size_t known_sz)
{
	const unsigned char *p = opts;
	size_t i;

	if (user_sz < sizeof(size_t))
		return -EINVAL;
	/* A bogus huge sz must not walk off the caller's memory. */
	if (user_sz > IOUR_OPTS_MAX_SZ)
		return -E2BIG;
	for (i = known_sz; i < user_sz; i++)
		if (p[i])
			return -E2BIG;
	return 0;
}

/* Every options struct read through IOUR_OPTS_VALID names its true last
 * field (common.h). */
#define LAST_OK(T) _Static_assert(IOUR_OPTS_LAST_OK(T), #T "__last_field is not its last field")
LAST_OK(iour_apply_opts);
LAST_OK(iour_broker_opts);
LAST_OK(iour_companion_opts);
LAST_OK(iour_compile_opts);
LAST_OK(iour_export_opts);
LAST_OK(iour_filter_opts);
LAST_OK(iour_plan_opts);
LAST_OK(iour_policy_load_opts);
LAST_OK(iour_policy_opts);
LAST_OK(iour_probe_opts);
LAST_OK(iour_ring_apply_opts);
LAST_OK(iour_ring_create_opts);
LAST_OK(iour_ruleset_opts);
LAST_OK(iour_verify_opts);
LAST_OK(iour_verify_req);
