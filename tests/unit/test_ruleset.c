/* SPDX-License-Identifier: MIT */
/* Restriction sets: builder errors, export sizing and exact entries for
 * coupled (pre-7.0) and split (7.0+) gates, sentinel, clamping, the
 * undecided-flags error, and registration on the real kernel. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "policy/ruleset_internal.h"
#include "base/uapi.h"
#include "uring_avail.h"

#define R_REG IOUR_RESTRICTION_REGISTER_OP
#define R_SQE IOUR_RESTRICTION_SQE_OP
#define R_FA IOUR_RESTRICTION_SQE_FLAGS_ALLOWED
#define R_FR IOUR_RESTRICTION_SQE_FLAGS_REQUIRED

struct ent {
	uint16_t kind;
	uint8_t arg;
};

static struct iour_ruleset *mk(void)
{
	struct iour_ruleset *rs = NULL;

	cr_assert_eq(iour_ruleset__new(NULL, &rs), 0);
	cr_assert_not_null(rs);
	return rs;
}

/* Export with the given options into a fresh buffer; returns the count
 * (or the error) and the buffer through *out (free it). */
static int export(const struct iour_ruleset *rs, const struct iour_export_opts *o,
		  uint8_t **out)
{
	size_t len = 0, len2;
	uint8_t *buf;
	int n;

	*out = NULL;
	n = iour_ruleset__export(rs, o, NULL, &len);
	if (n < 0)
		return n;
	cr_assert_eq(len, (size_t)n * 16);
	buf = malloc(len + 16);
	cr_assert_not_null(buf);
	memset(buf, 0xa5, len + 16);
	len2 = len + 16;
	cr_assert_eq(iour_ruleset__export(rs, o, buf, &len2), n);
	cr_assert_eq(len2, len);
	for (size_t i = len; i < len + 16; i++)
		cr_assert_eq(buf[i], 0xa5, "write past the entries");
	*out = buf;
	return n;
}

/* Build the expected bytes by hand: native u16 kind, u8 arg, 13 zero
 * bytes. */
static void expect_bytes(const uint8_t *got, int n, const struct ent *want, int nwant,
			 const char *what)
{
	uint8_t b[16];

	cr_assert_eq(n, nwant, "%s: %d entries, want %d", what, n, nwant);
	for (int i = 0; i < n; i++) {
		memset(b, 0, sizeof(b));
		memcpy(b, &want[i].kind, 2);
		b[2] = want[i].arg;
		cr_assert(memcmp(got + 16 * i, b, 16) == 0,
			  "%s: entry %d is {%u,%u}, want {%u,%u}", what, i,
			  got[16 * i] | got[16 * i + 1] << 8, got[16 * i + 2], want[i].kind,
			  want[i].arg);
	}
}

/* Append entries of one kind for 0..last-1. */
static int all(struct ent *e, int n, uint16_t kind, int last)
{
	for (int i = 0; i < last; i++)
		e[n++] = (struct ent){ kind, (uint8_t)i };
	return n;
}

#define OPTS_618 IOUR_OPTS(iour_export_opts, o, .op_last = 63, .reg_last = 36, \
			   .flags = IOUR_EXPORT_COUPLED)

/* ---- builder contract ---- */

Test(ruleset, new_errors)
{
	struct iour_ruleset *rs = (struct iour_ruleset *)0x1;
	struct {
		struct iour_ruleset_opts o;
		uint64_t extra;
	} big;

	cr_assert_eq(iour_ruleset__new(NULL, NULL), -EINVAL);
	IOUR_OPTS(iour_ruleset_opts, o);
	o.sz = 0;
	cr_assert_eq(iour_ruleset__new(&o, &rs), -EINVAL);
	o.sz = 4;
	cr_assert_eq(iour_ruleset__new(&o, &rs), -EINVAL);
	o.sz = sizeof(o);
	o.flags = 1;
	cr_assert_eq(iour_ruleset__new(&o, &rs), -EINVAL);
	cr_assert_eq(rs, (struct iour_ruleset *)0x1, "out untouched on failure");
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.extra = 1;
	cr_assert_eq(iour_ruleset__new(&big.o, &rs), -E2BIG);
	big.extra = 0;
	cr_assert_eq(iour_ruleset__new(&big.o, &rs), 0);
	iour_ruleset__free(rs);
	/* sz covering only sz: flags absent, defaults */
	o.sz = sizeof(size_t);
	cr_assert_eq(iour_ruleset__new(&o, &rs), 0);
	iour_ruleset__free(rs);
	o.sz = sizeof(o);
	o.flags = 0;
	cr_assert_eq(iour_ruleset__new(&o, &rs), 0);
	cr_assert_eq(iour_ruleset__sqe_restricted(rs), 0);
	cr_assert_eq(iour_ruleset__register_restricted(rs), 0);
	cr_assert_eq(iour_ruleset__sqe_flags(rs, NULL, NULL), 0);
	iour_ruleset__free(rs);
	iour_ruleset__free(NULL);
}

