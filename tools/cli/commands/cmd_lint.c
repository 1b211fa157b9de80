/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict lint: risky choices in a policy file.  Every finding has a
 * stable id (documented in doc/cli.md, "lint findings"), so that scripts
 * and --ignore can name it.  The checks use the library's view of the
 * loaded policy only: verdicts of typical risky requests
 * (iour_policy__decide()), the restriction entries and attributes of a
 * plan, and the group table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <jansson.h>
#include <sys/socket.h>

#include "core/advice.h"
#include "core/cli.h"
#include "rules/expr.h"

const char cli_help_lint[] =
"Usage: iour-restrict lint POLICY [--ignore ID[,ID]...] [--kernel X.Y]\n"
"                        [--since X.Y] [--mechanism task|broker|companion|ring]\n"
"\n"
"Report risky choices in the policy file POLICY, one line each:\n"
"  POLICY: ID: what is risky and why\n"
"\n"
"Findings (stable ids):\n"
"  uring-cmd            URING_CMD is allowed: driver commands no filter reads\n"
"  msg-ring             MSG_RING is allowed: reaches other rings, installs files\n"
"  socket-unfiltered    SOCKET is allowed for any family (raw packet sockets)\n"
"  openat-unfiltered    OPENAT/OPENAT2 may create and truncate files\n"
"  register-files       a sealed ring (FIXED_FILE required) may still register\n"
"                       or update its file table\n"
"  default-allow        unnamed opcodes, and those of future kernels, are allowed\n"
"  fallback-open        without argument filters, filtered opcodes are allowed\n"
"  companion-off        before Linux 7.0 nothing restricts the task without\n"
"                       the ring broker\n"
"  compat-soft          where not exact, nothing at all is enforced\n"
"  group-grew           a group named in the file gained opcodes after Linux\n"
"                       6.1 (or --since X.Y)\n"
"  dead-entry           entries name an opcode requestOps does not list: its\n"
"                       rules never apply (the request is denied first)\n"
"  effect-bypass        an effect the policy filters on one path is open on\n"
"                       another (a CONNECT destination rule with SENDMSG\n"
"                       allowed), on Linux 7.2 (or --kernel X.Y)\n"
"  fixed-file-bypass    FIXED_FILE is required, yet an allowed opcode names a\n"
"                       plain descriptor (SPLICE, TEE, EPOLL_CTL, WAITID, ...)\n"
"  flags-eq             an argument rule compares open.flags with == or !=,\n"
"                       which never holds (the kernel adds O_LARGEFILE)\n"
"  no-sync              writes allowed without FSYNC or SYNC_FILE_RANGE, where\n"
"                       they reach files: a sync elsewhere gets EACCES\n"
"  sqpoll-refused       learned from SQPOLL rings, which run (before Linux\n"
"                       7.0) and the agent refuse\n"
"\n"
"Suggestions, on stderr and not findings: the usual companions of allowed\n"
"opcodes that are not allowed (companion-missing: SHUTDOWN with SOCKET, ...).\n"
"\n"
"Options:\n"
"  --ignore LIST          do not report these ids\n"
"  --kernel X.Y           read minKernel conditions for Linux X.Y, and plan\n"
"                         the effect findings for it (default 7.2)\n"
"  --since X.Y            the oldest kernel the policy is meant for, for\n"
"                         group-grew (default 6.1)\n"
"  --mechanism M          plan the effect findings for task restrictions,\n"
"                         the ring broker, the companion or one ring\n"
"                         (default: the one run uses on that kernel)\n"
"  -h, --help             show this help\n"
"\n"
"The count of findings (and of suggestions) goes to stderr, also when it is 0.\n"
"\n"
"Exit status: 0 if there is no finding; 1 if there is one or more (or the\n"
"library failed); 2 on a usage error; 3 if POLICY cannot be read or is not\n"
"valid.\n";

