/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict prove (doc/cli.md): the SMT proof of a filter against its
 * rules.  A correct program must be proved; a program compiled from other
 * rules must get a counterexample, and that context is checked here
 * without the prover: it is rebuilt the way the kernel builds it
 * (iour_ctx_connect()), and the library's simulator must give the program
 * verdict the prover printed, which must differ from the rules' verdict.
 * Needs IOUR_TOOLS_DIR (make test-run) and python3-z3; skips otherwise.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"

#define Z3_MODULE "/usr/lib/python3/dist-packages/z3/__init__.py"

struct prun {
	int status;
	char *out;
	char *err;
};

static char *slurp(int fd)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf;

	cr_assert_geq(n, 0);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(pread(fd, buf, (size_t)n, 0), n);
	buf[n] = '\0';
	return buf;
}

static const char *tool(void)
{
	static char path[4096];
	const char *dir = getenv("IOUR_TOOLS_DIR");

	if (!dir)
		cr_skip_test("IOUR_TOOLS_DIR is not set (run through make test-run)");
	if (access(Z3_MODULE, R_OK))
		cr_skip_test("python3-z3 is not installed (%s missing)", Z3_MODULE);
	snprintf(path, sizeof(path), "%s/iour-restrict", dir);
	cr_assert_eq(access(path, X_OK), 0, "%s is not built", path);
	return path;
}

/* Runs the tool with the arguments that follow (NULL-terminated); @env is
 * an extra "NAME=VALUE" or NULL. */
static void prove(struct prun *r, const char *env, ...)
{
	char *argv[32];
	int out = memfd_create("prove-out", 0), err = memfd_create("prove-err", 0), st, n = 0;
	const char *a;
	va_list ap;
	pid_t pid;

	argv[n++] = (char *)tool();
	argv[n++] = "prove";
	va_start(ap, env);
	while ((a = va_arg(ap, const char *)) != NULL && n < 31)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	cr_assert(out >= 0 && err >= 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		if (env)
			putenv((char *)env);
		execv(argv[0], argv);
		_exit(125);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r->out = slurp(out);
	r->err = slurp(err);
	close(out);
	close(err);
}

static void prun_free(struct prun *r)
{
	free(r->out);
	free(r->err);
}

/* Compiles CONNECT rules through the API and writes the raw program. */
static void write_program(const char *path, uint32_t prefix_len)
{
	struct iour_cmp c = { .sz = sizeof(c),
			      .field = IOUR_FIELD_CONNECT_ADDR4,
			      .op = IOUR_CMP_IN_PREFIX,
			      .value = IOUR_IPV4(10, 0, 0, 0),
			      .arg = prefix_len };
	uint64_t fams[2] = { AF_INET, AF_INET6 };
	struct iour_cmp a = { .sz = sizeof(a),
			      .field = IOUR_FIELD_CONNECT_FAMILY,
			      .op = IOUR_CMP_IN_SET,
			      .set = fams,
			      .set_len = 2 };
	struct iour_filter *f;
	struct iour_prog *p;
	FILE *o;

	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_DENY, &c, 1), 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_ALLOW, &a, 1), 0);
	cr_assert_eq(iour_filter__compile(f, IOUR_OP_CONNECT, NULL, &p), 0);
	o = fopen(path, "wb");
	cr_assert_not_null(o);
	cr_assert_eq(
		fwrite(iour_prog__insns(p), sizeof(struct iour_insn), iour_prog__insn_cnt(p), o),
		iour_prog__insn_cnt(p));
	cr_assert_eq(fclose(o), 0);
	iour_prog__free(p);
	iour_filter__free(f);
}

