/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict ruleset: build a restriction set from the command line
 * and print the kernel's entries for a target kernel;
 * iour-restrict verify: restrict a real ring with such a set and ask the
 * kernel, with iour_verify(), whether it enforces it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <fcntl.h>
#include <unistd.h>

#include "core/cli.h"

#define RULESET_OPTIONS_HELP \
"Restriction set:\n" \
"  --allow-op LIST        allow these request opcodes (names such as READ or\n" \
"                         IORING_OP_READ, or numbers); repeatable\n" \
"  --deny-ops             start from an empty opcode allow-list (a ring that\n" \
"                         accepts no request unless --allow-op adds some)\n" \
"  --allow-register LIST  allow these register opcodes once the ring is\n" \
"                         enabled (REGISTER_BUFFERS, BUFFERS, ...); repeatable\n" \
"  --deny-register        once the ring is enabled, allow no register opcode\n" \
"                         but those given with --allow-register\n" \
"  --flags-allowed FLAGS  SQE flags a request may carry (ASYNC,IO_LINK,...,\n" \
"                         'none' or 'all'); default none when opcodes are listed\n" \
"  --flags-required FLAGS SQE flags every request must carry; default none\n"

const char cli_help_ruleset[] =
"Usage: iour-restrict ruleset [set options] [target options] [--format F]\n"
"\n"
"Build a restriction set (the allow-lists of io_uring rings, Linux 5.10+) and\n"
"print the 16-byte entries that IORING_REGISTER_RESTRICTIONS would receive\n"
"for a target kernel, with the opcodes clamped away because the target does\n"
"not know them.  A side that is not listed stays unrestricted.\n"
"\n"
RULESET_OPTIONS_HELP
"\n"
"Target kernel (default: the running kernel, as iour_probe() reports it):\n"
"  --kernel X.Y           the limits and gate semantics of Linux X.Y from the\n"
"                         library's tables\n"
"  --running              the running kernel (the default)\n"
"  --op-last N            override IORING_OP_LAST (1 to 256)\n"
"  --reg-last N           override IORING_REGISTER_LAST (13 to 256)\n"
"  --coupled              gates of Linux 5.10 to 6.19: any registered set also\n"
"                         closes every unlisted register opcode\n"
"  --split                gates of Linux 7.0+: a side is gated only if listed\n"
"\n"
"Output:\n"
"  --format text          a commented table (default)\n"
"  --format hex           one entry per line, 32 hex digits: the entry's 16\n"
"                         bytes in memory order (clamp report on stderr)\n"
"  --format c             a C array of struct io_uring_restriction\n"
"  -h, --help             show this help\n"
"\n"
"Example: iour-restrict ruleset --allow-op READ,WRITE --flags-allowed none \\\n"
"             --deny-register --kernel 6.1\n"
"\n"
"Exit status: 0 on success; 1 if the running kernel's limits are unknown or\n"
"a library call failed; 2 on a usage error.\n";

const char cli_help_verify[] =
"Usage: iour-restrict verify --allow-op LIST [set options] [--timeout MS]\n"
"\n"
"A self-test of the running kernel: create a ring restricted by the set\n"
"(iour_ring_create), then let iour_verify() submit requests on it from a\n"
"forked child: every request kind the check can prepare that the kernel\n"
"knows (NOP, READV, WRITEV, CONNECT, OPENAT, READ, WRITE, OPENAT2, MSG_RING,\n"
"SOCKET), each expected to be allowed if the set allows it and denied\n"
"(-EACCES) otherwise, plus one request carrying IOSQE_ASYNC.  The requests\n"
"are harmless: pipes, /dev/null, an AF_UNIX socket, a connect to an\n"
"abstract AF_UNIX name nobody listens on, a message to a ring of the\n"
"check's own.  Then it lists the opcodes the set allows that were not\n"
"tried (the check cannot prepare them, or a required flag denies plain\n"
"requests): the verdict covers only what was tried.\n"
"\n"
RULESET_OPTIONS_HELP
"\n"
"Other options:\n"
"  --timeout MS           how long the check may take (default 10000)\n"
"  -h, --help             show this help\n"
"\n"
"Exit status: 0 if the kernel answered every request as expected; 1 if it\n"
"did not (the set is not enforced) or the check could not run; 2 on a usage\n"
"error.\n";

/* ---- building a set from the shared options */

struct set_args {
	struct iour_ruleset *rs;
	uint32_t allowed, required;
	bool flags_given, any_op;
};

static int add_op(const char *item, void *arg)
{
	struct set_args *a = arg;
	uint32_t op;
	int r;

	if (cli_parse_opcode(item, &op))
		return cli_usage("--allow-op: unknown request opcode '%s'%s (see '%s names ops')",
				 item, cli_near(IOUR_NAME_OPCODE, item), CLI_PROG);
	r = iour_ruleset__allow_sqe_op(a->rs, op);
	if (r)
		return cli_fail(r, "--allow-op %s", item);
	a->any_op = true;
	return 0;
}

