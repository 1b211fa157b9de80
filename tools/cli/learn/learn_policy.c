/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict learn: the policy text, the summary on stderr, and the
 * output file (doc/cli.md, "learn").
 *
 * The output file is written safely when learn runs as root in a
 * directory others may write: the target is checked with lstat (an
 * existing target that is not a regular file is refused: a symlink, a
 * directory, a FIFO or a device), a new file is created beside it with
 * O_CREAT|O_EXCL|O_NOFOLLOW relative to the directory opened once, and it
 * is renamed over the target only when the policy is complete.  Nothing
 * is truncated or replaced before that; on failure or a signal the new
 * file is removed and the target is untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "core/advice.h"
#include "core/cli.h"
#include "learn.h"

struct learn_out *volatile learn_out_current;

int learn_out_open(struct learn_out *o, const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	struct stat st;

	memset(o, 0, sizeof(*o));
	o->dirfd = -1;
	if (!strcmp(path, "-")) {
		o->std = true;
		o->f = stdout;
		return 0;
	}
	if (slash) {
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
		snprintf(o->base, sizeof(o->base), "%s", slash + 1);
	} else {
		snprintf(dir, sizeof(dir), ".");
		snprintf(o->base, sizeof(o->base), "%s", path);
	}
	if (!o->base[0] || !strcmp(o->base, ".") || !strcmp(o->base, "..") ||
	    strlen(slash ? slash + 1 : path) >= sizeof(o->base)) {
		cli_msg("-o '%s': not a file name", path);
		return CLI_USAGE;
	}
	o->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (o->dirfd < 0)
		return cli_fail(-errno, "-o '%s': cannot open its directory '%s'", path, dir);
	if (!fstatat(o->dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode)) {
		cli_msg("-o '%s' exists and is not a regular file (a symlink, directory, FIFO "
			"or device): refusing to replace it",
			path);
		close(o->dirfd);
		o->dirfd = -1;
		return CLI_FAIL;
	}
	for (int tries = 0; tries < 16; tries++) {
		uint32_t r = 0;
		int fd;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = (uint32_t)getpid() * 2654435761u + (uint32_t)tries;
		snprintf(o->tmp, sizeof(o->tmp), ".%.200s.learn-%08x", o->base, r);
		fd = openat(o->dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0644);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			break;
		o->f = fdopen(fd, "w");
		if (!o->f) {
			close(fd);
			unlinkat(o->dirfd, o->tmp, 0);
			break;
		}
		learn_out_current = o;
		return 0;
	}
	cli_fail(-errno, "-o '%s': cannot create a new file in '%s'", path, dir);
	o->tmp[0] = '\0';
	close(o->dirfd);
	o->dirfd = -1;
	return CLI_FAIL;
}

int learn_out_commit(struct learn_out *o, const char *path)
{
	struct stat st;
	int bad;

	if (o->std)
		return fflush(stdout) || ferror(stdout) ? cli_fail(-EIO, "writing the policy") : 0;
	bad = fflush(o->f) || ferror(o->f) || fsync(fileno(o->f));
	if (!bad && !fstatat(o->dirfd, o->base, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode)) {
		cli_msg("-o '%s' became something other than a regular file while learn ran: "
			"refusing to replace it",
			path);
		learn_out_abort(o);
		return CLI_FAIL;
	}
	if (bad || renameat(o->dirfd, o->tmp, o->dirfd, o->base)) {
		int err = errno ? errno : EIO;

		learn_out_abort(o);
		return cli_fail(-err, "writing the policy to '%s'", path);
	}
	learn_out_current = NULL;
	fclose(o->f);
	o->f = NULL;
	o->tmp[0] = '\0';
	close(o->dirfd);
	o->dirfd = -1;
	return 0;
}

/* Called from the fatal-signal handler too: only unlinkat() there. */
void learn_out_abort(struct learn_out *o)
{
	if (o->std || !o->tmp[0] || o->dirfd < 0)
		return;
	unlinkat(o->dirfd, o->tmp, 0);
	o->tmp[0] = '\0';
}

/* ---- the policy text ------------------------------------------------ */

/* The JSON string escapes of @s, without the quotes. */
static void json_str_body(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	json_str_body(f, s);
	fputc('"', f);
}

static const char *op_name(uint32_t op, char *buf, size_t len)
{
	const char *n = iour_opcode_name(op);

	if (n)
		return n;
	snprintf(buf, len, "%u", op);
	return buf;
}

/* "IO_LINK 3, ASYNC 1" for the flags of @mask, from the counts. */
static void flags_text(char *buf, size_t len, uint32_t mask, const uint64_t *counts)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < NFLAGS && off < len; i++) {
		if (!(mask & (1u << i)))
			continue;
		const char *n = iour_sqe_flag_name(1u << i);

		off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "", n ? n : "?");
		if (counts && off < len)
			off += (size_t)snprintf(buf + off, len - off, " %" PRIu64, counts[i]);
	}
}