Test(cli_prove, compiled_rules_are_proved)
{
	struct prun r;

	prove(&r, NULL, "--op", "CONNECT", "--deny", "addr4 in 10.0.0.0/8", "--allow",
	      "family in {AF_INET,AF_INET6}", NULL);
	cr_assert_eq(r.status, 0, "status %d\n%s%s", r.status, r.out, r.err);
	cr_assert_not_null(strstr(r.out, "CONNECT: proved"), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "1 proved, 0 counterexamples, 0 unknown"), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "checker rules: 1 proved, 0 broken"), "%s", r.out);
	prun_free(&r);

	prove(&r, NULL, "--op", "SOCKET", "--allow", "family==AF_INET,type==SOCK_STREAM", "--allow",
	      "family==AF_UNIX", "--default", "deny", NULL);
	cr_assert_eq(r.status, 0, "status %d\n%s%s", r.status, r.out, r.err);
	cr_assert_not_null(strstr(r.out, "SOCKET: proved"), "%s", r.out);
	prun_free(&r);
}

/* The program of "deny 10.0.0.0/8" is not that of "deny 10.0.0.0/9": the
 * counterexample must be a real CONNECT context that separates them. */
Test(cli_prove, other_rules_get_a_real_counterexample)
{
	char path[] = "/tmp/iour-prove-test.XXXXXX";
	struct iour_sim_result sr = { .sz = sizeof(sr) };
	uint8_t ctx[IOUR_CTX_SIZE], built[IOUR_CTX_SIZE];
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;
	const char *p;
	struct iour_filter *f;
	struct iour_prog *prog;
	struct iour_cmp c = { .sz = sizeof(c),
			      .field = IOUR_FIELD_CONNECT_ADDR4,
			      .op = IOUR_CMP_IN_PREFIX,
			      .value = IOUR_IPV4(10, 0, 0, 0),
			      .arg = 8 };
	uint64_t fams[2] = { AF_INET, AF_INET6 };
	struct iour_cmp a = { .sz = sizeof(a),
			      .field = IOUR_FIELD_CONNECT_FAMILY,
			      .op = IOUR_CMP_IN_SET,
			      .set = fams,
			      .set_len = 2 };
	char rules_v[8], prog_v[8];
	uint16_t fam;
	struct prun r;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	close(fd);
	write_program(path, 8);
	prove(&r, NULL, "--op", "CONNECT", "--deny", "addr4 in 10.0.0.0/9", "--allow",
	      "family in {AF_INET,AF_INET6}", "--program", path, NULL);
	unlink(path);
	cr_assert_eq(r.status, 1, "status %d\n%s%s", r.status, r.out, r.err);
	p = strstr(r.out, "counterexample: ");
	cr_assert_not_null(p, "%s", r.out);
	p += strlen("counterexample: ");
	for (size_t i = 0; i < sizeof(ctx); i++) {
		unsigned v;
		int used;

		cr_assert_eq(sscanf(p, " %2x%n", &v, &used), 1, "byte %zu of %s", i, r.out);
		ctx[i] = (uint8_t)v;
		p += used;
	}
	cr_assert_eq(sscanf(strstr(r.out, "rules: "), "rules: %7[a-z], program: %7[a-z]", rules_v,
			    prog_v),
		     2, "%s", r.out);
	cr_assert_str_neq(rules_v, prog_v);

	/* The kernel could build it: rebuild it from the address it holds. */
	cr_assert_eq(iour_ctx_generic(built, sizeof(built), IOUR_OP_CONNECT, ctx[9],
				      *(uint64_t *)(void *)ctx),
		     0);
	memcpy(&fam, ctx + IOUR_CTX_OFF_CONNECT_FAMILY, sizeof(fam));
	if (fam == AF_INET6) {
		memset(&s6, 0, sizeof(s6));
		s6.sin6_family = AF_INET6;
		memcpy(&s6.sin6_port, ctx + IOUR_CTX_OFF_CONNECT_PORT, 2);
		memcpy(&s6.sin6_addr, ctx + IOUR_CTX_OFF_CONNECT_ADDR, 16);
		cr_assert_eq(iour_ctx_connect(built, sizeof(built), &s6, sizeof(s6)), 0);
	} else {
		cr_assert_eq(fam, AF_INET, "family %u cannot separate these rules", fam);
		memset(&s4, 0, sizeof(s4));
		s4.sin_family = AF_INET;
		memcpy(&s4.sin_port, ctx + IOUR_CTX_OFF_CONNECT_PORT, 2);
		memcpy(&s4.sin_addr, ctx + IOUR_CTX_OFF_CONNECT_ADDR, 4);
		cr_assert_eq(iour_ctx_connect(built, sizeof(built), &s4, sizeof(s4)), 0);
	}
	cr_assert_arr_eq(built, ctx, sizeof(ctx), "the counterexample is not a kernel context");

	/* The library's simulator agrees with the printed program verdict,
	 * and the /9 rules compiled by the library with the rules' verdict. */
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_DENY, &c, 1), 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_ALLOW, &a, 1), 0);
	cr_assert_eq(iour_filter__compile(f, IOUR_OP_CONNECT, NULL, &prog), 0);
	cr_assert_eq(iour_cbpf_run(iour_prog__insns(prog), iour_prog__insn_cnt(prog), ctx,
				   sizeof(ctx), &sr),
		     0);
	cr_assert_str_eq(sr.allowed ? "allow" : "deny", prog_v);
	iour_prog__free(prog);
	iour_filter__free(f);
	c.arg = 9;
	cr_assert_eq(iour_filter__new(NULL, &f), 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_DENY, &c, 1), 0);
	cr_assert_eq(iour_filter__add_rule(f, IOUR_OP_CONNECT, IOUR_ALLOW, &a, 1), 0);
	cr_assert_eq(iour_filter__compile(f, IOUR_OP_CONNECT, NULL, &prog), 0);
	cr_assert_eq(iour_cbpf_run(iour_prog__insns(prog), iour_prog__insn_cnt(prog), ctx,
				   sizeof(ctx), &sr),
		     0);
	cr_assert_str_eq(sr.allowed ? "allow" : "deny", rules_v);
	iour_prog__free(prog);
	iour_filter__free(f);
	prun_free(&r);
}