Test(ruleset, builder_errors_leave_set_unchanged)
{
	struct iour_ruleset *rs = mk(), *copy;
	uint32_t a, r;

	cr_assert_eq(iour_ruleset__allow_sqe_op(NULL, 0), -EINVAL);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP__COUNT), -ERANGE);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 255), -ERANGE);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, 256), -ERANGE);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, UINT32_MAX), -ERANGE);
	cr_assert_eq(iour_ruleset__allow_sqe_op_name(NULL, "NOP"), -EINVAL);
	cr_assert_eq(iour_ruleset__allow_sqe_op_name(rs, NULL), -EINVAL);
	cr_assert_eq(iour_ruleset__allow_sqe_op_name(rs, "NOPE"), -ENOENT);
	cr_assert_eq(iour_ruleset__allow_sqe_op_name(rs, "REGISTER_PROBE"), -ENOENT);
	cr_assert_eq(iour_ruleset__allow_register_op(NULL, 0), -EINVAL);
	cr_assert_eq(iour_ruleset__allow_register_op(rs, IOUR_REGISTER__COUNT), -ERANGE);
	cr_assert_eq(iour_ruleset__allow_register_op(rs, 200), -ERANGE);
	cr_assert_eq(iour_ruleset__allow_register_op_name(NULL, "PROBE"), -EINVAL);
	cr_assert_eq(iour_ruleset__allow_register_op_name(rs, NULL), -EINVAL);
	cr_assert_eq(iour_ruleset__allow_register_op_name(rs, "READV"), -ENOENT);
	cr_assert_eq(iour_ruleset__deny_all_sqe_ops(NULL), -EINVAL);
	cr_assert_eq(iour_ruleset__deny_all_register_ops(NULL), -EINVAL);
	cr_assert_eq(iour_ruleset__set_sqe_flags(NULL, 0, 0), -EINVAL);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0x80, 0), -EINVAL);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0x80), -EINVAL);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0x100, 0), -EINVAL);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 1U << 31, 0), -EINVAL);
	cr_assert_eq(iour_ruleset__sqe_op_allowed(NULL, 0), -EINVAL);
	cr_assert_eq(iour_ruleset__sqe_op_allowed(rs, IOUR_OP__COUNT), -ERANGE);
	cr_assert_eq(iour_ruleset__register_op_allowed(NULL, 0), -EINVAL);
	cr_assert_eq(iour_ruleset__register_op_allowed(rs, IOUR_REGISTER__COUNT), -ERANGE);
	cr_assert_eq(iour_ruleset__sqe_restricted(NULL), -EINVAL);
	cr_assert_eq(iour_ruleset__register_restricted(NULL), -EINVAL);
	cr_assert_eq(iour_ruleset__sqe_flags(NULL, &a, &r), -EINVAL);
	cr_assert_eq(iour_ruleset__dup(NULL, &copy), -EINVAL);
	cr_assert_eq(iour_ruleset__dup(rs, NULL), -EINVAL);

	/* nothing above changed the set */
	cr_assert_eq(iour_ruleset__sqe_restricted(rs), 0);
	cr_assert_eq(iour_ruleset__register_restricted(rs), 0);
	cr_assert_eq(iour_ruleset__sqe_flags(rs, &a, &r), 0);
	cr_assert_eq(a, 0x7f);
	cr_assert_eq(r, 0);
	iour_ruleset__free(rs);
}