/*
 * Lists the seen opcodes of one kind (request or register) in a JSON
 * array: first every group of the library's table all of whose opcodes of
 * that kind (of every kernel version, so that the group adds nothing that
 * was not seen) were seen, then the opcodes no chosen group covers.
 */
static void op_array(FILE *f, const bool *seen, bool reg)
{
	bool covered[NOPS] = { false };
	uint32_t ops[NOPS];
	bool first = true;
	char nb[16];

	for (int g = 0; g < iour_group_count(); g++) {
		struct iour_group_info gi = { .sz = sizeof(gi) };
		int n = reg ? iour_group_register_ops((size_t)g, 0, ops, NOPS) :
			      iour_group_opcodes((size_t)g, 0, ops, NOPS);
		bool fits = n > 0, adds = false;

		for (int i = 0; i < n && fits; i++) {
			fits = ops[i] < NOPS && seen[ops[i]];
			adds |= fits && !covered[ops[i]];
		}
		if (!fits || !adds || iour_group_get((size_t)g, &gi))
			continue;
		for (int i = 0; i < n; i++)
			covered[ops[i]] = true;
		fprintf(f, "%s", first ? "" : ", ");
		json_str(f, gi.name);
		first = false;
	}
	for (unsigned op = 0; op < NOPS; op++) {
		const char *n;

		if (!seen[op] || covered[op])
			continue;
		n = reg ? iour_register_op_name(op) : iour_opcode_name(op);
		if (!n) {
			snprintf(nb, sizeof(nb), "%u", op);
			n = nb;
		}
		fprintf(f, "%s", first ? "" : ", ");
		json_str(f, n);
		first = false;
	}
}

/* Appends to @f (a memory stream) the policy text. */
/* " pid 12 (fio): READ, WRITE; register REGISTER_PROBE." for each task
 * that used io_uring (--per-task). */
static void per_task_text(FILE *f, const struct tracer *t)
{
	char nb[16];

	fprintf(f, " Per task:");
	for (size_t i = 0; i < t->ntask; i++) {
		const struct task *k = &t->task[i];
		const char *sep = " ";

		if (!k->nreq && !k->nreg)
			continue;
		fprintf(f, " pid %" PRIu64 " (", k->pid);
		json_str_body(f, k->comm[0] ? k->comm : "?");
		fprintf(f, "): %" PRIu64 " request%s", k->nreq, k->nreq == 1 ? "" : "s");
		for (unsigned op = 0; op < NOPS; op++) {
			if (!(k->ops[op / 64] & (1ull << (op % 64))))
				continue;
			fprintf(f, "%s%s", sep, op_name(op, nb, sizeof(nb)));
			sep = ", ";
		}
		fprintf(f, "; %" PRIu64 " register call%s", k->nreg, k->nreg == 1 ? "" : "s");
		sep = " ";
		for (unsigned op = 0; op < NREG; op++) {
			const char *n = iour_register_op_name(op);

			if (!(k->regs[op / 64] & (1ull << (op % 64))))
				continue;
			if (!n) {
				snprintf(nb, sizeof(nb), "%u", op);
				n = nb;
			}
			fprintf(f, "%s%s", sep, n);
			sep = ", ";
		}
		fprintf(f, ".");
	}
}

/* The running kernel as IOUR_KVER(); 0 if unknown. */
static uint32_t running_kver(void)
{
	struct utsname u;
	unsigned maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &maj, &min) != 2)
		return 0;
	return IOUR_KVER(maj, min);
}

/*
 * learn's warnings and suggestions (advice.h, doc/cli.md "learn"): SQPOLL
 * rings that run or the agent refuse, writes without a sync opcode, and
 * the usual companions never seen.  Into the comment @f (JSON string
 * text) when not NULL, else on stderr.  Nothing is added to the policy.
 */