/* A flipped return: the always-allow program is not "deny by default". */
Test(cli_prove, a_flipped_return_is_refuted)
{
	char path[] = "/tmp/iour-prove-test.XXXXXX";
	struct iour_insn ret1 = { .code = 0x06, .k = 1 };
	struct prun r;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, &ret1, sizeof(ret1)), (ssize_t)sizeof(ret1));
	close(fd);
	prove(&r, NULL, "--op", "READ", "--default", "deny", "--program", path, NULL);
	cr_assert_eq(r.status, 1, "status %d\n%s%s", r.status, r.out, r.err);
	cr_assert_not_null(strstr(r.out, "rules: deny, program: allow"), "%s", r.out);
	prun_free(&r);
	prove(&r, NULL, "--op", "READ", "--default", "allow", "--program", path, NULL);
	unlink(path);
	cr_assert_eq(r.status, 0, "status %d\n%s%s", r.status, r.out, r.err);
	prun_free(&r);
}

/* A program the kernel's checker refuses (a load beyond the 40 bytes) is
 * reported, not proved. */
Test(cli_prove, a_program_the_checker_refuses_is_not_proved)
{
	char path[] = "/tmp/iour-prove-test.XXXXXX";
	struct iour_insn bad[2] = { { .code = 0x20, .k = 40 }, { .code = 0x16 } };
	struct prun r;
	int fd = mkstemp(path);

	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, bad, sizeof(bad)), (ssize_t)sizeof(bad));
	close(fd);
	prove(&r, NULL, "--op", "READ", "--default", "allow", "--program", path, NULL);
	unlink(path);
	cr_assert_eq(r.status, 1, "status %d\n%s%s", r.status, r.out, r.err);
	cr_assert_not_null(strstr(r.out, "refused by the kernel's checker"), "%s", r.out);
	cr_assert_null(strstr(r.out, "proved"), "%s", r.out);
	prun_free(&r);
}