Test(ruleset, building_and_queries)
{
	struct iour_ruleset *rs = mk(), *copy = NULL;
	uint32_t a, r;

	cr_assert_eq(iour_ruleset__sqe_op_allowed(rs, IOUR_OP_WRITE), 1, "unrestricted side");
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP), 0, "idempotent");
	cr_assert_eq(iour_ruleset__allow_sqe_op_name(rs, "iorIng_op_read"), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_URING_CMD128), 0);
	cr_assert_eq(iour_ruleset__sqe_restricted(rs), 1);
	cr_assert_eq(iour_ruleset__sqe_op_allowed(rs, IOUR_OP_NOP), 1);
	cr_assert_eq(iour_ruleset__sqe_op_allowed(rs, IOUR_OP_READ), 1);
	cr_assert_eq(iour_ruleset__sqe_op_allowed(rs, IOUR_OP_WRITE), 0);
	cr_assert_eq(iour_ruleset__register_restricted(rs), 0);
	cr_assert_eq(iour_ruleset__allow_register_op_name(rs, "probe"), 0);
	cr_assert_eq(iour_ruleset__allow_register_op_name(rs, "IORING_UNREGISTER_FILES"), 0);
	cr_assert_eq(iour_ruleset__register_op_allowed(rs, IOUR_REGISTER_PROBE), 1);
	cr_assert_eq(iour_ruleset__register_op_allowed(rs, IOUR_UNREGISTER_FILES), 1);
	cr_assert_eq(iour_ruleset__register_op_allowed(rs, IOUR_REGISTER_FILES), 0);

	/* required implies allowed */
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, IOUR_SQE_IO_LINK, IOUR_SQE_ASYNC), 0);
	cr_assert_eq(iour_ruleset__sqe_flags(rs, &a, &r), 1);
	cr_assert_eq(a, IOUR_SQE_IO_LINK | IOUR_SQE_ASYNC);
	cr_assert_eq(r, IOUR_SQE_ASYNC);

	/* dup is deep and independent */
	cr_assert_eq(iour_ruleset__dup(rs, &copy), 0);
	cr_assert_eq(iour_ruleset__deny_all_sqe_ops(rs), 0);
	cr_assert_eq(iour_ruleset__deny_all_register_ops(rs), 0);
	cr_assert_eq(iour_ruleset__sqe_op_allowed(rs, IOUR_OP_NOP), 0);
	cr_assert_eq(iour_ruleset__register_op_allowed(rs, IOUR_REGISTER_PROBE), 0);
	cr_assert_eq(iour_ruleset__sqe_restricted(rs), 1);
	cr_assert_eq(iour_ruleset__register_restricted(rs), 1);
	cr_assert_eq(iour_ruleset__sqe_op_allowed(copy, IOUR_OP_NOP), 1);
	cr_assert_eq(iour_ruleset__register_op_allowed(copy, IOUR_REGISTER_PROBE), 1);
	cr_assert_eq(iour_ruleset__sqe_flags(copy, &a, &r), 1);
	cr_assert_eq(r, IOUR_SQE_ASYNC);
	iour_ruleset__free(copy);
	iour_ruleset__free(rs);
}

/* ---- export contract ---- */

Test(ruleset, export_sizing_and_errors)
{
	struct iour_ruleset *rs = mk();
	uint8_t buf[4 * 16];
	size_t len;
	struct {
		struct iour_export_opts o;
		uint32_t extra[2];
	} big;
	struct iour_clamp_report rep;

	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP), 0);
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(iour_ruleset__allow_register_op(rs, IOUR_REGISTER_PROBE), 0);

	len = 12345;
	cr_assert_eq(iour_ruleset__export(rs, NULL, NULL, &len), 3);
	cr_assert_eq(len, 48);
	len = 47;
	memset(buf, 0x5a, sizeof(buf));
	cr_assert_eq(iour_ruleset__export(rs, NULL, buf, &len), -ERANGE);
	cr_assert_eq(len, 48, "-ERANGE reports the size");
	cr_assert_eq(buf[0], 0x5a, "nothing written on -ERANGE");
	len = 0;
	cr_assert_eq(iour_ruleset__export(rs, NULL, buf, &len), -ERANGE);
	len = sizeof(buf);
	cr_assert_eq(iour_ruleset__export(rs, NULL, buf, &len), 3);
	cr_assert_eq(len, 48);

	cr_assert_eq(iour_ruleset__export(NULL, NULL, NULL, &len), -EINVAL);
	cr_assert_eq(iour_ruleset__export(rs, NULL, buf, NULL), -EINVAL);

	IOUR_OPTS(iour_export_opts, o);
	o.sz = 3;
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -EINVAL);
	o.sz = sizeof(o);
	o.flags = 4;
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -EINVAL, "unknown flag");
	o.flags = IOUR_EXPORT_COUPLED | IOUR_EXPORT_SPLIT;
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -EINVAL, "both semantics");
	o.flags = 0;
	o.op_last = 257;
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -EINVAL, "op_last > 256");
	o.op_last = 256;
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), 3);
	o.op_last = 0;
	o.reg_last = 12;
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -EINVAL, "no ENABLE_RINGS");
	o.reg_last = 257;
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -EINVAL);
	o.reg_last = 0;
	o.kver = IOUR_KVER(5, 9);
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -EINVAL, "kernel < 5.10");
	o.kver = IOUR_KVER(5, 0);
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -EINVAL, "kernel < 5.1");
	o.kver = IOUR_KVER(5, 10);
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), 3, "5.10 is the oldest target");
	o.kver = 0;

	/* clamp report too small */
	memset(&rep, 0, sizeof(rep));
	rep.sz = offsetof(struct iour_clamp_report, n_register_ops);
	o.clamp = &rep;
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -EINVAL);
	o.clamp = NULL;

	/* larger opts from a newer caller */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	cr_assert_eq(iour_ruleset__export(rs, &big.o, NULL, &len), 3);
	big.extra[1] = 7;
	cr_assert_eq(iour_ruleset__export(rs, &big.o, NULL, &len), -E2BIG);
	/* sz that does not reach `clamp`: the field is not read */
	memset(&big, 0, sizeof(big));
	big.o.sz = offsetof(struct iour_export_opts, clamp);
	big.o.clamp = (struct iour_clamp_report *)0x1;
	cr_assert_eq(iour_ruleset__export(rs, &big.o, NULL, &len), 3);
	iour_ruleset__free(rs);
}

