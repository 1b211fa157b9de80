/* SPDX-License-Identifier: MIT */
/*
 * Shared pieces of the iour-restrict command-line tool: exit codes, error
 * and usage reporting, small parsers for numbers, kernel versions and
 * comma-separated lists, and the entry points of the subcommands.
 *
 * The tool uses the public API of libiouring-restrict only.
 */
#ifndef IOUR_CLI_H
#define IOUR_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <iouring_restrict/iouring_restrict.h>

/* Exit codes of every subcommand (exec passes on the command's own). */
#define CLI_OK 0    /* success; the check passed */
#define CLI_FAIL 1  /* a check failed, a restriction is not enforced, or a
		     * library call failed at run time */
#define CLI_USAGE 2 /* the command line is wrong; nothing was done */
#define CLI_POLICY 3 /* the policy file cannot be read or is not valid;
		      * nothing was done (run, compile, check, lint) */

#define CLI_PROG "iour-restrict"

/* The subcommand being run, for messages ("iour-restrict filter: ..."). */
extern const char *cli_cmd;

/*
 * cli_usage() reports a command-line error on stderr, with a pointer to
 * the subcommand's --help, and returns CLI_USAGE.
 */
int cli_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The one POLICY operand left after getopt (argv[optind]) in @path;
 * CLI_OK, or CLI_USAGE (reported) when there is none or more than one. */
int cli_policy_operand(int argc, char **argv, const char **path);

/*
 * cli_fail() reports a failed library call: the message, then
 * iour_strerror() of @err and its symbolic name.  Returns CLI_FAIL.
 */