static int add_reg(const char *item, void *arg)
{
	struct set_args *a = arg;
	uint64_t v;
	int r;

	if (item[0] >= '0' && item[0] <= '9') {
		if (cli_parse_u64(item, &v) || v >= IOUR_REGISTER__COUNT)
			return cli_usage("--allow-register: unknown register opcode '%s'", item);
		r = iour_ruleset__allow_register_op(a->rs, (uint32_t)v);
	} else {
		r = iour_ruleset__allow_register_op_name(a->rs, item);
		if (r == -ENOENT)
			return cli_usage("--allow-register: unknown register opcode '%s'%s "
					 "(see '%s names register')", item,
					 cli_near(IOUR_NAME_REGISTER_OP, item), CLI_PROG);
	}
	if (r)
		return cli_fail(r, "--allow-register %s", item);
	return 0;
}

enum {
	O_ALLOW_OP = 256, O_DENY_OPS, O_ALLOW_REG, O_DENY_REG, O_FLAGS_ALLOWED,
	O_FLAGS_REQUIRED, O_KERNEL, O_RUNNING, O_OP_LAST, O_REG_LAST, O_COUPLED, O_SPLIT,
	O_FORMAT, O_TIMEOUT
};

#define SET_LONG_OPTIONS \
	{ "allow-op", required_argument, NULL, O_ALLOW_OP }, \
	{ "deny-ops", no_argument, NULL, O_DENY_OPS }, \
	{ "allow-register", required_argument, NULL, O_ALLOW_REG }, \
	{ "deny-register", no_argument, NULL, O_DENY_REG }, \
	{ "flags-allowed", required_argument, NULL, O_FLAGS_ALLOWED }, \
	{ "flags-required", required_argument, NULL, O_FLAGS_REQUIRED }, \
	{ "help", no_argument, NULL, 'h' }

/* Handles one of the shared options; returns 0, or an exit code. */
static int set_option(struct set_args *a, int c, const char *arg)
{
	int r;

	switch (c) {
	case O_ALLOW_OP:
		return cli_each_item(arg, "--allow-op", add_op, a);
	case O_DENY_OPS:
		/* Only meaningful before any --allow-op: it would undo them. */
		if (a->any_op)
			return cli_usage("--deny-ops must come before --allow-op");
		r = iour_ruleset__deny_all_sqe_ops(a->rs);
		return r ? cli_fail(r, "--deny-ops") : 0;
	case O_ALLOW_REG:
		return cli_each_item(arg, "--allow-register", add_reg, a);
	case O_DENY_REG:
		if (iour_ruleset__register_restricted(a->rs) == 1)
			return 0; /* already an allow-list; keep what it holds */
		r = iour_ruleset__deny_all_register_ops(a->rs);
		return r ? cli_fail(r, "--deny-register") : 0;
	case O_FLAGS_ALLOWED:
		a->flags_given = true;
		return cli_parse_sqe_flags(arg, "--flags-allowed", &a->allowed);
	case O_FLAGS_REQUIRED:
		a->flags_given = true;
		return cli_parse_sqe_flags(arg, "--flags-required", &a->required);
	default:
		return -1;
	}
}

/* Decides the SQE flags once all options are read. */
static int set_finish(struct set_args *a)
{
	int r;

	if (!a->flags_given && !a->any_op)
		return 0;
	r = iour_ruleset__set_sqe_flags(a->rs, a->allowed, a->required);
	return r ? cli_fail(r, "iour_ruleset__set_sqe_flags") : 0;
}

/*
 * Lint: what the set does not seal (doc/security.md, section 2).  A ring
 * that requires IOSQE_FIXED_FILE can still get new files: a MSG_RING
 * request (IORING_MSG_SEND_FD) on any ring that can name it installs them.
 */
static void set_warnings(const struct set_args *a)
{
	uint32_t required = 0;

	(void)iour_ruleset__sqe_flags(a->rs, NULL, &required);
	if (required & IOUR_SQE_FIXED_FILE)
		cli_msg("warning: requiring FIXED_FILE does not seal the ring's fixed-file "
			"table: MSG_RING (IORING_MSG_SEND_FD) on any ring that can name this "
			"ring's descriptor installs new files; deny MSG_RING on those rings "
			"(and on rings created later: task restrictions or the seccomp "
			"companion), or never hand the descriptor out");
	if (iour_ruleset__sqe_restricted(a->rs) == 1 &&
	    iour_ruleset__sqe_op_allowed(a->rs, IOUR_OP_MSG_RING) == 1)
		cli_msg("warning: MSG_RING is allowed: requests can install this ring's "
			"registered files into the fixed-file table of any ring whose "
			"descriptor they can name, so no such ring's file set is sealed");
}