static const char *const ids[] = {
	"uring-cmd",     "msg-ring",      "socket-unfiltered", "openat-unfiltered",
	"register-files", "default-allow", "fallback-open",     "companion-off",
	"compat-soft",   "group-grew",    "effect-bypass",     "fixed-file-bypass",
	"dead-entry",    "flags-eq",      "no-sync",           "sqpoll-refused",
	"companion-missing",
};
#define NR_IDS (sizeof(ids) / sizeof(ids[0]))

struct lint {
	const char *path;
	bool ignored[NR_IDS];
	int findings, suggestions;
};

static int id_index(const char *id)
{
	for (size_t i = 0; i < NR_IDS; i++)
		if (!strcmp(ids[i], id))
			return (int)i;
	return -1;
}

static int ignore_one(const char *item, void *arg)
{
	struct lint *l = arg;
	int i = id_index(item);

	if (i < 0)
		return cli_usage("--ignore: unknown finding id '%s'", item);
	l->ignored[i] = true;
	return 0;
}

static void finding(struct lint *l, const char *id, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void finding(struct lint *l, const char *id, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int i = id_index(id);

	if (i >= 0 && l->ignored[i])
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cli_put_escaped(stdout, l->path);
	printf(": %s: %s\n", id, msg);
	l->findings++;
}

/* The verdict for a context; -1 on error (reported). */
static int verdict(const struct iour_policy *p, const uint8_t *ctx, struct iour_request_verdict *d)
{
	int r;

	d->sz = sizeof(*d);
	r = iour_policy__decide(p, ctx, IOUR_CTX_SIZE, d);
	if (r) {
		cli_fail(r, "iour_policy__decide");
		return -1;
	}
	return d->verdict == IOUR_DENY ? 0 : 1;
}

static const char *why(const struct iour_request_verdict *d, char *buf, size_t len)
{
	switch (d->reason) {
	case IOUR_DECIDE_RULE:
		snprintf(buf, len, "rule %u of its rules", d->rule + 1);
		break;
	case IOUR_DECIDE_OPCODE_DEFAULT:
		snprintf(buf, len, "its default verdict");
		break;
	case IOUR_DECIDE_CLASSIC_ALLOW:
		snprintf(buf, len, "requestOps lists it");
		break;
	case IOUR_DECIDE_POLICY_DEFAULT:
		snprintf(buf, len, "defaultAction");
		break;
	case IOUR_DECIDE_PROGRAM:
		snprintf(buf, len, "its program");
		break;
	default:
		snprintf(buf, len, "reason %u", d->reason);
		break;
	}
	return buf;
}

static uint32_t op_num(const char *name)
{
	return (uint32_t)iour_opcode_from_name(name);
}

static int check_requests(struct lint *l, const struct iour_policy *p)
{
	struct iour_request_verdict d;
	uint8_t ctx[IOUR_CTX_SIZE];
	char w[64];
	int v;

	/* URING_CMD and MSG_RING have no payload: allowed at all is the risk. */
	(void)iour_ctx_generic(ctx, sizeof(ctx), op_num("URING_CMD"), 0, 0);
	if ((v = verdict(p, ctx, &d)) < 0)
		return CLI_FAIL;
	if (v)
		finding(l, "uring-cmd", "URING_CMD is allowed (%s): it passes commands to drivers "
			"(NVMe passthrough, socket options) that no argument filter can read",
			why(&d, w, sizeof(w)));
	(void)iour_ctx_generic(ctx, sizeof(ctx), op_num("MSG_RING"), 0, 0);
	if ((v = verdict(p, ctx, &d)) < 0)
		return CLI_FAIL;
	if (v)
		finding(l, "msg-ring", "MSG_RING is allowed (%s): it posts completions to other "
			"rings and can install files in their fixed-file tables (doc/security.md)",
			why(&d, w, sizeof(w)));
	/* A raw packet socket: what no ordinary network client needs. */
	(void)iour_ctx_generic(ctx, sizeof(ctx), op_num("SOCKET"), 0, 0);
	(void)iour_ctx_socket(ctx, sizeof(ctx), AF_PACKET, SOCK_RAW, 0);
	if ((v = verdict(p, ctx, &d)) < 0)
		return CLI_FAIL;
	if (v)
		finding(l, "socket-unfiltered", "SOCKET is allowed for AF_PACKET raw sockets (%s): "
			"add argument rules on socket.family and socket.type",
			why(&d, w, sizeof(w)));
	/* Creating and truncating a file for writing. */
	for (int k = 0; k < 2; k++) {
		uint32_t op = op_num(k ? "OPENAT2" : "OPENAT");

		(void)iour_ctx_generic(ctx, sizeof(ctx), op, 0, 0);
		(void)iour_ctx_open(ctx, sizeof(ctx), O_RDWR | O_CREAT | O_TRUNC, 0644, 0);
		if ((v = verdict(p, ctx, &d)) < 0)
			return CLI_FAIL;
		if (v)
			finding(l, "openat-unfiltered", "%s may create and truncate files (O_RDWR|"
				"O_CREAT|O_TRUNC is allowed: %s): add argument rules on open.flags",
				iour_opcode_name(op), why(&d, w, sizeof(w)));
	}
	return 0;
}

/* Register opcodes that change a ring's fixed-file table. */
static bool file_register_op(uint32_t reg)
{
	static const char *const names[] = { "REGISTER_FILES", "REGISTER_FILES_UPDATE",
					     "REGISTER_FILES2", "REGISTER_FILES_UPDATE2",
					     "REGISTER_FILE_ALLOC_RANGE" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (iour_register_op_from_name(names[i]) == (int)reg)
			return true;
	return false;
}

/*
 * The classic part as Linux 6.18 enforces it on a ring (the representative
 * kernel of the QUERY level, the newest with coupled gates: every register
 * opcode the set allows is listed).  A ring "meant to be
 * sealed" requires FIXED_FILE; registering files then reopens it.
 */
static int check_sealed(struct lint *l, const struct iour_policy *p)
{
	struct iour_plan_opts po = { .sz = sizeof(po) };
	struct iour_ruleset *rs = NULL;
	struct iour_features f;
	uint32_t required = 0;
	char regs[256] = "";
	int r;

	f.sz = sizeof(f);
	(void)iour_kernel_describe((uint32_t)iour_level_kernel(IOUR_LEVEL_QUERY), &f);
	po.features = &f;
	r = cli_ring_ruleset(p, &po, &rs);
	if (r)
		return cli_fail(r, "planning the policy for a ring");
	if (!rs)
		return 0; /* no classic part: nothing is required */
	(void)iour_ruleset__sqe_flags(rs, NULL, &required);
	for (uint32_t reg = 0; (required & 1U) /* IOSQE_FIXED_FILE */ && reg < IOUR_REGISTER__COUNT;
	     reg++) {
		size_t used = strlen(regs);

		if (iour_ruleset__register_op_allowed(rs, reg) == 1 && file_register_op(reg))
			snprintf(regs + used, sizeof(regs) - used, "%s%s", used ? ", " : "",
				 iour_register_op_name(reg));
	}
	iour_ruleset__free(rs);
	if (regs[0])
		finding(l, "register-files", "the policy requires FIXED_FILE (a sealed file table) "
			"but allows %s, which change the table", regs);
	return 0;
}

/*
 * Effects (doc/security.md 2.1): plan the policy as written for Linux
 * `kver` and read the report's effect notes.  An effect filtered on one
 * path and open on another is not restricted as the filter suggests; a
 * required FIXED_FILE with an opcode that names plain descriptors does not
 * keep requests to registered files.
 */
static int check_effects(struct lint *l, const struct iour_policy *p, uint32_t kver,
			 enum cli_mech mech)
{
	struct iour_plan_opts po = { .sz = sizeof(po) };
	struct iour_decision d = { .sz = sizeof(d) };
	struct iour_policy *dup = NULL;
	struct iour_plan *plan = NULL;
	const struct iour_report *rep;
	struct iour_features f;
	enum cli_mech used = CLI_MECH_AUTO;
	char kv[48];
	int n, r;

	f.sz = sizeof(f);
	(void)iour_kernel_describe(kver, &f);
	cli_kver_str(kver, kv, sizeof(kv));
	po.features = &f;
	r = iour_policy__dup(p, &dup);
	if (!r)
		r = cli_plan_mech(dup, &po, mech, &used, &plan);
	iour_policy__free(dup);
	if (r > 0)
		return r;
	if (r == -EACCES || r == -EPERM || r == -EBUSY)
		return 0; /* no plan for this kernel: nothing it would enforce */
	if (r)
		return cli_fail(r, "planning the policy for Linux %s", kv);
	if (used != CLI_MECH_TASK) {
		size_t used_len = strlen(kv);

		snprintf(kv + used_len, sizeof(kv) - used_len, " (mechanism %s)",
			 cli_mech_name(used));
	}
	rep = iour_plan__report(plan);
	n = iour_report__decision_cnt(rep);
	for (int i = 0; i < n; i++) {
		const char *state, *rest;
		char key[32];
		size_t sl;

		if (iour_report__decision(rep, (size_t)i, &d))
			continue;
		if (d.kind == IOUR_DECISION_LOOSENED && d.reason == IOUR_REASON_FIXED_FILES)
			finding(l, "fixed-file-bypass", "on Linux %s: %s", kv, d.text);
		if (d.kind == IOUR_DECISION_NOTE && d.reason == IOUR_REASON_EFFECT_OPEN &&
		    !cli_effect_split(d.text, key, sizeof(key), &state, &sl, &rest) &&
		    strstr(rest, "filtered: "))
			finding(l, "effect-bypass", "on Linux %s, %s is filtered on one path and "
				"open on another: %s", kv, key, rest);
	}
	iour_plan__free(plan);
	return 0;
}

static void check_attrs(struct lint *l, const struct iour_policy *p)
{
	uint32_t v;

	if (!iour_policy__get_attr(p, IOUR_POLICY_ATTR_DEFAULT, &v) &&
	    v == IOUR_POLICY_DEFAULT_ALLOW)
		finding(l, "default-allow", "defaultAction allows every opcode the policy does not "
			"name, including those future kernels add");
	if (!iour_policy__get_attr(p, IOUR_POLICY_ATTR_NO_FILTER_FALLBACK, &v) &&
	    v == IOUR_POLICY_FALLBACK_OPEN)
		finding(l, "fallback-open", "where the kernel cannot filter arguments (before Linux "
			"7.0), opcodes with argument rules are allowed whole");
	if (!iour_policy__get_attr(p, IOUR_POLICY_ATTR_COMPANION, &v) &&
	    v == IOUR_POLICY_COMPANION_NONE)
		finding(l, "companion-off", "without the seccomp companion, nothing restricts the "
			"task on kernels before Linux 7.0 where no ring broker serves it (run "
			"--broker=off, iour_plan__apply_task())");
	if (!iour_policy__get_attr(p, IOUR_POLICY_ATTR_COMPAT, &v) && v == IOUR_POLICY_COMPAT_SOFT)
		finding(l, "compat-soft", "compatibility soft: on a kernel that cannot enforce the "
			"policy exactly, nothing at all is enforced");
}

/*
 * Opcodes with argument rules (entries or programs) that the request
 * allow-list (requestOps) does not list: the classic gate denies them
 * before any rule runs, so the rules are dead (an allow rule there reads
 * as if it allowed something).
 */
static int check_dead_entries(struct lint *l, const struct iour_policy *p)
{
	struct iour_request_verdict d;
	uint8_t ctx[IOUR_CTX_SIZE];
	char dead[512] = "";
	int n = 0;

	for (uint32_t op = 0; op < IOUR_OP__COUNT; op++) {
		size_t used = strlen(dead);

		if (iour_policy__prog_cnt(p, op) <= 0 ||
		    iour_ctx_generic(ctx, sizeof(ctx), op, 0, 0))
			continue;
		if (verdict(p, ctx, &d) < 0)
			return CLI_FAIL;
		if (d.reason != IOUR_DECIDE_CLASSIC_GATE)
			continue;
		snprintf(dead + used, sizeof(dead) - used, "%s%s", used ? ", " : "",
			 iour_opcode_name(op));
		n++;
	}
	if (n)
		finding(l, "dead-entry", "entries name %s, which requestOps does not list: %s never "
			"appl%s (requestOps denies the request first); list %s in requestOps or drop "
			"the entr%s", dead, n == 1 ? "its rules" : "their rules", "y",
			n == 1 ? "it" : "them", n == 1 ? "y" : "ies");
	return 0;
}

/*
 * Whether the policy allows request opcode @op at all: for a plain
 * request, or for some request (argument rules none of which held for the
 * plain one, or SQE flags it must carry).  -1 on error (reported).
 */
static int allows(const struct iour_policy *p, uint32_t op)
{
	struct iour_request_verdict d;
	uint8_t ctx[IOUR_CTX_SIZE];
	int v;

	if (iour_ctx_generic(ctx, sizeof(ctx), op, 0, 0))
		return 0;
	if ((v = verdict(p, ctx, &d)) != 0)
		return v;
	return d.reason == IOUR_DECIDE_OPCODE_DEFAULT || d.reason == IOUR_DECIDE_SQE_FLAGS;
}

/* "file-write" paths: the policy lets io_uring open a file for writing
 * (OPENAT or OPENAT2 with O_WRONLY|O_CREAT). */
static int opens_for_writing(const struct iour_policy *p)
{
	struct iour_request_verdict d;
	uint8_t ctx[IOUR_CTX_SIZE];
	int v = 0;

	for (int k = 0; k < 2 && v == 0; k++) {
		(void)iour_ctx_generic(ctx, sizeof(ctx), op_num(k ? "OPENAT2" : "OPENAT"), 0, 0);
		(void)iour_ctx_open(ctx, sizeof(ctx), O_WRONLY | O_CREAT, 0644, 0);
		v = verdict(p, ctx, &d);
	}
	return v;
}

/*
 * What learn warns of and suggests (advice.h), for any policy: writes
 * without a sync where they reach files (a learned policy, whose comment
 * carries learn's NO SYNC warning, or one that opens files for writing
 * through io_uring); SQPOLL rings a learned policy's comment reports
 * (doc/cli.md, "lint": policies have no field for setup flags, the comment
 * learn wrote and merge keeps is the record); the usual companions not
 * allowed, as suggestions on stderr.
 */
static int check_advice(struct lint *l, const struct iour_policy *p, const char *text,
			uint32_t kver)
{
	bool ops[ADVICE_NOPS] = { false };
	struct advice_pair pr[16];
	char writes[128], sq[512];
	int v, wf;
	size_t n;

	for (uint32_t op = 0; op < IOUR_OP__COUNT && op < ADVICE_NOPS; op++) {
		if ((v = allows(p, op)) < 0)
			return CLI_FAIL;
		ops[op] = v;
	}
	if (advice_no_sync(ops, writes, sizeof(writes))) {
		if ((wf = opens_for_writing(p)) < 0)
			return CLI_FAIL;
		if (wf || (text && strstr(text, "WARNING, NO SYNC")))
			finding(l, "no-sync", "writes are allowed (%s) but no sync opcode (FSYNC, "
				"SYNC_FILE_RANGE)%s: a program that syncs gets EACCES there and may "
				"lose data without an error; allow FSYNC if it syncs", writes,
				wf ? ", and files may be opened for writing" :
				     " (learn saw it write)");
	}
	if (text && strstr(text, "WARNING, SQPOLL") && advice_sqpoll(kver, sq, sizeof(sq)))
		finding(l, "sqpoll-refused", "the program was learned using SQPOLL rings (the "
			"comment says so); %s", sq);
	n = advice_companions(ops, kver, pr, sizeof(pr) / sizeof(pr[0]));
	for (size_t i = 0; i < n && !l->ignored[id_index("companion-missing")]; i++) {
		fprintf(stderr, "%s lint: suggestion: ", CLI_PROG);
		cli_put_escaped(stderr, l->path);
		fprintf(stderr, ": companion-missing: %s is usual with %s (%s) and not allowed: "
			"allow it if the program needs it\n", iour_opcode_name(pr[i].missing),
			iour_opcode_name(pr[i].seen), pr[i].why);
		l->suggestions++;
	}
	return 0;
}

/*
 * Argument rules that cannot mean what they say, found by the rule
 * language's own checks (lib/rules/rules_parse.c, what `filter` warns
 * about): open.flags compared with == or != never holds or always does,
 * since the kernel adds O_LARGEFILE (doc/kernel.md 4.3).
 */
static void check_arg_rules(struct lint *l, const char *text)
{
	json_t *doc = text ? json_loads(text, 0, NULL) : NULL, *e, *a, *names;
	size_t i, k;

	json_array_foreach(json_object_get(doc, "entries"), i, e)
	{
		int op = -1;

		names = json_object_get(e, "names");
		for (k = 0; k < json_array_size(names) && op < 0; k++) {
			const char *n = json_string_value(json_array_get(names, k));

			op = n ? iour_opcode_from_name(n) : -1;
		}
		json_array_foreach(json_object_get(e, "args"), k, a)
		{
			const char *field = json_string_value(json_object_get(a, "field"));
			const char *cop = json_string_value(json_object_get(a, "op"));
			json_t *val = json_object_get(a, "value");
			struct expr_rule rule = { .n = 0 };
			struct expr_error err;
			char rt[256];

			if (!field || !cop || !val || (strcmp(cop, "==") && strcmp(cop, "!=")))
				continue;
			if (json_is_string(val))
				snprintf(rt, sizeof(rt), "%s %s %s", field, cop, json_string_value(val));
			else if (json_is_integer(val))
				snprintf(rt, sizeof(rt), "%s %s %lld", field, cop,
					 (long long)json_integer_value(val));
			else
				continue;
			if (expr_parse_rule(rt, op >= 0 ? (uint32_t)op : op_num("OPENAT"), &rule,
					    &err))
				continue;
			if (rule.warning)
				finding(l, "flags-eq", "entry %zu: '%s': %s", i + 1, rt, rule.warning);
			expr_rule_free(&rule);
		}
	}
	json_decref(doc);
}

/* The file's text, to see which groups it names; NULL for stdin. */
static char *slurp(const char *path)
{
	FILE *f;
	char *buf;
	long n;

	if (!strcmp(path, "-") || !(f = fopen(path, "r")))
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(buf = malloc((size_t)n + 1))) {
		fclose(f);
		return NULL;
	}
	buf[fread(buf, 1, (size_t)n, f)] = '\0';
	fclose(f);
	return buf;
}

/*
 * Groups the file names (as the string "@name") whose opcodes came with
 * different kernels: on an older kernel the group means fewer requests.
 */
static void check_groups(struct lint *l, const char *text, uint32_t base)
{
	int cnt = iour_group_count();

	for (int g = 0; g < cnt; g++) {
		struct iour_group_info gi = { .sz = sizeof(gi) };
		uint32_t ops[256], hi = 0;
		char quoted[80], a[16], b[16], newer[256] = "";
		const char *s;
		bool named = false;
		int n;

		if (iour_group_get((size_t)g, &gi))
			continue;
		snprintf(quoted, sizeof(quoted), "\"%s\"", gi.name);
		for (s = text; (s = strchr(s, '"')); s++)
			if (!strncasecmp(s, quoted, strlen(quoted))) {
				named = true;
				break;
			}
		if (!named)
			continue;
		n = iour_group_opcodes((size_t)g, 0, ops, 256);
		for (int i = 0; i < n; i++) {
			uint32_t since = (uint32_t)iour_opcode_since(ops[i]);
			size_t used = strlen(newer);

			if (since <= base)
				continue;
			hi = since > hi ? since : hi;
			snprintf(newer + used, sizeof(newer) - used, "%s%s", used ? ", " : "",
				 iour_opcode_name(ops[i]));
		}
		if (!newer[0])
			continue;
		cli_kver_str(base, a, sizeof(a));
		cli_kver_str(hi, b, sizeof(b));
		finding(l, "group-grew", "%s grew after Linux %s (up to %s: %s): on Linux %s it "
			"means fewer requests; check that each is meant", gi.name, a, b, newer, a);
	}
}

int cmd_lint(int argc, char **argv)
{
	enum { O_IGNORE = 256, O_KERNEL, O_SINCE, O_MECH };
	static const struct option lo[] = {
		{ "mechanism", required_argument, NULL, O_MECH },
		{ "ignore", required_argument, NULL, O_IGNORE },
		{ "since", required_argument, NULL, O_SINCE },
		{ "kernel", required_argument, NULL, O_KERNEL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct lint l = { 0 };
	struct iour_policy *pol = NULL;
	/* --since: by default the representative kernel of the RING level,
	 * Linux 6.1 (the help text names it) */
	uint32_t kver = 0, since = (uint32_t)iour_level_kernel(IOUR_LEVEL_RING);
	const uint32_t newest = (uint32_t)iour_kernel_generation(IOUR_KGEN_NEWEST);
	enum cli_mech mech = CLI_MECH_AUTO;
	char *text;
	int c, rc;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case O_IGNORE:
			rc = cli_each_item(optarg, "--ignore", ignore_one, &l);
			if (rc)
				return rc;
			break;
		case O_KERNEL:
			if (cli_parse_kver(optarg, &kver))
				return cli_usage("--kernel: '%s' is not a kernel version X.Y", optarg);
			break;
		case O_SINCE:
			if (cli_parse_kver(optarg, &since))
				return cli_usage("--since: '%s' is not a kernel version X.Y", optarg);
			break;
		case O_MECH:
			if (cli_mech_parse(optarg, &mech))
				return CLI_USAGE;
			break;
		case 'h':
			return cli_help(cli_help_lint);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (cli_policy_operand(argc, argv, &l.path))
		return CLI_USAGE;
	rc = cli_policy_load(l.path, kver, &pol);
	if (rc)
		return rc;
	rc = check_requests(&l, pol);
	if (!rc)
		rc = check_sealed(&l, pol);
	if (!rc)
		rc = check_dead_entries(&l, pol);
	if (!rc)
		rc = check_effects(&l, pol, kver ? kver : newest, mech);
	if (!rc) {
		check_attrs(&l, pol);
		text = slurp(l.path);
		if (text) {
			check_groups(&l, text, since);
			check_arg_rules(&l, text);
		}
		rc = check_advice(&l, pol, text, kver ? kver : newest);
		free(text);
	}
	iour_policy__free(pol);
	if (rc)
		return rc;
	fprintf(stderr, "%s lint: %d finding%s", CLI_PROG, l.findings, l.findings == 1 ? "" : "s");
	if (l.suggestions)
		fprintf(stderr, ", %d suggestion%s", l.suggestions, l.suggestions == 1 ? "" : "s");
	fputc('\n', stderr);
	return l.findings ? CLI_FAIL : CLI_OK;
}