Test(ruleset, undecided_flags_is_an_error)
{
	struct iour_ruleset *rs = mk();
	uint8_t *b;
	size_t len = 0;

	cr_assert_eq(iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP), 0);
	cr_assert_eq(iour_ruleset__export(rs, NULL, NULL, &len), -ENOMSG);
	cr_assert_str_eq(iour_errname(-ENOMSG), "-ENOMSG");
	OPTS_618;
	cr_assert_eq(iour_ruleset__export(rs, &o, NULL, &len), -ENOMSG);
	/* an empty SQE allow-list needs no flag decision */
	cr_assert_eq(iour_ruleset__deny_all_sqe_ops(rs), 0);
	cr_assert_gt(iour_ruleset__export(rs, NULL, NULL, &len), 0);
	cr_assert_eq(iour_ruleset__allow_sqe_op_name(rs, "READ"), 0);
	cr_assert_eq(iour_ruleset__export(rs, NULL, NULL, &len), -ENOMSG);
	/* (0, 0) is an explicit choice */
	cr_assert_eq(iour_ruleset__set_sqe_flags(rs, 0, 0), 0);
	cr_assert_eq(export(rs, NULL, &b), 2);
	expect_bytes(b, 2, (struct ent[]){ { R_SQE, 22 }, { R_FA, 0 } }, 2, "flags 0,0");
	free(b);
	/* a register-only set needs no decision either */
	iour_ruleset__free(rs);
	rs = mk();
	cr_assert_eq(iour_ruleset__allow_register_op(rs, IOUR_REGISTER_PROBE), 0);
	cr_assert_gt(iour_ruleset__export(rs, &o, NULL, &len), 0);
	iour_ruleset__free(rs);
}

/* ---- exact entries ---- */

Test(ruleset, entries_coupled_exact)
{
	struct ent want[IOUR__MAX_ENTRIES];
	struct iour_ruleset *rs;
	uint8_t *b;
	int n, w;
	OPTS_618;

	/* both sides restricted */
	rs = mk();
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_READ);
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP);
	iour_ruleset__set_sqe_flags(rs, IOUR_SQE_IO_LINK, 0);
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_PROBE);
	n = export(rs, &o, &b);
	expect_bytes(b, n,
		     (struct ent[]){ { R_SQE, 0 }, { R_SQE, 22 }, { R_FA, 4 }, { R_REG, 8 } }, 4,
		     "coupled both");
	free(b);

	/* SQE only: the register side is listed in full (else all denied) */
	iour_ruleset__free(rs);
	rs = mk();
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP);
	iour_ruleset__set_sqe_flags(rs, 0x7f, IOUR_SQE_ASYNC);
	n = export(rs, &o, &b);
	w = 0;
	want[w++] = (struct ent){ R_SQE, 0 };
	want[w++] = (struct ent){ R_FA, 0x7f };
	want[w++] = (struct ent){ R_FR, 0x10 };
	w = all(want, w, R_REG, 36);
	expect_bytes(b, n, want, w, "coupled sqe only");
	free(b);

	/* register only: the SQE side in full, with every flag allowed */
	iour_ruleset__free(rs);
	rs = mk();
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_ENABLE_RINGS);
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_BUFFERS);
	n = export(rs, &o, &b);
	w = all(want, 0, R_SQE, 63);
	want[w++] = (struct ent){ R_FA, 0x7f };
	want[w++] = (struct ent){ R_REG, 0 };
	want[w++] = (struct ent){ R_REG, 12 };
	expect_bytes(b, n, want, w, "coupled register only");
	free(b);

	/* nothing restricted: everything listed, never zero entries */
	iour_ruleset__free(rs);
	rs = mk();
	n = export(rs, &o, &b);
	w = all(want, 0, R_SQE, 63);
	want[w++] = (struct ent){ R_FA, 0x7f };
	w = all(want, w, R_REG, 36);
	expect_bytes(b, n, want, w, "coupled nothing restricted");
	cr_assert_leq(n, 4 + 36 + 63, "within IORING_MAX_RESTRICTIONS of 6.18");
	free(b);

	/* deny everything: one entry (flags 0) gates both sides */
	iour_ruleset__deny_all_sqe_ops(rs);
	iour_ruleset__deny_all_register_ops(rs);
	n = export(rs, &o, &b);
	expect_bytes(b, n, (struct ent[]){ { R_FA, 0 } }, 1, "coupled deny all");
	free(b);
	iour_ruleset__free(rs);
}