static void flags_str(uint32_t mask, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	if (!mask) {
		snprintf(buf, len, "none");
		return;
	}
	for (uint32_t bit = 1; bit <= IOUR_SQE__VALID && n < len; bit <<= 1)
		if (mask & bit)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "",
					      iour_sqe_flag_name(bit));
}

/* ---- ruleset */

struct target {
	uint32_t kver;     /* 0 unless --kernel */
	uint32_t op_last;  /* 0: from kver */
	uint32_t reg_last; /* 0: from kver */
	int split;         /* -1: from kver or the running kernel */
	bool running;
};

static int resolve_target(struct target *t, struct iour_export_opts *eo, char *desc, size_t len)
{
	struct iour_features f = { .sz = sizeof(f) };
	char kv[16];
	int r;

	if (t->running && (!t->op_last || !t->reg_last || t->split < 0)) {
		r = iour_probe(NULL, &f);
		if (r)
			return cli_fail(r, "iour_probe");
		if (f.ring_restrictions == IOUR_AVAIL_NO || !f.op_last || !f.reg_last) {
			cli_msg("the running kernel's limits are unknown (feature level %u: %s); "
				"choose a target with --kernel X.Y", f.level,
				iour_feature_level_str((int)f.level));
			return CLI_FAIL;
		}
		if (!t->op_last)
			t->op_last = f.op_last;
		if (!t->reg_last)
			t->reg_last = f.reg_last;
		if (t->split < 0)
			t->split = (int)f.split_gates;
	}
	if (t->kver) {
		if (!t->op_last)
			t->op_last = (uint32_t)iour_opcode_last(t->kver);
		if (!t->reg_last)
			t->reg_last = (uint32_t)iour_register_op_last(t->kver);
		if (t->split < 0)
			t->split = iour_kernel_split_gates(t->kver);
	}
	eo->kver = t->kver;
	eo->op_last = t->op_last;
	eo->reg_last = t->reg_last;
	eo->flags = t->split ? IOUR_EXPORT_SPLIT : IOUR_EXPORT_COUPLED;
	if (t->kver) {
		cli_kver_str(t->kver, kv, sizeof(kv));
		snprintf(desc, len, "Linux %s", kv);
	} else if (t->running) {
		snprintf(desc, len, "the running kernel");
	} else {
		snprintf(desc, len, "a kernel");
	}
	return 0;
}

static const char *kind_name(uint16_t k)
{
	switch (k) {
	case IOUR_RESTRICTION_REGISTER_OP:
		return "REGISTER_OP";
	case IOUR_RESTRICTION_SQE_OP:
		return "SQE_OP";
	case IOUR_RESTRICTION_SQE_FLAGS_ALLOWED:
		return "SQE_FLAGS_ALLOWED";
	case IOUR_RESTRICTION_SQE_FLAGS_REQUIRED:
		return "SQE_FLAGS_REQUIRED";
	default:
		return "?";
	}
}

/* "NAME, NAME" of the bits set in a clamp bitmap. */
static void clamp_list(const uint64_t bm[4], const char *(*name)(uint32_t), FILE *out)
{
	int first = 1;

	for (uint32_t i = 0; i < 256; i++) {
		if (!((bm[i / 64] >> (i % 64)) & 1))
			continue;
		fprintf(out, "%s%s", first ? "" : ", ", name(i) ? name(i) : "?");
		first = 0;
	}
}

static void print_clamp(const struct iour_clamp_report *cr, const char *lead, const char *trail,
			FILE *out)
{
	if (!cr->n_sqe_ops && !cr->n_register_ops) {
		fprintf(out, "%sclamped: nothing (the target knows every allowed opcode)%s\n", lead,
			trail);
		return;
	}
	fprintf(out, "%sclamped: %u request opcode(s) and %u register opcode(s) the target "
		"does not know were dropped%s\n", lead, cr->n_sqe_ops, cr->n_register_ops, trail);
	if (cr->n_sqe_ops) {
		fprintf(out, "%s  request:  ", lead);
		clamp_list(cr->sqe_ops, iour_opcode_name, out);
		fprintf(out, "%s\n", trail);
	}
	if (cr->n_register_ops) {
		fprintf(out, "%s  register: ", lead);
		clamp_list(cr->register_ops, iour_register_op_name, out);
		fprintf(out, "%s\n", trail);
	}
}

