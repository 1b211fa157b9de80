/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict probe: what the running kernel supports (iour_probe());
 * iour-restrict names: the library's tables of opcodes and flags.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>

#include "core/cli.h"

const char cli_help_probe[] =
"Usage: iour-restrict probe [--json] [--no-cache] [--min-level N]\n"
"\n"
"Show what the running kernel supports for this process: the feature level\n"
"(0 to 5) and what it means, whether io_uring is usable, the opcode limits,\n"
"the gate semantics of restriction sets, and the Linux 7.x features (task\n"
"restrictions, BPF filters and their payloads).  The probe runs in a forked\n"
"child and changes nothing.  IOUR_FEATURE_LEVEL=N in the environment makes\n"
"the library act as if the kernel had only level N.\n"
"\n"
"Options:\n"
"  --json          print one JSON object instead of text\n"
"  --no-cache      probe the kernel now, bypassing the library's cache\n"
"  --min-level N   exit 1 unless the effective level is at least N\n"
"  -h, --help      show this help\n"
"\n"
"Exit status: 0 on success; 1 if the probe failed or the level is below\n"
"--min-level; 2 on a usage error.\n";

const char cli_help_names[] =
"Usage: iour-restrict names [ops|register|flags|all]... [--kernel X.Y]\n"
"\n"
"Print the library's name tables: request opcodes (IORING_OP_*), register\n"
"opcodes (IORING_REGISTER_*) and SQE flags (IOSQE_*), each with its number\n"
"and the kernel version that added it.  Without a table name, all three.\n"
"Names are accepted by every option of this tool in the short form shown,\n"
"with the kernel prefix, or as numbers, in any case.\n"
"\n"
"Options:\n"
"  --kernel X.Y    only what Linux X.Y has (from the tables, not the running\n"
"                  kernel: see 'iour-restrict probe' for that)\n"
"  -h, --help      show this help\n"
"\n"
"Exit status: 0 on success; 2 on a usage error.\n";

/* ---- probe */

static const char *avail_token(uint32_t a)
{
	switch (a) {
	case IOUR_AVAIL_NO:
		return "no";
	case IOUR_AVAIL_YES:
		return "yes";
	case IOUR_AVAIL_NO_PRIV:
		return "no_privilege";
	case IOUR_AVAIL_RESTRICTED:
		return "restricted";
	default:
		return "unknown";
	}
}

static const char *limits_token(uint32_t s)
{
	switch (s) {
	case IOUR_LIMITS_QUERY:
		return "query";
	case IOUR_LIMITS_PROBE:
		return "probe";
	case IOUR_LIMITS_TABLE:
		return "table";
	default:
		return "none";
	}
}

/* A minimal JSON writer: one value per line, two-space indentation. */
struct json {
	int depth;
	int need_comma;
};

static void j_sep(struct json *j)
{
	fputs(j->need_comma ? ",\n" : "\n", stdout);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", stdout);
	j->need_comma = 1;
}