Test(ruleset, entries_split_exact)
{
	struct ent want[IOUR__MAX_ENTRIES];
	struct iour_ruleset *rs;
	uint8_t *b;
	int n, w;

	/* default opts = newest kernel: 65 / 38, split */
	rs = mk();
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP);
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_URING_CMD128);
	iour_ruleset__set_sqe_flags(rs, IOUR_SQE_IO_LINK, 0);
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_BPF_FILTER);
	n = export(rs, NULL, &b);
	expect_bytes(b, n,
		     (struct ent[]){ { R_SQE, 0 }, { R_SQE, 64 }, { R_FA, 4 }, { R_REG, 37 } }, 4,
		     "split both");
	free(b);

	/* SQE only: no register entry (7.0 leaves the register side open) */
	iour_ruleset__free(rs);
	rs = mk();
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP);
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	n = export(rs, NULL, &b);
	expect_bytes(b, n, (struct ent[]){ { R_SQE, 0 }, { R_FA, 0 } }, 2, "split sqe only");
	free(b);

	/* SQE restricted + register denied: the sentinel */
	iour_ruleset__deny_all_register_ops(rs);
	n = export(rs, NULL, &b);
	expect_bytes(b, n, (struct ent[]){ { R_SQE, 0 }, { R_FA, 0 }, { R_REG, 12 } }, 3,
		     "split sentinel");
	free(b);

	/* register only */
	iour_ruleset__free(rs);
	rs = mk();
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_PROBE);
	n = export(rs, NULL, &b);
	expect_bytes(b, n, (struct ent[]){ { R_REG, 8 } }, 1, "split register only");
	free(b);

	/* flags restricted, opcodes not: every opcode listed with the flags */
	iour_ruleset__free(rs);
	rs = mk();
	iour_ruleset__set_sqe_flags(rs, IOUR_SQE__VALID & ~IOUR_SQE_ASYNC, 0);
	n = export(rs, NULL, &b);
	w = all(want, 0, R_SQE, 65);
	want[w++] = (struct ent){ R_FA, 0x6f };
	expect_bytes(b, n, want, w, "split flags only");
	free(b);
	/* flags decided but permissive: nothing restricted */
	iour_ruleset__set_sqe_flags(rs, IOUR_SQE__VALID, 0);
	n = export(rs, NULL, &b);
	w = all(want, 0, R_REG, 38);
	expect_bytes(b, n, want, w, "split flags permissive");
	free(b);

	/* nothing restricted: full register list, never zero entries */
	iour_ruleset__free(rs);
	rs = mk();
	n = export(rs, NULL, &b);
	expect_bytes(b, n, want, w, "split nothing restricted");
	free(b);

	/* deny all: flags entry gates SQE, sentinel gates register */
	iour_ruleset__deny_all_sqe_ops(rs);
	iour_ruleset__deny_all_register_ops(rs);
	n = export(rs, NULL, &b);
	expect_bytes(b, n, (struct ent[]){ { R_FA, 0 }, { R_REG, 12 } }, 2, "split deny all");
	free(b);

	/* kver selects split from 7.0 and coupled before */
	IOUR_OPTS(iour_export_opts, o, .kver = IOUR_KVER(7, 0));
	n = export(rs, &o, &b);
	cr_assert_eq(n, 2);
	free(b);
	o.kver = IOUR_KVER(6, 19);
	n = export(rs, &o, &b);
	expect_bytes(b, n, (struct ent[]){ { R_FA, 0 } }, 1, "6.19 coupled deny all");
	free(b);
	o.flags = IOUR_EXPORT_SPLIT;
	n = export(rs, &o, &b);
	cr_assert_eq(n, 2, "flags override kver");
	free(b);
	iour_ruleset__free(rs);
}