static void print_summary(const struct iour_ruleset *rs, bool flags_default)
{
	uint32_t allowed = 0, required = 0, n = 0;
	char fa[128], fr[128];
	int decided;

	printf("# request opcodes:  ");
	if (iour_ruleset__sqe_restricted(rs) == 1) {
		for (uint32_t op = 0; op < IOUR_OP__COUNT; op++)
			if (iour_ruleset__sqe_op_allowed(rs, op) == 1)
				printf("%s%s", n++ ? "," : "", iour_opcode_name(op));
		printf("%s\n", n ? "" : "none (every request is denied)");
	} else {
		printf("unrestricted\n");
	}
	decided = iour_ruleset__sqe_flags(rs, &allowed, &required);
	flags_str(allowed, fa, sizeof(fa));
	flags_str(required, fr, sizeof(fr));
	if (decided == 1)
		printf("# SQE flags:        allowed %s; required %s%s\n", fa, fr,
		       flags_default ? " (default; see --flags-allowed)" : "");
	else
		printf("# SQE flags:        unrestricted\n");
	printf("# register opcodes: ");
	n = 0;
	if (iour_ruleset__register_restricted(rs) == 1) {
		for (uint32_t op = 0; op < IOUR_REGISTER__COUNT; op++)
			if (iour_ruleset__register_op_allowed(rs, op) == 1)
				printf("%s%s", n++ ? "," : "", iour_register_op_name(op));
		printf("%s\n", n ? "" : "none once the ring is enabled");
	} else {
		printf("unrestricted\n");
	}
}

static void print_entry_text(int i, const struct iour_restriction *e)
{
	char fl[128];

	printf("  %3d  %-18s  %4u  ", i, kind_name(e->opcode), e->arg);
	switch (e->opcode) {
	case IOUR_RESTRICTION_REGISTER_OP:
		printf("allow register %s\n", iour_register_op_name(e->arg) ? iour_register_op_name(e->arg) : "?");
		break;
	case IOUR_RESTRICTION_SQE_OP:
		printf("allow request %s\n", iour_opcode_name(e->arg) ? iour_opcode_name(e->arg) : "?");
		break;
	case IOUR_RESTRICTION_SQE_FLAGS_ALLOWED:
		flags_str(e->arg, fl, sizeof(fl));
		printf("allowed SQE flags: %s\n", fl);
		break;
	default:
		flags_str(e->arg, fl, sizeof(fl));
		printf("required SQE flags: %s\n", fl);
		break;
	}
}

static void print_entry_c(const struct iour_restriction *e)
{
	const char *n;

	switch (e->opcode) {
	case IOUR_RESTRICTION_REGISTER_OP:
		n = iour_register_op_name(e->arg);
		printf("\t{ .opcode = IORING_RESTRICTION_REGISTER_OP, .register_op = %u }, "
		       "/* IORING_%s */\n", e->arg, n ? n : "?");
		break;
	case IOUR_RESTRICTION_SQE_OP:
		n = iour_opcode_name(e->arg);
		printf("\t{ .opcode = IORING_RESTRICTION_SQE_OP, .sqe_op = %u }, "
		       "/* IORING_OP_%s */\n", e->arg, n ? n : "?");
		break;
	case IOUR_RESTRICTION_SQE_FLAGS_ALLOWED:
		printf("\t{ .opcode = IORING_RESTRICTION_SQE_FLAGS_ALLOWED, .sqe_flags = 0x%02x },\n",
		       e->arg);
		break;
	default:
		printf("\t{ .opcode = IORING_RESTRICTION_SQE_FLAGS_REQUIRED, .sqe_flags = 0x%02x },\n",
		       e->arg);
		break;
	}
}

/* ruleset's command line: the set, the target kernel, the output format. */
struct ruleset_args {
	struct set_args a;
	struct target t;
	bool running_given;
	const char *format;
};

/* Handles one target or output option, or a set option; returns 0, or an
 * exit code. */
static int ruleset_option(struct ruleset_args *ra, int c, const char *arg)
{
	struct target *t = &ra->t;
	uint64_t v;

	switch (c) {
	case O_KERNEL:
		if (cli_parse_kver(arg, &t->kver))
			return cli_usage("--kernel: '%s' is not a kernel version X.Y", arg);
		if (t->kver < (uint32_t)iour_kernel_generation(IOUR_KGEN_RING_RESTRICTIONS)) {
			char first[16];

			cli_kver_str((uint32_t)iour_kernel_generation(IOUR_KGEN_RING_RESTRICTIONS),
				     first, sizeof(first));
			return cli_usage("--kernel: Linux %s has no ring restrictions "
					 "(they came in %s)", arg, first);
		}
		return 0;
	case O_RUNNING:
		ra->running_given = true;
		return 0;
	case O_OP_LAST:
		if (cli_parse_u64(arg, &v) || v < 1 || v > 256)
			return cli_usage("--op-last: '%s' is not 1 to 256", arg);
		t->op_last = (uint32_t)v;
		return 0;
	case O_REG_LAST:
		if (cli_parse_u64(arg, &v) || v < 13 || v > 256)
			return cli_usage("--reg-last: '%s' is not 13 to 256", arg);
		t->reg_last = (uint32_t)v;
		return 0;
	case O_COUPLED:
	case O_SPLIT:
		if (t->split >= 0 && t->split != (c == O_SPLIT))
			return cli_usage("--coupled and --split exclude each other");
		t->split = c == O_SPLIT;
		return 0;
	case O_FORMAT:
		if (strcmp(arg, "text") && strcmp(arg, "hex") && strcmp(arg, "c"))
			return cli_usage("--format: '%s' is not text, hex or c", arg);
		ra->format = arg;
		return 0;
	default:
		return set_option(&ra->a, c, arg);
	}
}