static void advise(FILE *f, const struct learned *L)
{
	struct advice_pair pr[16];
	char text[768], writes[128];
	bool seen[ADVICE_NOPS];
	uint32_t kver = running_kver();
	size_t n;

	for (unsigned op = 0; op < ADVICE_NOPS; op++)
		seen[op] = L->op[op] > 0;
	if (L->sqpoll_rings && advice_sqpoll(kver, text, sizeof(text))) {
		if (f) {
			fprintf(f,
				" WARNING, SQPOLL: the program created %" PRIu64 " SQPOLL ring%s; ",
				L->sqpoll_rings, L->sqpoll_rings == 1 ? "" : "s");
			json_str_body(f, text);
			fputc('.', f);
		} else {
			cli_msg("warning: the program created %" PRIu64 " SQPOLL ring%s; %s",
				L->sqpoll_rings, L->sqpoll_rings == 1 ? "" : "s", text);
		}
	}
	if (advice_no_sync(seen, writes, sizeof(writes))) {
		if (f)
			fprintf(f,
				" WARNING, NO SYNC: writes were learned (%s) but no sync opcode "
				"(FSYNC, SYNC_FILE_RANGE): if the program syncs through io_uring "
				"on a path this run did not take, the policy denies it with EACCES "
				"and the program may lose data without an error; add FSYNC if it "
				"syncs.",
				writes);
		else
			cli_msg("warning: writes were learned (%s) but no sync opcode (FSYNC, "
				"SYNC_FILE_RANGE): a program that syncs on another path would get "
				"EACCES and may lose data without an error; add FSYNC if it syncs",
				writes);
	}
	n = advice_companions(seen, kver, pr, sizeof(pr) / sizeof(pr[0]));
	for (size_t i = 0; i < n; i++) {
		if (f)
			fprintf(f, "%s %s (usual with %s, %s)",
				i ? "," :
				    " SUGGESTIONS, not allowed "
				    "(add them if the program needs "
				    "them):",
				iour_opcode_name(pr[i].missing), iour_opcode_name(pr[i].seen),
				pr[i].why);
		else
			cli_msg("suggestion (not added): %s is usual with %s, %s",
				iour_opcode_name(pr[i].missing), iour_opcode_name(pr[i].seen),
				pr[i].why);
	}
	if (f && n)
		fputc('.', f);
}

void learn_advise(const struct learned *L)
{
	advise(NULL, L);
}

/* The top-level comment: what ran, and what was seen how often. */
static void comment_text(FILE *f, const struct tracer *t, char **cmd, const char *what,
			 const char *how, bool per_task)
{
	const struct learned *L = t->l;
	struct utsname u;
	const char *sep = "";
	char nb[16];

	if (uname(&u))
		snprintf(u.release, sizeof(u.release), "?");
	fprintf(f, "{\n  \"comment\": \"learned by iour-restrict learn on Linux ");
	json_str_body(f, u.release);
	if (cmd) {
		fprintf(f, " from one run of:");
		for (char **a = cmd; *a; a++) {
			fputc(' ', f);
			json_str_body(f, *a);
		}
	} else {
		fprintf(f, " from ");
		json_str_body(f, what);
	}
	fprintf(f, " (%s; %zu task%s, %" PRIu64 " ring%s of which %" PRIu64 " SQPOLL%s).", how,
		L->ntasks, L->ntasks == 1 ? "" : "s", L->rings, L->rings == 1 ? "" : "s",
		L->sqpoll_rings, L->lost ? "; TRACE EVENTS WERE LOST" : "");
	if (L->unreadable)
		fprintf(f,
			" %" PRIu64 " REQUEST%s COULD NOT BE READ FROM THE TRACE: this policy "
			"may lack %s opcode%s.",
			L->unreadable, L->unreadable == 1 ? "" : "S",
			L->unreadable == 1 ? "its" : "their", L->unreadable == 1 ? "" : "s");
	fprintf(f, " Requests seen (%" PRIu64 "):", L->nreq);
	for (unsigned op = 0; op < NOPS; op++) {
		if (!L->op[op])
			continue;
		fprintf(f, "%s %s %" PRIu64, sep, op_name(op, nb, sizeof(nb)), L->op[op]);
		if (L->op_sqpoll[op])
			fprintf(f, " (%" PRIu64 " by an SQPOLL thread)", L->op_sqpoll[op]);
		sep = ",";
	}
	fprintf(f, "%s. Register calls seen (%" PRIu64 "):", L->nreq ? "" : " none", L->nreg);
	sep = "";
	for (unsigned op = 0; op < NREG; op++) {
		const char *n = iour_register_op_name(op);

		if (!L->reg_ok[op] && !L->reg_fail[op])
			continue;
		if (!n) {
			snprintf(nb, sizeof(nb), "%u", op);
			n = nb;
		}
		fprintf(f, "%s %s %" PRIu64, sep, n, L->reg_ok[op] + L->reg_fail[op]);
		if (L->reg_fail[op])
			fprintf(f, " (%" PRIu64 " failed)", L->reg_fail[op]);
		sep = ",";
	}
	fprintf(f, "%s.", L->nreg ? "" : " none");
	if (per_task)
		per_task_text(f, t);
	advise(f, L);
	fprintf(f, "\",\n");
}