Test(ruleset, clamping_reported)
{
	struct iour_ruleset *rs = mk();
	struct iour_clamp_report rep;
	struct {
		struct iour_clamp_report r;
		uint64_t more[2];
	} bigrep;
	uint8_t *b;
	int n;

	iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP);
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP128);
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_URING_CMD128);
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_PROBE);
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_ZCRX_CTRL);
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_BPF_FILTER);

	memset(&rep, 0xff, sizeof(rep));
	rep.sz = sizeof(rep);
	IOUR_OPTS(iour_export_opts, o, .kver = IOUR_KVER(6, 18), .clamp = &rep);
	n = export(rs, &o, &b);
	expect_bytes(b, n, (struct ent[]){ { R_SQE, 0 }, { R_FA, 0 }, { R_REG, 8 } }, 3,
		     "6.18 clamped");
	free(b);
	cr_assert_eq(rep.n_sqe_ops, 2);
	cr_assert_eq(rep.n_register_ops, 2);
	cr_assert_eq(rep.sqe_ops[0], 1ULL << 63);
	cr_assert_eq(rep.sqe_ops[1], 1ULL << 0);
	cr_assert_eq(rep.sqe_ops[2] | rep.sqe_ops[3], 0);
	cr_assert_eq(rep.register_ops[0], (1ULL << 36) | (1ULL << 37));
	cr_assert_eq(rep.register_ops[1] | rep.register_ops[2] | rep.register_ops[3], 0);

	/* nothing to clamp on the newest kernel: report zeroed */
	o.kver = 0;
	n = export(rs, &o, &b);
	cr_assert_eq(n, 7, "3 ops, flags, 3 register ops");
	free(b);
	cr_assert_eq(rep.n_sqe_ops, 0);
	cr_assert_eq(rep.n_register_ops, 0);
	cr_assert_eq(rep.sqe_ops[0] | rep.sqe_ops[1] | rep.register_ops[0], 0);

	/* a report struct that ends at the counts: bitmaps untouched */
	memset(&rep, 0xee, sizeof(rep));
	rep.sz = offsetof(struct iour_clamp_report, sqe_ops);
	o.kver = IOUR_KVER(6, 1);
	cr_assert_eq(export(rs, &o, &b), 3);
	free(b);
	cr_assert_eq(rep.n_sqe_ops, 2);
	cr_assert_eq(rep.n_register_ops, 2);
	cr_assert_eq(rep.sqe_ops[0], 0xeeeeeeeeeeeeeeeeULL);

	/* a larger report from a newer caller: unknown tail zeroed */
	memset(&bigrep, 0xee, sizeof(bigrep));
	bigrep.r.sz = sizeof(bigrep);
	o.clamp = &bigrep.r;
	cr_assert_eq(export(rs, &o, &b), 3);
	free(b);
	cr_assert_eq(bigrep.more[0] | bigrep.more[1], 0);
	cr_assert_eq(bigrep.r.n_sqe_ops, 2);

	/* split: an allow-list that is clamped to nothing gets the sentinel */
	iour_ruleset__free(rs);
	rs = mk();
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_BPF_FILTER);
	rep.sz = sizeof(rep);
	o.clamp = &rep;
	o.kver = 0;
	o.reg_last = 37;
	n = export(rs, &o, &b);
	expect_bytes(b, n, (struct ent[]){ { R_REG, 12 } }, 1, "split clamped to sentinel");
	free(b);
	cr_assert_eq(rep.n_register_ops, 1);
	cr_assert_eq(rep.register_ops[0], 1ULL << 37);
	iour_ruleset__free(rs);
}

/* The internal contract ring apply uses. */
Test(ruleset, internal_entries_contract)
{
	struct kio_restriction out[IOUR__MAX_ENTRIES];
	struct iour__kernel_limits lim = { .op_last = 63, .reg_last = 36, .split = false };
	struct iour__clamp cl;
	struct iour_ruleset *rs = mk();
	uint8_t *b;
	int n;

	cr_assert_eq(iour__ruleset_entries(NULL, &lim, out, NULL), -EINVAL);
	cr_assert_eq(iour__ruleset_entries(rs, NULL, out, NULL), -EINVAL);
	cr_assert_eq(iour__ruleset_entries(rs, &lim, NULL, NULL), -EINVAL);
	lim.op_last = 0;
	cr_assert_eq(iour__ruleset_entries(rs, &lim, out, NULL), -EINVAL);
	lim.op_last = 63;
	lim.reg_last = 12;
	cr_assert_eq(iour__ruleset_entries(rs, &lim, out, NULL), -EINVAL);
	lim.reg_last = 36;

	iour_ruleset__allow_sqe_op(rs, IOUR_OP_URING_CMD128);
	cr_assert_eq(iour__ruleset_entries(rs, &lim, out, NULL), -ENOMSG);
	iour_ruleset__set_sqe_flags(rs, 1, 0);
	/* the largest output: 256 / 256 limits, everything listed */
	iour_ruleset__free(rs);
	rs = mk();
	lim.op_last = 256;
	lim.reg_last = 256;
	n = iour__ruleset_entries(rs, &lim, out, &cl);
	cr_assert_eq(n, 256 + 1 + 256);
	cr_assert_leq(n, IOUR__MAX_ENTRIES);

	/* same bytes as the public export */
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_URING_CMD128);
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_READ);
	iour_ruleset__set_sqe_flags(rs, 1, 2);
	lim.op_last = 63;
	lim.reg_last = 36;
	n = iour__ruleset_entries(rs, &lim, out, &cl);
	cr_assert_eq(cl.n_sqe, 1);
	cr_assert(iour__bm_test(&cl.sqe_ops, 64));
	OPTS_618;
	cr_assert_eq(export(rs, &o, &b), n);
	cr_assert(memcmp(b, out, (size_t)n * 16) == 0);
	free(b);
	iour_ruleset__free(rs);
}