static void j_str_raw(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void j_key(struct json *j, const char *k)
{
	j_sep(j);
	j_str_raw(k);
	fputs(": ", stdout);
}

static void j_open(struct json *j, const char *k, char brace)
{
	if (k)
		j_key(j, k);
	else if (j->depth)
		j_sep(j);
	putchar(brace);
	j->depth++;
	j->need_comma = 0;
}

static void j_close(struct json *j, char brace)
{
	j->depth--;
	if (j->need_comma) {
		putchar('\n');
		for (int i = 0; i < j->depth; i++)
			fputs("  ", stdout);
	}
	putchar(brace);
	j->need_comma = 1;
}

static void j_int(struct json *j, const char *k, long long v)
{
	j_key(j, k);
	printf("%lld", v);
}

static void j_u64(struct json *j, const char *k, unsigned long long v)
{
	j_key(j, k);
	printf("%llu", v);
}

static void j_bool(struct json *j, const char *k, int v)
{
	j_key(j, k);
	fputs(v ? "true" : "false", stdout);
}

static void j_str(struct json *j, const char *k, const char *v)
{
	j_key(j, k);
	j_str_raw(v);
}

/* A payload's opcode as the probe prints it: "SOCKET" (the request schema,
 * include/iouring_restrict/schema.h, lists the payloads). */
static const char *payload_name(uint32_t op, char *buf, size_t len)
{
	if (iour_opcode_name(op))
		return iour_opcode_name(op);
	snprintf(buf, len, "%u", op);
	return buf;
}

static int op_supported(const struct iour_features *f, uint32_t op)
{
	return op < 256 && ((f->supported_ops[op / 64] >> (op % 64)) & 1);
}

static void print_json(const struct iour_features *f, const char *release)
{
	struct json j = { 0, 0 };
	char name[32];

	j_open(&j, NULL, '{');
	j_str(&j, "library_version", iour_version_string());
	j_str(&j, "kernel_release", release);
	j_int(&j, "level", f->level);
	j_str(&j, "level_description", iour_feature_level_str((int)f->level));
	j_int(&j, "kernel_level", f->kernel_level);
	j_str(&j, "kernel_level_description", iour_feature_level_str((int)f->kernel_level));
	j_open(&j, "flags", '{');
	j_bool(&j, "forced", !!(f->flags & IOUR_FEATURES_FORCED));
	j_bool(&j, "force_ignored", !!(f->flags & IOUR_FEATURES_FORCE_IGNORED));
	j_bool(&j, "mismatch", !!(f->flags & IOUR_FEATURES_MISMATCH));
	j_bool(&j, "child_died", !!(f->flags & IOUR_FEATURES_CHILD_DIED));
	j_bool(&j, "socket_flags_hidden", !!(f->flags & IOUR_FEATURES_SOCKET_FLAGS_HIDDEN));
	j_bool(&j, "task_set_gates_filters",
	       !!(f->flags & IOUR_FEATURES_TASK_SET_GATES_FILTERS));
	j_close(&j, '}');

	j_str(&j, "io_uring", avail_token(f->io_uring));
	j_int(&j, "setup_err", f->setup_err);
	j_str(&j, "setup_err_name", iour_errname(f->setup_err));
	j_int(&j, "sysctl_disabled", f->sysctl_disabled);
	j_int(&j, "sysctl_group", f->sysctl_group);
	j_int(&j, "seccomp_mode", f->seccomp_mode);
	j_int(&j, "no_new_privs", f->no_new_privs);

	j_str(&j, "ring_restrictions", avail_token(f->ring_restrictions));
	j_int(&j, "r_disabled_err", f->r_disabled_err);
	j_int(&j, "ring_register_err", f->ring_register_err);
	j_int(&j, "enable_rings_err", f->enable_rings_err);
	j_u64(&j, "op_last", f->op_last);
	j_u64(&j, "reg_last", f->reg_last);
	j_str(&j, "limits_source", limits_token(f->limits_source));
	j_bool(&j, "split_gates", f->split_gates);

	j_str(&j, "query", avail_token(f->query));
	j_int(&j, "query_err", f->query_err);
	j_u64(&j, "nr_query_opcodes", f->nr_query_opcodes);
	j_u64(&j, "feature_flags", f->feature_flags);
	j_u64(&j, "setup_flags", f->setup_flags);
	j_u64(&j, "enter_flags", f->enter_flags);
	j_u64(&j, "sqe_flags", f->sqe_flags);
	j_str(&j, "probe", avail_token(f->probe));
	j_int(&j, "probe_err", f->probe_err);
	j_u64(&j, "probe_last_op", f->probe_last_op);
	j_u64(&j, "nr_supported_ops", f->nr_supported_ops);
	j_open(&j, "supported_ops", '[');
	for (uint32_t op = 0; op < 256; op++) {
		if (!op_supported(f, op))
			continue;
		j_sep(&j);
		if (iour_opcode_name(op))
			j_str_raw(iour_opcode_name(op));
		else {
			snprintf(name, sizeof(name), "%u", op);
			j_str_raw(name);
		}
	}
	j_close(&j, ']');
	j_str(&j, "blind_register", avail_token(f->blind_register));

	j_str(&j, "task_restrictions", avail_token(f->task_restrictions));
	j_int(&j, "task_restrictions_err", f->task_restrictions_err);
	j_str(&j, "bpf_ring", avail_token(f->bpf_ring));
	j_int(&j, "bpf_ring_err", f->bpf_ring_err);
	j_str(&j, "bpf_task", avail_token(f->bpf_task));
	j_int(&j, "bpf_task_err", f->bpf_task_err);
	j_open(&j, "pdu_size", '{');
	for (int i = 0; i < iour_payload_count(); i++) {
		struct iour_payload_info pl = { .sz = sizeof(pl) };

		if (iour_payload_get((size_t)i, &pl) == 0)
			j_u64(&j, payload_name(pl.opcode, name, sizeof(name)),
			      f->pdu_size[pl.opcode & 0xff]);
	}
	j_close(&j, '}');
	j_int(&j, "child_signal", f->child_signal);
	j_close(&j, '}');
	putchar('\n');
}

/* What each level lets a program do, for the text output. */
static const char *level_use[] = {
	"nothing: io_uring_setup() fails for this process",
	"io_uring works, but rings cannot be restricted",
	"create rings restricted to listed opcodes and flags (iour_ring_create)",
	"the same, with the kernel's limits read through IORING_REGISTER_QUERY",
	"restrict the whole task and filter SOCKET/OPENAT/OPENAT2 arguments",
	"also filter CONNECT destinations (family, port, address)",
};

static void print_text(const struct iour_features *f, const char *release)
{
	printf("kernel            %s\n", release);
	printf("feature level     %u: %s\n", f->level, iour_feature_level_str((int)f->level));
	if (f->flags & IOUR_FEATURES_FORCED)
		printf("                  (forced by IOUR_FEATURE_LEVEL; the kernel has level %u)\n",
		       f->kernel_level);
	if (f->flags & IOUR_FEATURES_FORCE_IGNORED)
		printf("                  (IOUR_FEATURE_LEVEL ignored: invalid or not lower)\n");
	for (int l = 0; l <= IOUR_LEVEL_MAX; l++)
		printf("  %s %d  %s\n", l == (int)f->level ? "=>" : "  ", l,
		       iour_feature_level_str(l));
	printf("what it allows    %s\n",
	       f->level <= IOUR_LEVEL_MAX ? level_use[f->level] : "unknown");
	if (f->level >= IOUR_LEVEL_IO_URING && f->level < IOUR_LEVEL_TASK_BPF)
		printf("                  (other code can still create unrestricted rings; "
		       "'iour-restrict exec' stops that)\n");
	printf("\n");
	printf("io_uring          %s (io_uring_setup(1, NULL): %s)\n", iour_avail_str(f->io_uring),
	       iour_errname(f->setup_err));
	printf("sysctl            kernel.io_uring_disabled=%d kernel.io_uring_group=%d\n",
	       f->sysctl_disabled, f->sysctl_group);
	printf("this process      seccomp mode %d, no_new_privs %d\n", f->seccomp_mode,
	       f->no_new_privs);
	printf("ring restrictions %s\n", iour_avail_str(f->ring_restrictions));
	printf("opcode limits     %u request opcodes, %u register opcodes (from %s)\n", f->op_last,
	       f->reg_last, limits_token(f->limits_source));
	printf("supported ops     %u (IORING_REGISTER_PROBE: %s)\n", f->nr_supported_ops,
	       iour_avail_str(f->probe));
	printf("gate semantics    %s\n",
	       f->split_gates ? "split (7.0+): each side is gated only if it has entries"
			      : "coupled (5.10-6.19): any registered set gates both sides");
	printf("QUERY             %s\n", iour_avail_str(f->query));
	printf("blind register    %s\n", iour_avail_str(f->blind_register));
	printf("task restrictions %s\n", iour_avail_str(f->task_restrictions));
	printf("BPF filters       ring path %s, task path %s\n", iour_avail_str(f->bpf_ring),
	       iour_avail_str(f->bpf_task));
	printf("filter payloads  ");
	for (int i = 0; i < iour_payload_count(); i++) {
		struct iour_payload_info pl = { .sz = sizeof(pl) };
		char name[16];

		if (iour_payload_get((size_t)i, &pl) == 0)
			printf("%s %s %u", i ? "," : "", payload_name(pl.opcode, name, sizeof(name)),
			       f->pdu_size[pl.opcode & 0xff]);
	}
	printf(" bytes\n");
	printf("socket flags      %s\n",
	       f->flags & IOUR_FEATURES_SOCKET_FLAGS_HIDDEN
		       ? "hidden: the SOCKET payload's type has no NONBLOCK/CLOEXEC (rules on "
			 "them use the fallback)"
		       : "visible (or no SOCKET filter to look at)");
	printf("task set gates    %s\n",
	       f->flags & IOUR_FEATURES_TASK_SET_GATES_FILTERS
		       ? "filters too: the task set's register list gates fd -1 filter "
			 "registrations (plans list BPF_FILTER)"
		       : "no (task filters can be registered after a task set)");
	if (f->flags & IOUR_FEATURES_MISMATCH)
		printf("warning           some answers contradicted the kernel interface "
		       "(reported unknown)\n");
	if (f->flags & IOUR_FEATURES_CHILD_DIED)
		printf("warning           the probe child was killed by signal %d\n",
		       f->child_signal);
}

int cmd_probe(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "no-cache", no_argument, NULL, 'n' },
		{ "min-level", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct iour_features f = { .sz = sizeof(f) };
	IOUR_OPTS(iour_probe_opts, po);
	int c, json = 0, min_level = -1, r;
	struct utsname u;
	uint64_t v;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'n':
			po.flags |= IOUR_PROBE_NO_CACHE;
			break;
		case 'm':
			if (cli_parse_u64(optarg, &v) || v > IOUR_LEVEL_MAX)
				return cli_usage("--min-level: '%s' is not a level (0 to %d)",
						 optarg, IOUR_LEVEL_MAX);
			min_level = (int)v;
			break;
		case 'h':
			return cli_help(cli_help_probe);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);

	r = iour_probe(&po, &f);
	if (r)
		return cli_fail(r, "iour_probe");
	if (uname(&u))
		strcpy(u.release, "unknown");
	if (json)
		print_json(&f, u.release);
	else
		print_text(&f, u.release);
	if (fflush(stdout))
		return CLI_FAIL;
	if (min_level >= 0 && (int)f.level < min_level) {
		cli_msg("feature level %u is below the required %d", f.level, min_level);
		return CLI_FAIL;
	}
	return CLI_OK;
}