/* Reads ruleset's options.  Returns 0, -1 after --help, or an exit code. */
static int ruleset_parse(int argc, char **argv, struct ruleset_args *ra)
{
	static const struct option lo[] = {
		SET_LONG_OPTIONS,
		{ "kernel", required_argument, NULL, O_KERNEL },
		{ "running", no_argument, NULL, O_RUNNING },
		{ "op-last", required_argument, NULL, O_OP_LAST },
		{ "reg-last", required_argument, NULL, O_REG_LAST },
		{ "coupled", no_argument, NULL, O_COUPLED },
		{ "split", no_argument, NULL, O_SPLIT },
		{ "format", required_argument, NULL, O_FORMAT },
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		if (c == 'h') {
			cli_help(cli_help_ruleset);
			return -1;
		}
		if (c == '?' || c == ':')
			return cli_getopt_error(c, argv);
		rc = ruleset_option(ra, c, optarg);
		if (rc)
			return rc;
	}
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (ra->running_given && ra->t.kver)
		return cli_usage("--kernel and --running exclude each other");
	return 0;
}

/* The exported entries, and what the listings say about them. */
struct ruleset_out {
	const struct ruleset_args *ra;
	const struct iour_export_opts *eo;
	const struct iour_clamp_report *cr;
	const char *desc;
	struct iour_restriction *ents;
	size_t len;
	int n;
};

/* The set's entries for the target: iour_ruleset__export() asked for the
 * size, then for the entries.  Returns 0, or an exit code. */
static int ruleset_export(struct ruleset_out *o)
{
	const struct iour_ruleset *rs = o->ra->a.rs;

	o->n = iour_ruleset__export(rs, o->eo, NULL, &o->len);
	if (o->n < 0)
		return cli_fail(o->n, "iour_ruleset__export");
	o->ents = malloc(o->len);
	if (!o->ents)
		return cli_fail(-ENOMEM, "iour_ruleset__export");
	o->n = iour_ruleset__export(rs, o->eo, o->ents, &o->len);
	if (o->n < 0)
		return cli_fail(o->n, "iour_ruleset__export");
	return 0;
}

/* --format hex: one entry per line, the clamp report on stderr. */
static void print_listing_hex(const struct ruleset_out *o)
{
	for (int i = 0; i < o->n; i++) {
		const uint8_t *b = (const uint8_t *)&o->ents[i];

		for (size_t k = 0; k < sizeof(o->ents[i]); k++)
			printf("%02x", b[k]);
		putchar('\n');
	}
	if (o->cr->n_sqe_ops || o->cr->n_register_ops)
		print_clamp(o->cr, CLI_PROG " ruleset: ", "", stderr);
}

/* --format c: a C array of struct io_uring_restriction. */
static void print_listing_c(const struct ruleset_out *o)
{
	printf("/* %d restriction entries for %s: IORING_OP_LAST %u, "
	       "IORING_REGISTER_LAST %u, %s gates */\n", o->n, o->desc, o->eo->op_last,
	       o->eo->reg_last, o->ra->t.split ? "split" : "coupled");
	print_clamp(o->cr, "/* ", " */", stdout);
	printf("struct io_uring_restriction restrictions[%d] = {\n", o->n);
	for (int i = 0; i < o->n; i++)
		print_entry_c(&o->ents[i]);
	printf("};\n");
}

/* --format text: the target, the set, then a commented table. */
static void print_listing_text(const struct ruleset_out *o)
{
	printf("# target: %s (IORING_OP_LAST %u, IORING_REGISTER_LAST %u, %s)\n",
	       o->desc, o->eo->op_last, o->eo->reg_last,
	       o->ra->t.split ? "split gates: a side is gated only if listed"
			      : "coupled gates: any set gates both sides");
	print_summary(o->ra->a.rs, !o->ra->a.flags_given);
	printf("# %d entr%s (%zu bytes)\n", o->n, o->n == 1 ? "y" : "ies", o->len);
	printf("#   #  KIND                 ARG  MEANING\n");
	for (int i = 0; i < o->n; i++)
		print_entry_text(i, &o->ents[i]);
	print_clamp(o->cr, "# ", "", stdout);
}