/* No time: "unknown" and status 4, never "proved". */
Test(cli_prove, out_of_time_is_unknown_not_proved)
{
	char set[16384];
	size_t n = 0;
	struct prun r;

	n += (size_t)snprintf(set + n, sizeof(set) - n, "addr4 in {");
	for (unsigned i = 0; i < 600; i++)
		n += (size_t)snprintf(set + n, sizeof(set) - n, "%s%u.%u.%u.%u", i ? "," : "",
				      (i * 37) % 223 + 1, (i * 91) % 256, (i * 13) % 256, i % 256);
	snprintf(set + n, sizeof(set) - n, "}");
	prove(&r, NULL, "--op", "CONNECT", "--deny", set, "--default", "allow", "--timeout", "1",
	      NULL);
	cr_assert_eq(r.status, 4, "status %d\n%s%s", r.status, r.out, r.err);
	cr_assert_not_null(
		strstr(r.out, "unknown: the solver did not decide within the limit of 1 ms"), "%s",
		r.out);
	cr_assert_not_null(strstr(r.out, "0 proved"), "%s", r.out);
	prun_free(&r);
}

Test(cli_prove, a_missing_prover_is_status_4)
{
	struct prun r;

	prove(&r, "IOUR_PROVE=/nonexistent/iour-prove", "--op", "READ", "--default", "allow", NULL);
	cr_assert_eq(r.status, 4, "status %d\n%s%s", r.status, r.out, r.err);
	cr_assert_not_null(strstr(r.err, "cannot run"), "%s", r.err);
	prun_free(&r);
}

/* A policy file: every filter of its plan for 7.2. */
Test(cli_prove, policy_file_filters_are_proved)
{
	const char *pol = "examples/policies/tcp-client.json";
	struct prun r;

	if (access(pol, R_OK))
		cr_skip_test("%s not found (run from the source tree)", pol);
	prove(&r, NULL, pol, NULL);
	cr_assert_eq(r.status, 0, "status %d\n%s%s", r.status, r.out, r.err);
	cr_assert_not_null(strstr(r.out, "tcp-client.json: CONNECT: proved"), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "tcp-client.json: SOCKET: proved"), "%s", r.out);
	cr_assert_not_null(strstr(r.out, "2 proved, 0 counterexamples"), "%s", r.out);
	prun_free(&r);
}

/* Every name a saved policy may write for a number field is one the
 * prover reads (scripts/check-schema-docs.py keeps its list equal to the
 * library's table): families and protocols added after the first list
 * (AF_XDP, AF_MCTP, IPPROTO_MPTCP) included. */
Test(cli_prove, saved_constant_names_are_read)
{
	static const char *const rules[] = {
		"{ \"field\": \"socket.family\", \"op\": \"in\", \"values\": [44, 45] }",
		"{ \"field\": \"socket.protocol\", \"op\": \"==\", \"value\": 262 }",
	};
	char path[] = "/tmp/iour-prove-names-XXXXXX";
	struct prun r;

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
		int fd = mkstemp(path);
		FILE *o;

		cr_assert_geq(fd, 0);
		o = fdopen(fd, "w");
		cr_assert_not_null(o);
		fprintf(o,
			"{ \"version\": 1, \"defaultAction\": \"deny\", \"entries\": [ { \"names\": "
			"[\"SOCKET\"], \"action\": \"allow\", \"args\": [ %s ] } ] }\n",
			rules[i]);
		cr_assert_eq(fclose(o), 0);
		prove(&r, NULL, path, NULL);
		unlink(path);
		strcpy(path, "/tmp/iour-prove-names-XXXXXX");
		cr_expect_eq(r.status, 0, "rule %zu: status %d\n%s%s", i, r.status, r.out, r.err);
		cr_expect_not_null(strstr(r.out, "SOCKET: proved"), "rule %zu: %s%s", i, r.out, r.err);
		prun_free(&r);
	}
}