/* ---- names */

enum { T_OPS = 1, T_REG = 2, T_FLAGS = 4 };

static void names_ops(uint32_t kver, int limited)
{
	char since[16], kv[16];
	uint32_t ops[IOUR_OP__COUNT];
	int n;

	n = limited ? iour_opcodes_up_to(kver, ops, IOUR_OP__COUNT) : IOUR_OP__COUNT;
	if (limited) {
		cli_kver_str(kver, kv, sizeof(kv));
		printf("# request opcodes (IORING_OP_*) of Linux %s: %d\n", kv, n);
	} else {
		printf("# request opcodes (IORING_OP_*): %d\n", n);
	}
	printf("#  NUM  NAME                 SINCE\n");
	for (int i = 0; i < n; i++) {
		uint32_t op = limited ? ops[i] : (uint32_t)i;

		cli_kver_str((uint32_t)iour_opcode_since(op), since, sizeof(since));
		printf("   %3u  %-20s %s\n", op, iour_opcode_name(op), since);
	}
}

static void names_register(uint32_t kver, int limited)
{
	char since[16], kv[16];
	uint32_t ops[IOUR_REGISTER__COUNT];
	int n;

	n = limited ? iour_register_ops_up_to(kver, ops, IOUR_REGISTER__COUNT)
		    : IOUR_REGISTER__COUNT;
	if (limited) {
		cli_kver_str(kver, kv, sizeof(kv));
		printf("# register opcodes (IORING_REGISTER_*) of Linux %s: %d "
		       "(IORING_REGISTER_LAST %d)\n", kv, n, iour_register_op_last(kver));
	} else {
		printf("# register opcodes (IORING_REGISTER_*): %d\n", n);
	}
	printf("#  NUM  NAME                         SINCE\n");
	for (int i = 0; i < n; i++) {
		uint32_t op = limited ? ops[i] : (uint32_t)i;

		cli_kver_str((uint32_t)iour_register_op_since(op), since, sizeof(since));
		printf("   %3u  %-28s %s\n", op, iour_register_op_name(op), since);
	}
}