int cmd_ruleset(int argc, char **argv)
{
	struct ruleset_args ra = { .t = { .split = -1 }, .format = "text" };
	struct iour_clamp_report cr = { .sz = sizeof(cr) };
	IOUR_OPTS(iour_export_opts, eo, .clamp = &cr);
	char desc[64];
	struct ruleset_out o = { .ra = &ra, .eo = &eo, .cr = &cr, .desc = desc };
	int rc, r;

	r = iour_ruleset__new(NULL, &ra.a.rs);
	if (r)
		return cli_fail(r, "iour_ruleset__new");
	rc = ruleset_parse(argc, argv, &ra);
	if (rc) {
		rc = rc < 0 ? CLI_OK : rc;
		goto out;
	}
	rc = set_finish(&ra.a);
	if (rc)
		goto out;
	set_warnings(&ra.a);
	ra.t.running = !ra.t.kver;
	rc = resolve_target(&ra.t, &eo, desc, sizeof(desc));
	if (rc)
		goto out;
	rc = ruleset_export(&o);
	if (rc)
		goto out;

	if (!strcmp(ra.format, "hex"))
		print_listing_hex(&o);
	else if (!strcmp(ra.format, "c"))
		print_listing_c(&o);
	else
		print_listing_text(&o);
	if (fflush(stdout))
		rc = CLI_FAIL;
out:
	free(o.ents);
	iour_ruleset__free(ra.a.rs);
	return rc;
}

/* ---- verify */

/* The requests iour_verify() can prepare, in the order they are tried. */
static const uint32_t verify_ops[] = {
	IOUR_OP_NOP,	 IOUR_OP_READV,	   IOUR_OP_WRITEV, IOUR_OP_CONNECT,
	IOUR_OP_OPENAT,	 IOUR_OP_READ,	   IOUR_OP_WRITE,  IOUR_OP_OPENAT2,
	IOUR_OP_MSG_RING, IOUR_OP_SOCKET,
};
#define NR_VERIFY_OPS (sizeof(verify_ops) / sizeof(verify_ops[0]))

static void fill_req(struct iour_verify_req *q, uint32_t op, const struct sockaddr_un *un,
		     uint32_t unlen)
{
	memset(q, 0, sizeof(*q));
	q->sz = sizeof(*q);
	q->opcode = op;
	switch (op) {
	case IOUR_OP_CONNECT:
		q->family = AF_UNIX;
		q->type = SOCK_STREAM;
		q->addr = un;
		q->addrlen = unlen;
		break;
	case IOUR_OP_OPENAT:
	case IOUR_OP_OPENAT2:
		q->path = "/dev/null";
		q->open_flags = O_RDONLY;
		break;
	case IOUR_OP_SOCKET:
		q->family = AF_UNIX;
		q->type = SOCK_STREAM;
		break;
	default:
		break;
	}
}

static const char *expect_str(uint32_t e)
{
	return e == IOUR_EXPECT_ALLOW ? "allow" : e == IOUR_EXPECT_DENY ? "deny" : "-";
}

/* Print "label: OP OP ..." for the opcodes of a coverage bitmap. */
static void print_ops(const char *label, const uint64_t *bm, uint32_t op_last)
{
	char tmp[16];

	printf("%s:", label);
	for (uint32_t op = 0; op < op_last && op < 256; op++) {
		const char *nm;

		if (!((bm[op / 64] >> (op % 64)) & 1))
			continue;
		nm = iour_opcode_name(op);
		if (!nm) {
			snprintf(tmp, sizeof(tmp), "%u", op);
			nm = tmp;
		}
		printf(" %s", nm);
	}
	printf("\n");
}

/* Which opcodes the set allows were tried, and what the check cannot see. */
static void print_coverage(const struct iour_verify_coverage *cov)
{
	uint64_t preparable[4];

	printf("allowed request opcodes tried as allowed: %u of %u\n", cov->n_tried,
	       cov->n_allowed);
	if (cov->n_tried)
		print_ops("  tried", cov->tried, cov->op_last);
	if (cov->n_unpreparable)
		print_ops("  not tried (the check cannot prepare them)", cov->unpreparable,
			  cov->op_last);
	for (int i = 0; i < 4; i++)
		preparable[i] = cov->untried[i] & ~cov->unpreparable[i];
	if (cov->n_untried > cov->n_unpreparable)
		print_ops("  not tried as allowed (a required SQE flag denies the plain "
			  "requests)",
			  preparable, cov->op_last);
	if (cov->flags & IOUR_VERIFY_COV_REGISTER_NOT_TRIED)
		printf("note: the register-opcode rules were not tried (the check submits "
		       "requests only)\n");
	if (cov->flags & IOUR_VERIFY_COV_FIXED_FILE_REQUIRED)
		printf("note: the ring requires FIXED_FILE, but its fixed-file table is not "
		       "sealed: MSG_RING on another ring that can name it installs files; the "
		       "check does not look at other rings\n");
	if (cov->flags & IOUR_VERIFY_COV_MSG_RING)
		printf("note: MSG_RING is allowed: this ring can install its registered files "
		       "in other rings' fixed-file tables\n");
}