int cli_fail(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* cli_msg() prints "iour-restrict CMD: message" on stderr. */
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The text of iour_strerror() for @err, in a static buffer. */
const char *cli_strerror(int err);

/* Writes s with every control byte (below 0x20, and 0x7f) as \xNN, so that
 * text from the command line cannot drive the terminal. */
void cli_put_escaped(FILE *f, const char *s);

/* How many columns the first n bytes of s take once escaped. */
size_t cli_escaped_len(const char *s, size_t n);

/* Full-string unsigned number, decimal, 0x hex or 0 octal; 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *out);

/* "X.Y" or "X.Y.Z" as IOUR_KVER(X, Y) (patch ignored); 0 or -1. */
int cli_parse_kver(const char *s, uint32_t *out);
/* Writes @s to @f as a JSON string: quote and backslash escaped, newline
 * as \n, other control bytes as \u00XX; with @ascii, bytes from 0x7f up
 * are \u00XX too (one code point each), so that a line stays valid JSON
 * whatever bytes @s held (the agent's log: a runtime's message). */
void cli_json_str(FILE *f, const char *s, bool ascii);

/* Writes "6.18" for an IOUR_KVER value into @buf. */
void cli_kver_str(uint32_t kver, char *buf, size_t len);

/*
 * cli_each_item() calls @fn for each item of a comma-separated list
 * (spaces around items are ignored).  An empty item is a usage error.
 * Returns 0, or the first non-zero value of @fn, or CLI_USAGE.
 */
int cli_each_item(const char *list, const char *what,
		  int (*fn)(const char *item, void *arg), void *arg);

/* A request opcode by name ("READ", "IORING_OP_READ") or number. */
int cli_parse_opcode(const char *s, uint32_t *op);

/* A mask of SQE flags: names (ASYNC, IOSQE_ASYNC), numbers, "none" and
 * "all", joined by ',' or '|'.  0 or CLI_USAGE (message printed). */
int cli_parse_sqe_flags(const char *s, const char *what, uint32_t *mask);
/* " (did you mean 'NAME'?)" for a name not found in table @kind (enum
 * iour_name_kind; iour_name_suggest()), or "" when nothing is near. */
const char *cli_near(uint32_t kind, const char *name);

/* Reports a getopt_long() error (@c is '?' or ':'); returns CLI_USAGE. */
int cli_getopt_error(int c, char **argv);

/* Prints the --help text @text to stdout; returns CLI_OK (rules/help.c:
 * its "@{NAME}" lines are written from the request schema). */
int cli_help(const char *text);

/*
 * cli_policy_load() reads the policy file @path ("-": standard input) with
 * the library's loader; `minKernel` conditions are evaluated for Linux
 * @kver (IOUR_KVER()), or the running kernel if it is 0.  On error it prints "FILE:LINE:COLUMN: message" on
 * stderr and returns CLI_POLICY (CLI_FAIL when memory ran out); else 0.
 */
struct iour_policy;
int cli_policy_load(const char *path, uint32_t kver, struct iour_policy **out);

/*
 * cli_plan_fail() reports a failed iour_policy__plan() (@err) for @target
 * ("Linux 5.4 (from the library's tables)"), then, on a second line, why:
 * the documented cause of @err, the kernel description or the policy for
 * -EINVAL (told apart by planning an empty policy with @opts).  Returns
 * CLI_FAIL.
 */
struct iour_plan_opts;
int cli_plan_fail(int err, const struct iour_plan_opts *opts, const char *target);

/*
 * Mechanisms a view describes (mechanism.c; doc/cli.md, "Mechanisms"):
 * auto is the one `run` uses on the target kernel: task restrictions on
 * Linux 7.0+, the ring broker before (5.10+), the companion below that;
 * ring for a policy whose target is one ring.
 */
enum cli_mech { CLI_MECH_AUTO, CLI_MECH_TASK, CLI_MECH_BROKER, CLI_MECH_COMPANION, CLI_MECH_RING };
/* --mechanism's argument; 0, or CLI_USAGE with the message printed. */
int cli_mech_parse(const char *s, enum cli_mech *out);
const char *cli_mech_name(enum cli_mech m);
/*
 * cli_plan_mech() plans @pol with @opts for the mechanism @want (a ring
 * view sets the policy's target to ring), and says in @used which one it
 * planned for.  Returns 0; a negative errno of iour_policy__plan(); or
 * CLI_USAGE / CLI_FAIL with the message printed when the mechanism does
 * not fit the policy or the kernel.  cli_plan_mech_fail() reports either.
 */
int cli_plan_mech(struct iour_policy *pol, const struct iour_plan_opts *opts, enum cli_mech want,
		  enum cli_mech *used, struct iour_plan **out);
int cli_plan_mech_fail(int err, const struct iour_plan_opts *opts, const char *target);
/*
 * cli_ring_ruleset() plans @pol with @opts for one ring with best-effort
 * compatibility (whatever the policy's target and compatibility level:
 * what the kernel can enforce of the classic part) and gives in @out what
 * the plan's ring restriction step enforces, as the library decodes it
 * (iour_plan__get_ruleset()); NULL when the plan restricts nothing on the
 * ring.  0 or a negative errno.
 */
struct iour_ruleset;
int cli_ring_ruleset(const struct iour_policy *pol, const struct iour_plan_opts *opts,
		     struct iour_ruleset **out);
/*
 * The peer guard's reach on the running kernel (doc/security.md 3a, "Ring
 * acquisition"): cli_peers_probe() reads Landlock's ABI (0: none) and
 * Yama's ptrace_scope (-1: no Yama); cli_peers_mem_closed() says whether
 * /proc/PID/mem of other processes of the uid is closed to a guarded
 * program.  cli_ring_acquire() writes the ring-acquire effect's paths for
 * mechanism @m ("open: ...; closed: ...") and returns whether every path is
 * closed; @p NULL describes a kernel from the tables, whose Landlock and
 * Yama are unknown (then /proc/PID/mem is reported open).
 */
struct cli_peers {
	long landlock_abi;
	int yama;
};
void cli_peers_probe(struct cli_peers *p);
bool cli_peers_mem_closed(const struct cli_peers *p);
bool cli_ring_acquire(enum cli_mech m, const struct cli_peers *p, char *buf, size_t len);
/* Calls @fn for each effect note of @rep (key, state, the paths). */
struct iour_report;
void cli_effects_each(const struct iour_report *rep,
		      void (*fn)(void *arg, const char *key, const char *state, size_t statelen,
				 const char *rest),
		      void *arg);
/*
 * cli_report_diffs() writes, each after @sep, what @r says is not
 * enforced as written: the request opcodes denied although allowed, or
 * allowed beyond their rules, and the ring-less register calls left open,
 * by cause.  Returns how many clauses it wrote.
 */
int cli_report_diffs(FILE *f, const struct iour_report *r, const char *sep);

/* Subcommands: argv[0] is the subcommand's name. */
int cmd_probe(int argc, char **argv);
int cmd_names(int argc, char **argv);
int cmd_ruleset(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_filter(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_compile(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_lint(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_groups(int argc, char **argv);
int cmd_learn(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_prove(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_seccomp_profile(int argc, char **argv);
int cmd_runc_shim(int argc, char **argv);

/* The --help texts, also printed by `iour-restrict help CMD`. */
extern const char cli_help_probe[];
extern const char cli_help_names[];
extern const char cli_help_ruleset[];
extern const char cli_help_verify[];
extern const char cli_help_filter[];
extern const char cli_help_sim[];
extern const char cli_help_exec[];
extern const char cli_help_run[];
extern const char cli_help_compile[];
extern const char cli_help_check[];
extern const char cli_help_lint[];
extern const char cli_help_explain[];

/* An effect note's text ("effect KEY (NAME): STATE; PATHS") split into its
 * key, its state (not terminated: statelen) and the rest; -1 if the text
 * is not an effect note's (core/mechanism.c). */
int cli_effect_split(const char *text, char *key, size_t keylen, const char **state,
		     size_t *statelen, const char **rest);
extern const char cli_help_groups[];
extern const char cli_help_learn[];
extern const char cli_help_merge[];
extern const char cli_help_prove[];
extern const char cli_help_agent[];
extern const char cli_help_seccomp_profile[];
extern const char cli_help_runc_shim[];
/* `iour-restrict help rules`, written from the request schema (help.c). */
int cli_help_rules(void);

#endif /* IOUR_CLI_H */