/* Appends to @f (a memory stream) the policy text. */
static void policy_text(FILE *f, const struct tracer *t, char **cmd, const char *what,
			const char *how, bool per_task)
{
	const struct learned *L = t->l;
	bool seen[NOPS], rseen[NOPS];
	char nb[16], fl[256];
	uint32_t allflags = 0;
	const char *sep;

	for (unsigned op = 0; op < NOPS; op++) {
		allflags |= L->op_flags[op];
		seen[op] = L->op[op] > 0;
		rseen[op] = L->reg_ok[op] + L->reg_fail[op] > 0;
	}
	comment_text(f, t, cmd, what, how, per_task);
	fprintf(f, "  \"defaultAction\": \"deny\",\n  \"requestOps\": [");
	op_array(f, seen, false);
	fprintf(f, "],\n  \"registerOps\": [");
	op_array(f, rseen, true);

	/* SQE flags, with their counts and the ASYNC caveat */
	flags_text(fl, sizeof(fl), allflags, L->flag);
	fprintf(f, "],\n  \"sqeFlags\": {\n    \"comment\": \"");
	if (L->flags_unknown) {
		fprintf(f, "NOT RECORDED: this kernel's submit tracepoint does not report SQE "
			   "flags; add those the program sets");
	} else if (fl[0]) {
		fprintf(f, "requests carrying each flag: ");
		json_str_body(f, fl);
	} else {
		fprintf(f, "no request carried an SQE flag");
	}
	sep = ". ASYNC cannot be told from the kernel's own for";
	for (unsigned op = 0; op < NOPS; op++) {
		if (!L->async_ambiguous[op])
			continue;
		fprintf(f, "%s %s", sep, op_name(op, nb, sizeof(nb)));
		sep = ",";
	}
	fprintf(f, "%s.\",\n    \"allowed\": [", sep[0] == ',' ? ": not recorded for them" : "");
	sep = "";
	for (unsigned i = 0; i < NFLAGS; i++) {
		if (!(allflags & (1u << i)))
			continue;
		fprintf(f, "%s", sep);
		json_str(f, iour_sqe_flag_name(1u << i) ? iour_sqe_flag_name(1u << i) : "?");
		sep = ", ";
	}
	fprintf(f, "],\n    \"required\": []\n  }\n}\n");
}

/*
 * Writes the policy to @out after checking that the library loads it back
 * (doc/cli.md, "learn"); 0 or an exit code.
 */
int learn_write_policy(FILE *out, const struct tracer *t, char **cmd, const char *what,
		       const char *how, bool per_task)
{
	struct iour_load_error le = { .sz = sizeof(le) };
	struct iour_policy *p = NULL;
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	int r;

	if (!m)
		return cli_fail(-ENOMEM, "writing the policy");
	policy_text(m, t, cmd, what, how, per_task);
	if (fclose(m) || !text) {
		free(text);
		return cli_fail(-ENOMEM, "writing the policy");
	}
	r = iour_policy__load_json(text, len, NULL, &p, &le);
	if (r) {
		cli_fail(r,
			 "the learned policy does not load back (a bug): line %u, column %u: "
			 "%s",
			 le.line, le.column, le.message);
		free(text);
		return CLI_FAIL;
	}
	iour_policy__free(p);
	r = fwrite(text, 1, len, out) == len ? CLI_OK : CLI_FAIL;
	free(text);
	if (r)
		cli_fail(-EIO, "writing the policy");
	return r;
}

void learn_summary(const struct learned *L)
{
	char fl[256], nb[16];

	cli_msg("%zu task%s followed, %" PRIu64 " ring%s (%" PRIu64 " SQPOLL), %" PRIu64
		" request%s, %" PRIu64 " register call%s, %" PRIu64 " events lost",
		L->ntasks, L->ntasks == 1 ? "" : "s", L->rings, L->rings == 1 ? "" : "s",
		L->sqpoll_rings, L->nreq, L->nreq == 1 ? "" : "s", L->nreg, L->nreg == 1 ? "" : "s",
		L->lost);
	if (L->flags_unknown)
		cli_msg("this kernel's submit tracepoint does not report SQE flags: none were "
			"recorded");
	for (unsigned op = 0; op < NOPS; op++) {
		if (!L->op[op])
			continue;
		flags_text(fl, sizeof(fl), L->op_flags[op], NULL);
		fprintf(stderr, "  op %s %" PRIu64 " sqpoll %" PRIu64 " flags %s%s\n",
			op_name(op, nb, sizeof(nb)), L->op[op], L->op_sqpoll[op],
			fl[0] ? fl : "none", L->async_ambiguous[op] ? " (ASYNC ambiguous)" : "");
	}
	for (unsigned op = 0; op < NREG; op++) {
		const char *n = iour_register_op_name(op);

		if (!L->reg_ok[op] && !L->reg_fail[op])
			continue;
		if (!n) {
			snprintf(nb, sizeof(nb), "%u", op);
			n = nb;
		}
		fprintf(stderr, "  register %s %" PRIu64 " failed %" PRIu64 "\n", n, L->reg_ok[op],
			L->reg_fail[op]);
	}
}