/* Reads verify's options into the set and the check's options.  Returns
 * 0, -1 after --help, or an exit code. */
static int verify_parse(int argc, char **argv, struct set_args *a, struct iour_verify_opts *vo)
{
	static const struct option lo[] = {
		SET_LONG_OPTIONS,
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'h':
			cli_help(cli_help_verify);
			return -1;
		case O_TIMEOUT:
			if (cli_parse_u64(optarg, &v) || v == 0 || v > 3600000)
				return cli_usage("--timeout: '%s' is not 1 to 3600000 ms", optarg);
			vo->timeout_ms = (uint32_t)v;
			break;
		case '?':
		case ':':
			return cli_getopt_error(c, argv);
		default:
			rc = set_option(a, c, optarg);
			if (rc)
				return rc;
			break;
		}
	}
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (iour_ruleset__sqe_restricted(a->rs) != 1)
		return cli_usage("give the allowed request opcodes with --allow-op (or --deny-ops)");
	return 0;
}

/* Creates the ring the set restricts (iour_ring_create) and says what was
 * registered.  Returns 0, or an exit code. */
static int verify_ring(const struct iour_ruleset *rs, struct iour_ring_report *rep, int *fd)
{
	IOUR_OPTS(iour_ring_create_opts, copts, .report = rep);
	int r;

	r = iour_ring_create(8, NULL, rs, &copts, fd);
	if (r)
		return cli_fail(r, "iour_ring_create");
	printf("ring fd %d: %u restriction entries registered and enabled "
	       "(IORING_OP_LAST %u, IORING_REGISTER_LAST %u, %s gates)\n", *fd, rep->nr_entries,
	       rep->op_last, rep->reg_last, rep->split_gates ? "split" : "coupled");
	if (rep->n_clamped_sqe_ops + rep->n_clamped_register_ops)
		printf("clamped: %u request and %u register opcode(s) this kernel does not know\n",
		       rep->n_clamped_sqe_ops, rep->n_clamped_register_ops);
	return 0;
}

/* An abstract AF_UNIX name nobody listens on: CONNECT gets -ECONNREFUSED
 * when allowed.  Returns the address's length. */
static uint32_t verify_addr(struct sockaddr_un *un)
{
	memset(un, 0, sizeof(*un));
	un->sun_family = AF_UNIX;
	snprintf(un->sun_path + 1, sizeof(un->sun_path) - 1, "iour-restrict-verify-%ld",
		 (long)getpid());
	return (uint32_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(un->sun_path + 1));
}

/* The requests: every kind the check can prepare that the kernel knows,
 * expected as the set says, and one with IOSQE_ASYNC.  Returns how many. */
static size_t verify_reqs(const struct iour_ruleset *rs, uint32_t op_last,
			  const struct sockaddr_un *un, uint32_t unlen,
			  struct iour_verify_req reqs[NR_VERIFY_OPS + 1])
{
	uint32_t allowed = 0, required = 0, async_op = UINT32_MAX;
	size_t n = 0;
	int ok;

	(void)iour_ruleset__sqe_flags(rs, &allowed, &required);
	for (size_t i = 0; i < NR_VERIFY_OPS; i++) {
		uint32_t op = verify_ops[i];
		int yes;

		if (op >= op_last)
			continue; /* the kernel does not know it */
		yes = iour_ruleset__sqe_op_allowed(rs, op) == 1;
		fill_req(&reqs[n], op, un, unlen);
		reqs[n].expect = yes && !required ? IOUR_EXPECT_ALLOW : IOUR_EXPECT_DENY;
		if (yes && async_op == UINT32_MAX)
			async_op = op;
		n++;
	}
	/* One request with a flag: allowed only if the set allows it. */
	if (async_op != UINT32_MAX) {
		fill_req(&reqs[n], async_op, un, unlen);
		reqs[n].sqe_flags = IOUR_SQE_ASYNC;
		ok = (allowed & IOUR_SQE_ASYNC) && !(required & ~(uint32_t)IOUR_SQE_ASYNC);
		reqs[n].expect = ok ? IOUR_EXPECT_ALLOW : IOUR_EXPECT_DENY;
		n++;
	}
	return n;
}