static void names_flags(uint32_t kver, int limited)
{
	uint32_t mask = limited ? (uint32_t)iour_sqe_flags_up_to(kver) : IOUR_SQE__VALID;
	char since[16], kv[16];
	int n = __builtin_popcount(mask);

	if (limited) {
		cli_kver_str(kver, kv, sizeof(kv));
		printf("# SQE flags (IOSQE_*) of Linux %s: %d (mask 0x%02x)\n", kv, n, mask);
	} else {
		printf("# SQE flags (IOSQE_*): %d (mask 0x%02x)\n", n, mask);
	}
	printf("#  BIT  NAME                 SINCE\n");
	for (uint32_t bit = 1; bit <= IOUR_SQE__VALID; bit <<= 1) {
		if (!(mask & bit))
			continue;
		cli_kver_str((uint32_t)iour_sqe_flag_since(bit), since, sizeof(since));
		printf("  0x%02x  %-20s %s\n", bit, iour_sqe_flag_name(bit), since);
	}
}

int cmd_names(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, tables = 0, limited = 0, first = 1;
	uint32_t kver = 0;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'k':
			if (cli_parse_kver(optarg, &kver))
				return cli_usage("--kernel: '%s' is not a kernel version X.Y",
						 optarg);
			limited = 1;
			break;
		case 'h':
			return cli_help(cli_help_names);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	for (int i = optind; i < argc; i++) {
		if (!strcasecmp(argv[i], "ops") || !strcasecmp(argv[i], "opcodes"))
			tables |= T_OPS;
		else if (!strcasecmp(argv[i], "register"))
			tables |= T_REG;
		else if (!strcasecmp(argv[i], "flags"))
			tables |= T_FLAGS;
		else if (!strcasecmp(argv[i], "all"))
			tables |= T_OPS | T_REG | T_FLAGS;
		else
			return cli_usage("unknown table '%s' (ops, register, flags or all)",
					 argv[i]);
	}
	if (!tables)
		tables = T_OPS | T_REG | T_FLAGS;
	if (tables & T_OPS) {
		names_ops(kver, limited);
		first = 0;
	}
	if (tables & T_REG) {
		if (!first)
			putchar('\n');
		names_register(kver, limited);
		first = 0;
	}
	if (tables & T_FLAGS) {
		if (!first)
			putchar('\n');
		names_flags(kver, limited);
	}
	return fflush(stdout) ? CLI_FAIL : CLI_OK;
}
