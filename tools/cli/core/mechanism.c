/* SPDX-License-Identifier: MIT */
/*
 * The mechanism a view describes (compile, explain, lint, check, run and
 * the agent plan through here): task restrictions (Linux 7.0+), the ring
 * broker (every ring the program creates is created and restricted by a
 * broker: run before 7.0, the agent always), the seccomp companion
 * (io_uring_setup fails) or one ring (a ring target).  By default, the one
 * `iour-restrict run` uses on the target kernel (doc/cli.md, "Mechanisms";
 * doc/security.md 2.1, "The ring broker's view").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli.h"

static const char *const mech_names[] = {
	[CLI_MECH_AUTO] = "auto",
	[CLI_MECH_TASK] = "task",
	[CLI_MECH_BROKER] = "broker",
	[CLI_MECH_COMPANION] = "companion",
	[CLI_MECH_RING] = "ring",
};

int cli_mech_parse(const char *s, enum cli_mech *out)
{
	for (size_t i = 0; i < sizeof(mech_names) / sizeof(mech_names[0]); i++) {
		if (!strcmp(s, mech_names[i])) {
			*out = (enum cli_mech)i;
			return 0;
		}
	}
	return cli_usage("--mechanism: '%s' is not task, broker, companion, ring or auto", s);
}

const char *cli_mech_name(enum cli_mech m)
{
	return (unsigned int)m < sizeof(mech_names) / sizeof(mech_names[0]) ? mech_names[m] : "?";
}

int cli_plan_mech(struct iour_policy *pol, const struct iour_plan_opts *opts, enum cli_mech want,
		  enum cli_mech *used, struct iour_plan **out)
{
	struct iour_plan_info info = { .sz = sizeof(info) };
	struct iour_plan_opts po = *opts;
	struct iour_plan *plan = NULL;
	uint32_t target = IOUR_POLICY_TARGET_TASK;
	int r;

	*out = NULL;
	(void)iour_policy__get_attr(pol, IOUR_POLICY_ATTR_TARGET, &target);
	if (target == IOUR_POLICY_TARGET_RING && want != CLI_MECH_AUTO && want != CLI_MECH_RING) {
		cli_msg("the policy restricts one ring (target ring): --mechanism %s describes "
			"task policies",
			cli_mech_name(want));
		return CLI_USAGE;
	}
	if (want == CLI_MECH_RING && target != IOUR_POLICY_TARGET_RING) {
		r = iour_policy__set_attr(pol, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING);
		if (r)
			return r;
		target = IOUR_POLICY_TARGET_RING;
	}
	if (target == IOUR_POLICY_TARGET_RING) {
		*used = CLI_MECH_RING;
		return iour_policy__plan(pol, &po, out);
	}
	/* The kernel's level decides, as in run (cmd_run.c). */
	r = iour_policy__plan(pol, &po, &plan);
	if (r)
		return r;
	(void)iour_plan__info(plan, &info);
	if (want == CLI_MECH_AUTO)
		want = info.level >= 4 ? CLI_MECH_TASK :
		       info.level >= 2 ? CLI_MECH_BROKER :
					 CLI_MECH_COMPANION;
	*used = want;
	if (want == CLI_MECH_TASK && info.level < 4) {
		cli_msg("--mechanism task: the kernel has no task restrictions (Linux 7.0+); run "
			"uses the ring broker there (--mechanism broker)");
		r = CLI_FAIL;
	} else if (want == CLI_MECH_COMPANION && info.level >= 4) {
		cli_msg("--mechanism companion: the kernel has task restrictions, which run "
			"uses (--mechanism task); the companion is for kernels before 7.0");
		r = CLI_FAIL;
	} else if (want == CLI_MECH_BROKER && info.level < 2) {
		cli_msg("--mechanism broker: the kernel cannot restrict rings (Linux 5.10+ "
			"needed); run uses the seccomp companion there");
		r = CLI_FAIL;
	}
	if (r || want != CLI_MECH_BROKER) {
		if (r)
			iour_plan__free(plan);
		else
			*out = plan;
		return r;
	}
	iour_plan__free(plan);
	po.flags |= IOUR_PLAN_BROKERED;
	return iour_policy__plan(pol, &po, out);
}