/* The table of requests, expectations and the kernel's answers.  Returns
 * the number of requests answered against the set. */
static size_t print_results(const struct iour_verify_req *reqs,
			    const struct iour_verify_result *res, size_t n)
{
	char name[32], result[32];
	size_t mism = 0;

	printf("  %-16s %-8s %-8s %-16s %s\n", "REQUEST", "EXPECTED", "KERNEL", "RESULT", "CHECK");
	for (size_t i = 0; i < n; i++) {
		const char *st;

		snprintf(name, sizeof(name), "%s%s", iour_opcode_name(reqs[i].opcode),
			 reqs[i].sqe_flags ? "+ASYNC" : "");
		switch (res[i].status) {
		case IOUR_VERIFY_MATCH:
			st = "ok";
			break;
		case IOUR_VERIFY_MISMATCH:
			st = "NOT ENFORCED";
			mism++;
			break;
		case IOUR_VERIFY_FAILED:
			st = "could not be prepared";
			break;
		default:
			st = "not run";
			break;
		}
		if (res[i].status == IOUR_VERIFY_NOT_RUN && !res[i].res)
			snprintf(result, sizeof(result), "-");
		else if (res[i].res < 0)
			snprintf(result, sizeof(result), "%s", iour_errname(res[i].res));
		else
			snprintf(result, sizeof(result), "%d", res[i].res);
		printf("  %-16s %-8s %-8s %-16s %s\n", name, expect_str(reqs[i].expect),
		       expect_str(res[i].observed), result, st);
	}
	return mism;
}

/* What was tested, the coverage, and the verdict of iour_verify()'s
 * result @r.  Returns the exit code. */
static int print_verdict(int r, const struct iour_verify_req *reqs, size_t n, size_t mism,
			 const struct iour_verify_coverage *cov)
{
	size_t nallow = 0;

	for (size_t i = 0; i < n; i++)
		nallow += reqs[i].expect == IOUR_EXPECT_ALLOW;
	if (!nallow)
		printf("note: no request the check can prepare is allowed by the set, "
		       "so only denials were tested\n");
	else if (nallow == n)
		printf("note: the set allows every request the check can prepare, "
		       "so no denial was tested\n");
	if (r == 0 || r == -IOUR_ERRNO__NOT_ENFORCED)
		print_coverage(cov);
	if (r == 0 && cov->n_untried == 0) {
		printf("enforced: the kernel answered all %zu requests as the set says, and "
		       "every request opcode the set allows was tried\n",
		       n);
	} else if (r == 0) {
		printf("enforced as far as tried: the kernel answered the %zu requests as the set "
		       "says; %u of the %u request opcodes the set allows were not tried as "
		       "allowed\n",
		       n, cov->n_untried, cov->n_allowed);
	} else if (r == -IOUR_ERRNO__NOT_ENFORCED) {
		printf("NOT ENFORCED: %zu of %zu requests were answered against the set\n", mism, n);
		return CLI_FAIL;
	} else {
		return cli_fail(r, "iour_verify");
	}
	return CLI_OK;
}

int cmd_verify(int argc, char **argv)
{
	struct set_args a = { 0 };
	struct iour_ring_report rep = { .sz = sizeof(rep) };
	struct iour_verify_coverage cov = { .sz = sizeof(cov) };
	IOUR_OPTS(iour_verify_opts, vo, .flags = IOUR_VERIFY_RING_FD, .timeout_ms = 10000,
		  .coverage = &cov);
	struct iour_verify_req reqs[NR_VERIFY_OPS + 1];
	struct iour_verify_result res[NR_VERIFY_OPS + 1];
	struct sockaddr_un un;
	uint32_t unlen;
	size_t n, mism;
	int rc, r, fd = -1;

	r = iour_ruleset__new(NULL, &a.rs);
	if (r)
		return cli_fail(r, "iour_ruleset__new");
	rc = verify_parse(argc, argv, &a, &vo);
	if (rc) {
		rc = rc < 0 ? CLI_OK : rc;
		goto out;
	}
	rc = set_finish(&a);
	if (rc)
		goto out;
	set_warnings(&a);
	rc = verify_ring(a.rs, &rep, &fd);
	if (rc)
		goto out;

	unlen = verify_addr(&un);
	n = verify_reqs(a.rs, rep.op_last, &un, unlen, reqs);
	vo.ring_fd = fd;
	vo.ruleset = a.rs;
	memset(res, 0, sizeof(res));
	r = iour_verify(reqs, n, res, &vo);

	mism = print_results(reqs, res, n);
	rc = print_verdict(r, reqs, n, mism, &cov);
	if (fflush(stdout))
		rc = CLI_FAIL;
out:
	if (fd >= 0)
		close(fd);
	iour_ruleset__free(a.rs);
	return rc;
}