/* ---- the real kernel (6.18 here: coupled gates) ---- */

static int ring_disabled(void)
{
	struct kio_params p;
	long fd;

	memset(&p, 0, sizeof(p));
	p.flags = KIO_SETUP_R_DISABLED;
	fd = syscall(KIO_NR_SETUP, 4, &p);
	if (fd < 0)
		cr_skip_test("io_uring_setup(R_DISABLED) failed: errno %d", errno);
	return (int)fd;
}

static int reg(int fd, unsigned int op, void *arg, unsigned int nr)
{
	long rc = syscall(KIO_NR_REGISTER, fd, op, arg, nr);

	return rc < 0 ? -errno : (int)rc;
}

static int probe_op(int fd)
{
	/* struct kio_probe followed by 256 struct kio_probe_op */
	static _Alignas(8) uint8_t pr[sizeof(struct kio_probe) + 256 * sizeof(struct kio_probe_op)];

	memset(pr, 0, sizeof(pr));
	return reg(fd, KIO_REGISTER_PROBE, pr, 256);
}

/* The kernel's limits from QUERY (6.18+), as the probe module will. */
static void query_limits(struct iour_export_opts *o)
{
	struct kio_query_opcode q;
	struct kio_query_hdr h;

	memset(&q, 0, sizeof(q));
	memset(&h, 0, sizeof(h));
	h.query_data = (uint64_t)(uintptr_t)&q;
	h.query_op = KIO_QUERY_OPCODES;
	h.size = sizeof(q);
	if (reg(-1, KIO_REGISTER_QUERY, &h, 0) != 0 || h.result != 0)
		cr_skip_test("IORING_REGISTER_QUERY unavailable (kernel < 6.18)");
	o->op_last = q.nr_request_opcodes;
	o->reg_last = q.nr_register_opcodes;
	/* This test file targets the pre-7.0 kernel it runs on. */
	if (q.nr_register_opcodes > IOUR_REGISTER_BPF_FILTER)
		cr_skip_test("kernel has split gates (7.0+); coupled checks do not apply");
	o->flags = IOUR_EXPORT_COUPLED;
}

Test(ruleset, real_kernel_register_gate)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = mk();
	IOUR_OPTS(iour_export_opts, o);
	uint8_t *b;
	int fd, n;

	query_limits(&o);
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP);
	iour_ruleset__set_sqe_flags(rs, 0, 0);
	iour_ruleset__allow_register_op_name(rs, "PROBE");
	n = export(rs, &o, &b);
	cr_assert_gt(n, 0);

	/* baseline: without restrictions UNREGISTER_BUFFERS is -ENXIO */
	fd = ring_disabled();
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	cr_assert_eq(reg(fd, IOUR_UNREGISTER_BUFFERS, NULL, 0), -ENXIO);
	close(fd);

	fd = ring_disabled();
	cr_assert_eq(reg(fd, KIO_REGISTER_RESTRICTIONS, b, (unsigned int)n), 0);
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	cr_assert_eq(probe_op(fd), 0, "allowed register op");
	cr_assert_eq(reg(fd, IOUR_UNREGISTER_BUFFERS, NULL, 0), -EACCES, "unlisted op");
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), -EACCES);
	close(fd);
	free(b);
	iour_ruleset__free(rs);
}

/* Pitfall of coupled gates: a set with only SQE entries would deny every
 * register op.  The export lists the unrestricted register side in full,
 * so register ops stay open. */
Test(ruleset, real_kernel_sqe_only_leaves_register_open)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = mk();
	IOUR_OPTS(iour_export_opts, o);
	struct kio_restriction sqe_only[2];
	uint8_t *b;
	int fd, n;

	query_limits(&o);
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP);
	iour_ruleset__set_sqe_flags(rs, IOUR_SQE__VALID, 0);
	n = export(rs, &o, &b);
	cr_assert_eq(n, 2 + (int)o.reg_last);
	fd = ring_disabled();
	cr_assert_eq(reg(fd, KIO_REGISTER_RESTRICTIONS, b, (unsigned int)n), 0);
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	cr_assert_eq(reg(fd, IOUR_UNREGISTER_BUFFERS, NULL, 0), -ENXIO, "register side open");
	cr_assert_eq(probe_op(fd), 0);
	close(fd);

	/* the raw two SQE entries alone: every register op denied */
	memcpy(sqe_only, b, sizeof(sqe_only));
	fd = ring_disabled();
	cr_assert_eq(reg(fd, KIO_REGISTER_RESTRICTIONS, sqe_only, 2), 0);
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	cr_assert_eq(reg(fd, IOUR_UNREGISTER_BUFFERS, NULL, 0), -EACCES);
	close(fd);
	free(b);
	iour_ruleset__free(rs);
}