int cli_plan_mech_fail(int err, const struct iour_plan_opts *opts, const char *target)
{
	return err > 0 ? err : cli_plan_fail(err, opts, target);
}

int cli_ring_ruleset(const struct iour_policy *pol, const struct iour_plan_opts *opts,
		     struct iour_ruleset **out)
{
	struct iour_policy *ring = NULL;
	struct iour_plan *plan = NULL;
	int r;

	*out = NULL;
	/* The caller's policy keeps its own target and compatibility. */
	r = iour_policy__dup(pol, &ring);
	if (!r)
		r = iour_policy__set_attr(ring, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING);
	if (!r)
		r = iour_policy__set_attr(ring, IOUR_POLICY_ATTR_COMPAT,
					  IOUR_POLICY_COMPAT_BEST_EFFORT);
	if (!r)
		r = iour_policy__plan(ring, opts, &plan);
	if (!r)
		r = iour_plan__get_ruleset(plan, IOUR_STEP_RING, out);
	iour_plan__free(plan);
	iour_policy__free(ring);
	return r;
}

void cli_effects_each(const struct iour_report *rep,
		      void (*fn)(void *arg, const char *key, const char *state, size_t statelen,
				 const char *rest),
		      void *arg)
{
	struct iour_decision d = { .sz = sizeof(d) };
	int n = iour_report__decision_cnt(rep);

	for (int i = 0; i < n; i++) {
		const char *state, *rest;
		size_t sl;
		char key[32];

		if (iour_report__decision(rep, (size_t)i, &d) || d.kind != IOUR_DECISION_NOTE ||
		    d.reason < IOUR_REASON_EFFECT_CLOSED || d.reason > IOUR_REASON_EFFECT_OPEN ||
		    cli_effect_split(d.text, key, sizeof(key), &state, &sl, &rest))
			continue;
		fn(arg, key, state, sl, rest);
	}
}

/* ---- what is not enforced as written ---- */

struct diff_group {
	uint32_t kind, reason;
	const char *what;
};

/* The groups of a report's differences, in the order the line gives them:
 * what, then the names, then why. */
static const struct diff_group diff_groups[] = {
	{ IOUR_DECISION_TIGHTENED, IOUR_REASON_NO_FILTERS,
	  "denied although the policy allows them|argument rules need filters, Linux 7.0+; "
	  "fallback closed" },
	{ IOUR_DECISION_TIGHTENED, IOUR_REASON_NO_PAYLOAD,
	  "denied although the policy allows them|the kernel does not give the payload the "
	  "rules read; fallback closed" },
	{ IOUR_DECISION_LOOSENED, IOUR_REASON_NO_FILTERS,
	  "allowed with any arguments|argument rules need filters, Linux 7.0+; fallback open" },
	{ IOUR_DECISION_LOOSENED, IOUR_REASON_NO_PAYLOAD,
	  "allowed with any arguments|the kernel does not give the payload the rules read; "
	  "fallback open" },
	{ IOUR_DECISION_LOOSENED, IOUR_REASON_FIXED_FILES,
	  "plain descriptors although IOSQE_FIXED_FILE is required|" },
	{ IOUR_DECISION_LOOSENED, IOUR_REASON_NOT_EXPRESSIBLE,
	  "ring-less register calls the policy does not allow work|the ring broker restricts "
	  "rings only" },
};

/* Names of the decisions of group @g (request opcodes, or register
 * opcodes for ring-less register calls), comma-separated. */
static size_t diff_names(const struct iour_report *r, const struct diff_group *g, char *buf,
			 size_t len)
{
	struct iour_decision d = { .sz = sizeof(d) };
	int n = iour_report__decision_cnt(r);
	size_t cnt = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *name = NULL;
		size_t used = strlen(buf);

		if (iour_report__decision(r, (size_t)i, &d) || d.kind != g->kind ||
		    d.reason != g->reason)
			continue;
		if (d.opcode != IOUR_DECISION_NO_OPCODE)
			name = iour_opcode_name(d.opcode);
		else if (g->reason == IOUR_REASON_NOT_EXPRESSIBLE && d.value > 0)
			name = iour_register_op_name((uint32_t)d.value);
		if (!name || strstr(buf, name))
			continue;
		snprintf(buf + used, len - used, "%s%s%s", used ? ", " : "",
			 d.opcode == IOUR_DECISION_NO_OPCODE ? "fd -1 " : "", name);
		cnt++;
	}
	return cnt;
}