/* The "nothing restricted" export (everything listed) behaves as no
 * restriction at all on a coupled kernel, where registering anything gates
 * both sides; zero entries would deny everything instead. */
Test(ruleset, real_kernel_nothing_restricted_is_open)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = mk();
	IOUR_OPTS(iour_export_opts, o);
	struct kio_restriction none[1];
	uint8_t *b;
	int fd, n;

	query_limits(&o);
	n = export(rs, &o, &b);
	cr_assert_eq(n, (int)(o.op_last + 1 + o.reg_last));
	fd = ring_disabled();
	cr_assert_eq(reg(fd, KIO_REGISTER_RESTRICTIONS, b, (unsigned int)n), 0);
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	cr_assert_eq(reg(fd, IOUR_UNREGISTER_BUFFERS, NULL, 0), -ENXIO, "not gated");
	cr_assert_eq(probe_op(fd), 0);
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), -EBADFD, "allowed, enabled");
	close(fd);

	/* what the library avoids: nr == 0 gates everything */
	fd = ring_disabled();
	cr_assert_eq(reg(fd, KIO_REGISTER_RESTRICTIONS, none, 0), 0);
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	cr_assert_eq(probe_op(fd), -EACCES);
	close(fd);
	free(b);
	iour_ruleset__free(rs);
}

Test(ruleset, real_kernel_deny_all)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = mk();
	IOUR_OPTS(iour_export_opts, o);
	uint8_t *b;
	int fd, n;

	query_limits(&o);
	iour_ruleset__deny_all_sqe_ops(rs);
	iour_ruleset__deny_all_register_ops(rs);
	n = export(rs, &o, &b);
	cr_assert_eq(n, 1);
	fd = ring_disabled();
	cr_assert_eq(reg(fd, KIO_REGISTER_RESTRICTIONS, b, (unsigned int)n), 0);
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	cr_assert_eq(probe_op(fd), -EACCES);
	cr_assert_eq(reg(fd, IOUR_UNREGISTER_BUFFERS, NULL, 0), -EACCES);
	close(fd);
	free(b);
	iour_ruleset__free(rs);
}

/* Clamping is what makes the kernel accept a set naming newer opcodes. */
Test(ruleset, real_kernel_clamped_accepted_unclamped_rejected)
{
	UNIT_REQUIRE_URING();
	struct iour_ruleset *rs = mk();
	struct iour_clamp_report rep = { .sz = sizeof(rep) };
	IOUR_OPTS(iour_export_opts, o, .clamp = &rep);
	uint8_t *clamped, *full;
	int fd, nc, nf;

	query_limits(&o);
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_NOP);
	iour_ruleset__allow_sqe_op(rs, IOUR_OP_URING_CMD128);
	iour_ruleset__set_sqe_flags(rs, IOUR_SQE__VALID, 0);
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_PROBE);
	iour_ruleset__allow_register_op(rs, IOUR_REGISTER_BPF_FILTER);
	nc = export(rs, &o, &clamped);
	cr_assert_eq(rep.n_sqe_ops, 1);
	cr_assert_eq(rep.n_register_ops, 1);
	cr_assert_eq(rep.sqe_ops[1], 1ULL << (64 - 64));
	cr_assert_eq(rep.register_ops[0], 1ULL << 37);

	/* the same set for a kernel that knows op 64 and register op 37 */
	o.op_last = IOUR_OP__COUNT;
	o.reg_last = IOUR_REGISTER__COUNT;
	nf = export(rs, &o, &full);
	cr_assert_eq(nf, nc + 2);
	cr_assert_eq(rep.n_sqe_ops, 0);

	fd = ring_disabled();
	cr_assert_eq(reg(fd, KIO_REGISTER_RESTRICTIONS, full, (unsigned int)nf), -EINVAL,
		     "unclamped set naming op 64 rejected");
	/* the failed call left the ring unregistered: the clamped one works */
	cr_assert_eq(reg(fd, KIO_REGISTER_RESTRICTIONS, clamped, (unsigned int)nc), 0);
	cr_assert_eq(reg(fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	cr_assert_eq(probe_op(fd), 0);
	cr_assert_eq(reg(fd, IOUR_UNREGISTER_BUFFERS, NULL, 0), -EACCES);
	close(fd);
	cr_log_info("ruleset: kernel accepted the clamped set (%d entries) and rejected the "
		    "unclamped one (%d entries)", nc, nf);
	free(clamped);
	free(full);
	iour_ruleset__free(rs);
}