int cli_report_diffs(FILE *f, const struct iour_report *r, const char *sep)
{
	char names[1024];
	int groups = 0;

	for (size_t i = 0; i < sizeof(diff_groups) / sizeof(diff_groups[0]); i++) {
		const char *what = diff_groups[i].what, *why = strchr(what, '|') + 1;

		if (!diff_names(r, &diff_groups[i], names, sizeof(names)))
			continue;
		fprintf(f, "%s%.*s: %s%s%s%s", sep, (int)(why - 1 - what), what, names,
			*why ? " (" : "", why, *why ? ")" : "");
		groups++;
	}
	return groups;
}

/* Documented in cli.h */
void cli_peers_probe(struct cli_peers *p)
{
	char buf[8];
	ssize_t n;
	int fd;

	p->landlock_abi = syscall(444 /* landlock_create_ruleset */, NULL, 0, 1 /* VERSION */);
	if (p->landlock_abi < 0)
		p->landlock_abi = 0;
	p->yama = -1;
	fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n > 0 && buf[0] >= '0' && buf[0] <= '9')
			p->yama = buf[0] - '0';
		close(fd);
	}
}

/* Documented in cli.h */
bool cli_peers_mem_closed(const struct cli_peers *p)
{
	return p->landlock_abi >= 2 || p->yama >= 1;
}

/* Documented in cli.h */
bool cli_ring_acquire(enum cli_mech m, const struct cli_peers *p, char *buf, size_t len)
{
	const char *setup, *mem;
	bool closed;

	switch (m) {
	case CLI_MECH_TASK:
		setup = "io_uring_setup (the task set restricts every new ring)";
		break;
	case CLI_MECH_BROKER:
		setup = "io_uring_setup (brokered: every new ring restricted)";
		break;
	case CLI_MECH_COMPANION:
		setup = "io_uring_setup (fails)";
		break;
	default:
		/* One ring: the program may create others. */
		snprintf(buf, len, "open: io_uring_setup (only the policy's ring is restricted)");
		return false;
	}
	if (!p)
		mem = "/proc/PID/mem of other processes of the uid (closed where the kernel has "
		      "Landlock ABI 2, 5.19+, or Yama ptrace_scope 1+; open otherwise)";
	else if (p->landlock_abi >= 2)
		mem = "/proc/PID/mem (Landlock)";
	else if (p->yama >= 1)
		mem = "/proc/PID/mem (Yama)";
	else
		mem = "/proc/PID/mem of other processes of the uid (no Landlock ABI 2, no Yama)";
	closed = p && cli_peers_mem_closed(p);
	snprintf(buf, len,
		 "%s%s%sclosed: %s, inherited fds (run closes them), SCM_RIGHTS and /proc/PID/fd "
		 "(refused by the kernel), ring fds in fixed tables (EBADF), ptrace attach, "
		 "pidfd_getfd, process_vm_* (the peer guard's seccomp part)%s%s",
		 closed ? "" : "open: ", closed ? "" : mem, closed ? "" : "; ", setup,
		 closed ? ", " : "", closed ? mem : "");
	return closed;
}

int cli_effect_split(const char *text, char *key, size_t keylen, const char **state,
		     size_t *statelen, const char **rest)
{
	const char *s, *colon, *semi;

	if (!text || strncmp(text, "effect ", 7))
		return -1;
	s = text + 7;
	colon = strstr(s, ": ");
	if (!colon)
		return -1;
	snprintf(key, keylen, "%.*s", (int)(strcspn(s, " ") < (size_t)(colon - s) ?
						     strcspn(s, " ") :
						     (size_t)(colon - s)),
		 s);
	*state = colon + 2;
	semi = strstr(*state, "; ");
	*statelen = semi ? (size_t)(semi - *state) : strlen(*state);
	*rest = semi ? semi + 2 : "";
	return 0;
}
