/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict agent: an OCI seccomp agent (runtime-spec
 * `linux.seccomp.listenerPath`).  runc and crun connect to its UNIX socket
 * while they create a container and send one message: the container's
 * state as JSON, and the seccomp listener of the container's filter as
 * SCM_RIGHTS.  A filter whose `io_uring_setup` action is SCMP_ACT_NOTIFY
 * then sends every io_uring_setup() of the container here.
 *
 * A container's policy file is named by its annotation
 * `org.iouring-restrict.policy`, else by the runtime's listenerMetadata, a
 * --config rule or --default-policy (policy_select(), doc/agent.md).  For
 * a container with a policy, the agent plans that policy for the ring broker on the
 * running kernel (IOUR_PLAN_BROKERED, as `explain --mechanism broker`
 * does) and hands the listener to a ring broker (broker.h): every ring the
 * container creates is created by the broker, restricted, and installed in
 * the container (doc/containers.md, doc/security.md).  A container without
 * a policy, or whose policy cannot be loaded, gets EPERM from every
 * io_uring_setup(), answered here.  SIGHUP reloads the configuration
 * (agent_reload()), SIGUSR1 logs the status (agent_status()).
 *
 * One epoll loop serves the agent's socket, the runtimes' connections
 * (each with a deadline, so that no client can stall the others), every
 * container's broker, and SIGTERM/SIGINT/SIGHUP through a signalfd.
 * Nothing in the loop waits on a container: its broker (IOUR_BROKER_NONBLOCK)
 * only takes notifications, and everything that can wait on the container
 * (reading its memory, installing the fd) runs in a worker process with a
 * deadline, at most 4 per container and 64 for the agent (broker.h,
 * doc/security.md 3a).  A container whose params never arrive gets EFAULT
 * after 2 s, logged; the others and new runtime connections are served
 * meanwhile, and SIGTERM ends the agent at once (the workers are killed).
 * Each container may hold at most --max-rings rings alive at once (the
 * broker's max_rings; more calls get ENOMEM, logged).
 * If the agent dies, the kernel answers the containers' io_uring_setup()
 * with ENOSYS: nothing fails open.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <iouring_restrict/broker.h>

#include "agent/agent.h"
#include "core/cli.h"

const char cli_help_agent[] =
	"Usage: iour-restrict agent --socket PATH [--log FILE] [--log-format text|json]\n"
	"                           [--policy-dir DIR] [--config FILE]\n"
	"                           [--default-policy FILE] [--max-rings N]\n"
	"                           [--control PATH] [--log-denials]\n"
	"                           [--report-interval SEC]\n"
	"       iour-restrict agent --query PATH\n"
	"\n"
	"An OCI seccomp agent for runc and crun (runtime-spec\n"
	"linux.seccomp.listenerPath).  It listens on the UNIX socket PATH; the\n"
	"container runtime connects while it creates a container and passes the\n"
	"listener of the container's seccomp filter.  A filter whose action for\n"
	"io_uring_setup is SCMP_ACT_NOTIFY then sends every io_uring_setup() of\n"
	"the container to the agent, which creates the ring itself, restricted by\n"
	"the policy file named in the container's annotation\n"
	"org.iouring-restrict.policy (a path on the host), and installs it in the\n"
	"container.  Without that annotation, the policy is the profile's\n"
	"listenerMetadata (a file name in --policy-dir), else the first --config\n"
	"rule matching the container's annotations, else --default-policy.  A\n"
	"container without a policy, or whose policy cannot be loaded, gets EPERM\n"
	"from io_uring_setup().  One line is logged per container and per ring.\n"
	"If the agent stops, io_uring_setup() fails with\n"
	"ENOSYS in the containers it served.  doc/containers.md has the setup for\n"
	"runc, crun, podman and containerd.\n"
	"\n"
	"Options:\n"
	"  -s, --socket PATH      the socket to listen on (mode 0600; an existing\n"
	"                         socket nobody listens on is replaced, any other\n"
	"                         file is not)\n"
	"  -l, --log FILE         append the log to FILE, with timestamps (default:\n"
	"                         standard error, without); SIGHUP reopens it\n"
	"      --log-format F     text (logfmt, the default) or json (JSON lines)\n"
	"  -p, --policy-dir DIR   accept only policy files inside DIR\n"
	"      --config FILE      JSON rules mapping annotations to policy files in\n"
	"                         DIR (needs --policy-dir); SIGHUP reads it again\n"
	"      --default-policy FILE  the policy of containers that name none\n"
	"      --max-rings N      rings each container may hold alive at once\n"
	"                         (default 1024; 0: no limit); more get ENOMEM\n"
	"                         (while calls are served at once, up to 3 more\n"
	"                         may be handed out)\n"
	"      --control PATH     also listen on PATH (mode 0600, like --socket):\n"
	"                         each connection gets the status lines, then EOF\n"
	"      --query PATH       print the status a running agent writes to its\n"
	"                         --control socket PATH (in its log format), exit\n"
	"      --log-denials      log, per container, the requests and register\n"
	"                         calls its rings denied (EACCES), rate-limited,\n"
	"                         and count them (needs root and tracefs)\n"
	"      --report-interval SEC  seconds between the audit and denial\n"
	"                         lines of a container (default 10)\n"
	"  -h, --help             show this help\n"
	"\n"
	"Example: iour-restrict agent --socket /run/iour-restrict/agent.sock\n"
	"\n"
	"SIGHUP reopens the log and reads --policy-dir and --config again (running\n"
	"containers keep their policy; a bad --config keeps the previous one).\n"
	"SIGUSR1 logs a status line for the agent and one per container.\n"
	"The annotation org.iouring-restrict.mode=audit puts a container in audit\n"
	"mode: its rings are NOT restricted by the policy, and what the policy\n"
	"would deny is logged with the container id (needs root and tracefs).\n"
	"\n"
	"Exit status: 0 after SIGTERM or SIGINT; 1 if the socket, the log,\n"
	"--config or --default-policy cannot be set up; 2 on a usage error.\n"
	"With --query: 0 when the status was read, 1 when no agent answered.\n";

/* The rings of a container in audit mode: every opcode, register opcode
 * and SQE flag allowed (doc/policy-files.md: what "allow" leaves out). */
#define AUDIT_OPEN_POLICY "{ \"defaultAction\": \"allow\" }"

static struct ent listen_ent = { .kind = ENT_LISTEN };
static struct ent control_ent = { .kind = ENT_CONTROL };
static struct ent signal_ent = { .kind = ENT_SIGNAL };

static void container_free(struct container *c)
{
	if (!c)
		return;
	iour_broker__free(c->broker);
	iour_plan__free(c->plan);
	iour_plan__free(c->audit_plan);
	if (c->deny_fd >= 0)
		close(c->deny_fd);
	free(c->id);
	free(c->policy);
	free(c);
}

/* A container's counts so far: its broker's, or the calls refused here. */
static void container_counts(const struct container *c, struct agent_counts *out)
{
	memset(out, 0, sizeof(*out));
	if (c->broker) {
		struct iour_broker_counters n = { .sz = sizeof(n) };

		if (iour_broker__counters(c->broker, &n))
			return;
		out->served = n.served;
		out->refused = n.refused;
		out->quota = n.refused_quota;
		out->deadline = n.refused_deadline;
		out->busy = n.refused_busy;
		out->accounting = n.refused_accounting;
	} else {
		out->refused = c->refused;
	}
	/* counted by the denial log only (agent_watch.c) */
	out->denials = c->denials;
	out->denials_known = c->denials_counted;
}

/* The counts as fields of a gone or status line. */
static void line_counts(struct agent_line *l, const struct container *c)
{
	struct agent_counts n;

	container_counts(c, &n);
	agent_line_u64(l, "rings", n.served);
	agent_line_u64(l, "refused", n.refused);
	agent_line_u64(l, "deadline", n.deadline);
	agent_line_u64(l, "busy", n.busy);
	agent_line_u64(l, "quota", n.quota);
	agent_line_u64(l, "accounting", n.accounting);
	/* requests denied in the container's rings: counted with
	 * --log-denials (and tracefs), else null */
	if (n.denials_known)
		agent_line_u64(l, "denials", n.denials);
	else
		agent_line_null(l, "denials");
}

static void container_drop(struct agent *a, struct container *c, const char *why)
{
	struct container **pp;
	struct agent_line l;

	/* its last audit or denial lines, and its count, first */
	agent_watch_gone(a, c);
	l = agent_line_container(a, "gone", c);

	agent_line_raw(&l, "reason", why);
	if (c->suppressed)
		agent_line_u64(&l, "suppressed", c->suppressed);
	line_counts(&l, c);
	agent_line_str(&l, "policy", c->policy ? c->policy : "none");
	agent_line_raw(&l, "source", agent_source_str(c->source));
	agent_line_end(&l);
	for (pp = &a->containers; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	a->ncontainers--;
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, c->broker ? iour_broker__fd(c->broker) : c->deny_fd,
		  NULL);
	c->ent.dead = true;
	c->ent.grave_next = a->grave;
	a->grave = &c->ent;
}

static const char *errno_name(int err)
{
	const char *n = err > 0 ? strerrorname_np(err) : NULL;

	return n ? n : "unknown";
}

/* May the container log one more ring line?  (A token bucket.) */
static bool ring_line_allowed(struct container *c)
{
	long long now = agent_now_ms();

	c->line_tokens += (double)(now - c->line_ms) * AGENT_RING_LINES_PER_S / 1000.0;
	if (c->line_tokens > AGENT_RING_LINES_BURST)
		c->line_tokens = AGENT_RING_LINES_BURST;
	c->line_ms = now;
	if (c->line_tokens < 1.0) {
		c->suppressed++;
		return false;
	}
	c->line_tokens -= 1.0;
	return true;
}

/* Ends a ring line: how many were not logged before it. */
static void ring_line_end(struct container *c, struct agent_line *l)
{
	if (c->suppressed)
		agent_line_u64(l, "suppressed", c->suppressed);
	c->suppressed = 0;
	agent_line_end(l);
}

/* The broker's callback: one line per ring the container asked for. */
static void on_ring(void *arg, const struct iour_broker_event *ev)
{
	struct container *c = arg;
	struct agent_line l;

	if (ev->result >= 0)
		agent_watch_ring(c, ev->pid);
	if (!ring_line_allowed(c))
		return;
	l = agent_line_container(c->agent, "ring", c);
	agent_line_int(&l, "task", ev->pid);
	agent_line_u64(&l, "entries", ev->entries);
	agent_line_fmt(&l, "flags", "0x%x", ev->setup_flags);
	if (ev->result >= 0) {
		agent_line_raw(&l, "result", "ok");
		agent_line_int(&l, "fd", ev->result);
	} else {
		agent_line_raw(&l, "result", errno_name(-ev->result));
	}
	agent_line_str(&l, "policy", c->policy);
	if (ev->what)
		agent_line_str(&l, ev->result >= 0 ? "registered" : "why", ev->what);
	ring_line_end(c, &l);
}

/*
 * A container without a usable policy: every notification is answered
 * with EPERM, as io_uring_setup() itself answers where io_uring is
 * disabled.  Called when the listener is readable, so RECV does not block
 * (a notification whose task died meanwhile gives ENOENT: nothing to do).
 */
static void deny_one(struct agent *a, struct container *c)
{
	struct seccomp_notif req;
	struct seccomp_notif_resp resp;
	struct agent_line l;

	memset(&req, 0, sizeof(req));
	if (ioctl(c->deny_fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
		if (errno != ENOENT && errno != EINTR)
			agent_log_msg(a, "notification: %s", strerror(errno));
		return;
	}
	memset(&resp, 0, sizeof(resp));
	resp.id = req.id;
	resp.error = -EPERM;
	if (ioctl(c->deny_fd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
		agent_log_msg(a, "answering a notification: %s", strerror(errno));
	c->refused++;
	if (!ring_line_allowed(c))
		return;
	l = agent_line_container(a, "ring", c);
	agent_line_u64(&l, "task", req.pid);
	agent_line_u64(&l, "entries", (uint32_t)req.data.args[0]);
	agent_line_raw(&l, "result", "EPERM");
	agent_line_str(&l, "why", c->deny_why);
	ring_line_end(c, &l);
}

/*
 * The policy of a container: @path from its annotation, absolute, inside
 * --policy-dir if one was given, loaded and planned for one ring on the
 * running kernel.  0 or -1 with *why set (a static string) and the detail
 * logged.
 */
static int container_plan(struct agent *a, struct container *c, const char *path, const char *text,
			  struct iour_plan **out, const char **why)
{
	struct iour_policy_load_opts lo = { .sz = sizeof(lo) };
	struct iour_load_error e;
	struct iour_policy *pol = NULL;
	char *real = NULL;
	int r;

	if (text)
		goto load;
	if (path[0] != '/') {
		*why = "the policy path is not absolute";
		return -1;
	}
	if (a->policy_dir) {
		size_t n = strlen(a->policy_dir);

		real = realpath(path, NULL);
		if (!real) {
			*why = "the policy file cannot be found";
			return -1;
		}
		if (strncmp(real, a->policy_dir, n) != 0 || real[n] != '/') {
			free(real);
			*why = "the policy file is outside --policy-dir";
			return -1;
		}
		path = real;
	}
load:
	memset(&e, 0, sizeof(e));
	e.sz = sizeof(e);
	r = text ? iour_policy__load_json(text, strlen(text), &lo, &pol, &e) :
		   iour_policy__load_file(path, &lo, &pol, &e);
	if (r) {
		struct agent_line l = agent_line_container(a, NULL, c);

		agent_line_str(&l, "policy", path);
		agent_line_raw(&l, "error", errno_name(-r));
		agent_line_u64(&l, "line", e.line);
		agent_line_u64(&l, "column", e.column);
		agent_line_str(&l, "message", e.message[0] ? e.message : cli_strerror(r));
		agent_line_end(&l);
		free(real);
		*why = "the policy file cannot be loaded";
		return -1;
	}
	free(real);
	/* The ring broker's view, as `explain --mechanism broker` plans it
	 * (mechanism.c): the same status and effects.  Every policy restricts
	 * each ring of the container, whatever target its file names. */
	r = iour_policy__set_attr(pol, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_TASK);
	if (!r) {
		struct iour_plan_opts po = { .sz = sizeof(po) };
		enum cli_mech used;

		r = cli_plan_mech(pol, &po, CLI_MECH_BROKER, &used, out);
		if (r > 0)
			r = -EOPNOTSUPP;
	}
	iour_policy__free(pol);
	if (r) {
		struct agent_line l = agent_line_container(a, "planning", c);

		agent_line_raw(&l, "error", errno_name(-r));
		agent_line_str(&l, "message", cli_strerror(r));
		agent_line_end(&l);
		*why = "the policy cannot be planned for this kernel";
		return -1;
	}
	return 0;
}

/* The effects as `explain --mechanism broker` lists them:
 * " effects=KEY:STATE,..." ("none" when the policy touches none). */
struct effect_log {
	FILE *f;
	int n;
};

static void effect_item(void *arg, const char *key, const char *state, size_t sl, const char *rest)
{
	struct effect_log *el = arg;

	(void)rest;
	fprintf(el->f, "%s%s:%.*s", el->n++ ? "," : "", key, (int)sl, state);
}

static void line_effects(struct agent_line *l, const struct iour_report *rep)
{
	struct effect_log el = { .n = 0 };
	char *buf = NULL;
	size_t len = 0;

	el.f = open_memstream(&buf, &len);
	if (!el.f)
		return;
	cli_effects_each(rep, effect_item, &el);
	fclose(el.f);
	agent_line_raw(l, "effects", el.n && buf ? buf : "none");
	free(buf);
}

static int watch(struct agent *a, int fd, struct ent *e)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = e };

	(void)a;
	return epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * The policy of a container from its state (doc/agent.md, "Policy
 * selection"), tried in this order: the annotation AGENT_ANNOTATION (a
 * path); the runtime's listenerMetadata @meta (a file name in
 * --policy-dir); the first rule of --config matching its annotations (a
 * file name in --policy-dir); --default-policy.  Sets *path (allocated,
 * or NULL for none) and returns where it came from; a source that names
 * a policy wrongly is not passed over: the container then gets EPERM,
 * *why saying why (so a typo cannot give a container another policy).
 */
static enum agent_source policy_select(struct agent *a, const json_t *ann, const char *meta,
				       char **path, const char **why)
{
	const struct agent_rule *rule;
	json_t *v = json_is_object(ann) ? json_object_get(ann, AGENT_ANNOTATION) : NULL;

	*path = NULL;
	if (json_is_string(v)) {
		*path = strdup(json_string_value(v));
		return AGENT_SRC_ANNOTATION;
	}
	if (meta && meta[0]) {
		if (!a->policy_dir) {
			*why = "listenerMetadata names a policy but the agent has no --policy-dir";
			return AGENT_SRC_METADATA;
		}
		if (!agent_policy_name_ok(meta)) {
			*why = "listenerMetadata is not a plain file name in --policy-dir";
			return AGENT_SRC_METADATA;
		}
		if (asprintf(path, "%s/%s", a->policy_dir, meta) < 0)
			*path = NULL;
		return AGENT_SRC_METADATA;
	}
	rule = agent_config_match(&a->config, ann);
	if (rule) {
		if (asprintf(path, "%s/%s", a->policy_dir, rule->policy) < 0)
			*path = NULL;
		return AGENT_SRC_CONFIG;
	}
	if (a->default_policy) {
		*path = strdup(a->default_policy);
		return AGENT_SRC_DEFAULT;
	}
	*why = "no policy: no " AGENT_ANNOTATION " annotation, listenerMetadata, matching "
	       "--config rule or --default-policy";
	return AGENT_SRC_NONE;
}

/*
 * A container from a runtime's message: the listener @fd (owned from here
 * on), its id and pid, its annotations (a JSON object or NULL) and the
 * runtime's listenerMetadata (or NULL).
 */
static void container_add(struct agent *a, int fd, const char *id, int pid, const json_t *ann,
			  const char *meta)
{
	struct container *c = calloc(1, sizeof(*c));
	struct iour_broker_opts bo = { .sz = sizeof(bo) };
	const char *why = NULL;
	struct agent_line l;
	char *policy = NULL;
	int wfd, r;

	if (c)
		c->source = policy_select(a, ann, meta, &policy, &why);
	if (!c || !(c->id = strdup(id)) || (c->source != AGENT_SRC_NONE && !why && !policy)) {
		agent_log_msg(a, "out of memory: closing the listener of a container");
		close(fd);
		free(policy);
		container_free(c);
		return;
	}
	c->policy = policy;
	c->ent.kind = ENT_CONTAINER;
	c->agent = a;
	c->pid = pid;
	c->deny_fd = -1;
	c->start_ms = agent_now_ms();
	c->line_tokens = AGENT_RING_LINES_BURST;
	c->line_ms = agent_now_ms();
	if (json_is_object(ann)) {
		const json_t *m = json_object_get(ann, AGENT_MODE_ANNOTATION);

		if (m && json_is_string(m) && !strcmp(json_string_value(m), "audit")) {
			c->audit = true;
		} else if (m && !(json_is_string(m) && !strcmp(json_string_value(m), "enforce"))) {
			/* an unknown mode enforces nothing it was not asked
			 * to: the container's rings are refused */
			free(policy);
			c->policy = policy = NULL;
			why = "the annotation " AGENT_MODE_ANNOTATION
			      " is neither audit nor enforce";
		}
	}
	/* Audit mode (doc/agent.md): the policy is planned for the verdicts
	 * only; the rings are created from a plan allowing everything. */
	if (policy && c->audit &&
	    (container_plan(a, c, policy, NULL, &c->audit_plan, &why) ||
	     container_plan(a, c, NULL, AUDIT_OPEN_POLICY, &c->plan, &why)))
		policy = NULL;
	if (policy && (c->audit || !container_plan(a, c, policy, NULL, &c->plan, &why))) {
		/* The broker owns the listener on success only: on failure
		 * the agent keeps it, to refuse the container's rings. */
		bo.on_ring = on_ring;
		bo.arg = c;
		/* never wait inside serve: every other container would wait
		 * too.  The default deadline (2 s) and worker limits (4 per
		 * container, 64 in all) apply; --max-rings is the ring
		 * quota. */
		bo.flags = IOUR_BROKER_NONBLOCK;
		bo.max_rings = a->max_rings;
		r = iour_broker__new(c->plan, fd, &bo, &c->broker);
		if (r) {
			l = agent_line_container(a, "broker", c);
			agent_line_raw(&l, "error", errno_name(-r));
			agent_line_str(&l, "message", cli_strerror(r));
			agent_line_end(&l);
			c->broker = NULL;
			why = "the ring broker could not start";
		} else {
			fd = -1;
		}
	}
	if (!c->broker) {
		c->deny_fd = fd;
		c->deny_why = why;
	}
	wfd = c->broker ? iour_broker__fd(c->broker) : c->deny_fd;
	if (watch(a, wfd, &c->ent)) {
		agent_log_msg(a, "epoll: %s: closing the listener of a container", strerror(errno));
		container_free(c);
		return;
	}
	c->next = a->containers;
	a->containers = c;
	a->ncontainers++;
	if (c->broker && (r = agent_watch_add(a, c, c->audit_plan)) && r != -EPERM)
		agent_log_msg(a, "watching container %s: %s", c->id, cli_strerror(r));
	l = agent_line_container(a, "new", c);
	agent_line_str(&l, "policy", c->policy ? c->policy : "none");
	if (c->broker && c->audit) {
		/* what the audit plan's broker refuses (SQPOLL before 7.0,
		 * R_DISABLED) still is refused; nothing else is enforced */
		agent_line_raw(&l, "mode", "audit");
		agent_line_raw(&l, "enforced", "no");
		agent_line_str(&l, "watch", agent_watch_note(a, c));
	} else if (c->broker) {
		const struct iour_report *rep = iour_plan__report(c->plan);

		agent_line_raw(&l, "status", rep ? iour_status_str(iour_report__status(rep)) : "?");
		if (rep)
			line_effects(&l, rep);
		if (a->log_denials)
			agent_line_str(&l, "watch", agent_watch_note(a, c));
	} else {
		agent_line_raw(&l, "io_uring_setup", "EPERM");
		agent_line_str(&l, "why", why);
	}
	agent_line_raw(&l, "source", agent_source_str(c->source));
	agent_line_end(&l);
}

static void container_event(struct agent *a, struct container *c, uint32_t events)
{
	if (events & EPOLLIN) {
		if (!c->broker) {
			deny_one(a, c);
			return;
		}
		int r = iour_broker__serve(c->broker);

		if (r == -ENOENT) {
			container_drop(a, c, "exited");
			return;
		}
		if (r < 0 && r != -EINTR && r != -EAGAIN) {
			struct agent_line l = agent_line_container(a, "serve", c);

			agent_line_raw(&l, "error", errno_name(-r));
			agent_line_str(&l, "message", cli_strerror(r));
			agent_line_end(&l);
		}
		return;
	}
	/* EPOLLHUP of a refusing container's listener: every task of the
	 * filter has exited (a broker's fd never hangs up: serve says
	 * -ENOENT). */
	if (events & (EPOLLHUP | EPOLLERR))
		container_drop(a, c, "exited");
}

/* ---- the runtimes' connections */

static void client_free(struct agent *a, struct client *cl)
{
	struct client **pp;

	for (pp = &a->clients; *pp; pp = &(*pp)->next) {
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	}
	a->nclients--;
	epoll_ctl(a->epfd, EPOLL_CTL_DEL, cl->fd, NULL);
	cl->ent.dead = true;
	cl->ent.grave_next = a->grave;
	a->grave = &cl->ent;
}

static void client_release(struct client *cl)
{
	close(cl->fd);
	for (int i = 0; i < cl->nfds; i++)
		if (cl->fds[i] >= 0)
			close(cl->fds[i]);
	free(cl->buf);
	free(cl);
}

/* Frees what the batch of events dropped. */
static void grave_empty(struct agent *a)
{
	while (a->grave) {
		struct ent *e = a->grave;

		a->grave = e->grave_next;
		if (e->kind == ENT_CLIENT)
			client_release((struct client *)e);
		else
			container_free((struct container *)e);
	}
}

/*
 * The runtime's message: {"ociVersion", "fds": [names], "pid", "state":
 * {"id", "pid", "annotations", ...}}; unknown fields are ignored.  The
 * listener is the fd named "seccompFd" (the only fd if "fds" is absent).
 * Returns 0 when the message was taken (or refused and logged), 1 if more
 * bytes are needed.
 */
static int client_message(struct agent *a, struct client *cl, bool eof)
{
	json_error_t je;
	json_t *root, *state, *fds, *v;
	const char *id = "?", *meta = NULL;
	int pid = 0, idx = -1, fd;

	root = json_loadb(cl->buf, cl->len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		if (!eof && je.position >= (int)cl->len)
			return 1; /* not complete yet */
		agent_log_msg(a, "runtime message: not JSON (%s at byte %d): connection dropped",
			      je.text, je.position);
		return 0;
	}
	state = json_object_get(root, "state");
	if (!json_is_object(state)) {
		agent_log_msg(a, "runtime message: no \"state\" object: connection dropped");
		json_decref(root);
		return 0;
	}
	v = json_object_get(state, "id");
	if (json_is_string(v))
		id = json_string_value(v);
	v = json_object_get(state, "pid");
	if (!json_is_integer(v))
		v = json_object_get(root, "pid");
	if (json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) <= INT_MAX)
		pid = (int)json_integer_value(v);
	fds = json_object_get(root, "fds");
	if (json_is_array(fds)) {
		for (size_t i = 0; i < json_array_size(fds); i++) {
			v = json_array_get(fds, i);
			if (json_is_string(v) && !strcmp(json_string_value(v), "seccompFd")) {
				idx = (int)i;
				break;
			}
		}
	} else if (!fds && cl->nfds == 1) {
		idx = 0;
	}
	if (idx < 0 || idx >= cl->nfds) {
		struct agent_line l = agent_line_begin(a, NULL, id, pid);
		char msg[64];

		snprintf(msg, sizeof(msg), "no seccomp listener in the message (%d fds)", cl->nfds);
		agent_line_str(&l, "error", msg);
		agent_line_end(&l);
		json_decref(root);
		return 0;
	}
	/* listenerMetadata: runc and crun send it as "metadata" */
	v = json_object_get(root, "metadata");
	if (json_is_string(v))
		meta = json_string_value(v);
	fd = cl->fds[idx];
	cl->fds[idx] = -1;
	container_add(a, fd, id, pid, json_object_get(state, "annotations"), meta);
	json_decref(root);
	return 0;
}

/* Reads what the runtime sent; the fds come with the first bytes. */
static void client_read(struct agent *a, struct client *cl)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * AGENT_FDS_MAX)];
		struct cmsghdr align;
	} cbuf;
	char data[8192];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	ssize_t n;
	char *nb;

	for (;;) {
		mh.msg_control = cbuf.buf;
		mh.msg_controllen = sizeof(cbuf.buf);
		n = recvmsg(cl->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			agent_log_msg(a, "runtime connection: %s: dropped", strerror(errno));
			client_free(a, cl);
			return;
		}
		for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			size_t cnt;

			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
				continue;
			cnt = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t i = 0; i < cnt; i++) {
				int fd;

				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
				if (cl->nfds < AGENT_FDS_MAX)
					cl->fds[cl->nfds++] = fd;
				else
					close(fd);
			}
		}
		if (mh.msg_flags & MSG_CTRUNC) {
			agent_log_msg(a, "runtime connection: more than %d fds: dropped",
				      AGENT_FDS_MAX);
			client_free(a, cl);
			return;
		}
		if (n > 0) {
			if (cl->len + (size_t)n > AGENT_MSG_MAX) {
				agent_log_msg(a, "runtime message: longer than %u bytes: dropped",
					      AGENT_MSG_MAX);
				client_free(a, cl);
				return;
			}
			nb = realloc(cl->buf, cl->len + (size_t)n);
			if (!nb) {
				agent_log_msg(a, "runtime message: out of memory: dropped");
				client_free(a, cl);
				return;
			}
			cl->buf = nb;
			memcpy(cl->buf + cl->len, data, (size_t)n);
			cl->len += (size_t)n;
		}
		if (n == 0 && cl->len == 0) {
			agent_log_msg(a, "runtime connection closed without a message");
			client_free(a, cl);
			return;
		}
		if (client_message(a, cl, n == 0) == 0) {
			client_free(a, cl);
			return;
		}
		if (n == 0)
			return; /* unreachable: at EOF the message is decided */
	}
}

static void client_accept(struct agent *a)
{
	struct client *cl;
	int fd;

	for (;;) {
		fd = accept4(a->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
				agent_log_msg(a, "accept: %s", strerror(errno));
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		if (a->nclients >= AGENT_CLIENTS_MAX) {
			agent_log_msg(a,
				      "more than %d runtimes connected at once: connection refused",
				      AGENT_CLIENTS_MAX);
			close(fd);
			continue;
		}
		cl = calloc(1, sizeof(*cl));
		if (!cl) {
			agent_log_msg(a, "out of memory: connection refused");
			close(fd);
			continue;
		}
		cl->ent.kind = ENT_CLIENT;
		cl->fd = fd;
		cl->deadline_ms = agent_now_ms() + AGENT_CLIENT_TIMEOUT_MS;
		if (watch(a, fd, &cl->ent)) {
			agent_log_msg(a, "epoll: %s: connection refused", strerror(errno));
			close(fd);
			free(cl);
			continue;
		}
		cl->next = a->clients;
		a->clients = cl;
		a->nclients++;
	}
}

/* Drops the clients past their deadline; returns the epoll timeout until
 * the next deadline (-1: none). */
static int client_timeouts(struct agent *a)
{
	long long now = agent_now_ms(), next = -1;
	struct client *cl, *nx;

	for (cl = a->clients; cl; cl = nx) {
		nx = cl->next;
		if (cl->deadline_ms <= now) {
			agent_log_msg(
				a, "runtime connection: no complete message within %d ms: dropped",
				AGENT_CLIENT_TIMEOUT_MS);
			client_free(a, cl);
		} else if (next < 0 || cl->deadline_ms < next) {
			next = cl->deadline_ms;
		}
	}
	return next < 0 ? -1 : (int)(next - now);
}

/* ---- the socket */

/* Listens on the UNIX socket @path (mode 0600): a stale socket nobody
 * listens on is replaced, any other file is not.  @opt names the option in
 * messages. */
static int unix_listen(const char *opt, const char *path, int *lfd, dev_t *dev, ino_t *ino)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return cli_usage("%s: the path is longer than %zu bytes", opt,
				 sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			cli_msg("%s exists and is not a socket: not replacing it", path);
			return CLI_FAIL;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return cli_fail(-errno, "socket");
		r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		close(fd);
		if (!r) {
			cli_msg("%s: another agent is listening on it", path);
			return CLI_FAIL;
		}
		if (unlink(path) && errno != ENOENT)
			return cli_fail(-errno, "removing the stale socket %s", path);
	} else if (errno != ENOENT) {
		return cli_fail(-errno, "%s", path);
	}
	*lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (*lfd < 0)
		return cli_fail(-errno, "socket");
	old = umask(0177);
	r = bind(*lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r)
		return cli_fail(-errno, "binding %s", path);
	if (chmod(path, 0600) || lstat(path, &st)) {
		r = -errno;
		unlink(path);
		return cli_fail(r, "%s", path);
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	if (listen(*lfd, 128)) {
		r = -errno;
		unlink(path);
		return cli_fail(r, "listening on %s", path);
	}
	return 0;
}

static int sock_open(struct agent *a)
{
	return unix_listen("--socket", a->sock_path, &a->lfd, &a->sock_dev, &a->sock_ino);
}

/* Removes the socket if it is still the one this agent created. */
static void sock_remove(const char *path, dev_t dev, ino_t ino)
{
	struct stat st;

	if (!lstat(path, &st) && st.st_dev == dev && st.st_ino == ino)
		unlink(path);
}

static int log_open(struct agent *a)
{
	int fd = open(a->log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOCTTY, 0600);
	FILE *f;

	if (fd < 0)
		return -errno;
	f = fdopen(fd, "a");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	if (a->log)
		fclose(a->log);
	a->log = f;
	return 0;
}

/*
 * Checks that the policy file @path can be a container's: inside
 * --policy-dir when one is given, and loading.  0, or -1 with @err set.
 */
static int policy_usable(struct agent *a, const char *path, char *err, size_t errlen)
{
	struct iour_policy_load_opts lo = { .sz = sizeof(lo) };
	struct iour_load_error e;
	struct iour_policy *pol = NULL;
	char *real = realpath(path, NULL);
	size_t n = a->policy_dir ? strlen(a->policy_dir) : 0;
	int r;

	if (!real) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (a->policy_dir && (strncmp(real, a->policy_dir, n) || real[n] != '/')) {
		snprintf(err, errlen, "%s is outside --policy-dir", path);
		free(real);
		return -1;
	}
	memset(&e, 0, sizeof(e));
	e.sz = sizeof(e);
	r = iour_policy__load_file(real, &lo, &pol, &e);
	if (r)
		snprintf(err, errlen, "%s: %s", path, e.message[0] ? e.message : cli_strerror(r));
	iour_policy__free(pol);
	free(real);
	return r ? -1 : 0;
}

/*
 * SIGHUP: the log is reopened, --policy-dir resolved again and --config
 * read again.  Containers already running keep the plan they were given;
 * new ones get the new configuration.  A configuration that does not load
 * (or a --policy-dir that no longer resolves) leaves the previous one in
 * place, logged (doc/agent.md, "Reload").
 */
static void agent_reload(struct agent *a)
{
	struct agent_config cfg;
	struct agent_line l;
	char err[512];
	char *dir = NULL;
	int r;

	if (a->log_path && (r = log_open(a)))
		agent_log_msg(a, "reopening %s: %s", a->log_path, strerror(-r));
	if (a->policy_dir_arg) {
		dir = realpath(a->policy_dir_arg, NULL);
		if (!dir) {
			snprintf(err, sizeof(err), "--policy-dir %s: %s", a->policy_dir_arg,
				 strerror(errno));
			goto bad;
		}
	}
	if (a->config_path) {
		r = agent_config_load(a->config_path, dir, &cfg, err, sizeof(err));
		if (r)
			goto bad;
		agent_config_free(&a->config);
		a->config = cfg;
	}
	if (dir) {
		free(a->policy_dir);
		a->policy_dir = dir;
	}
	a->reloads++;
	l = agent_line_begin(a, "reload", NULL, 0);
	agent_line_raw(&l, "result", "ok");
	if (a->config_path) {
		agent_line_str(&l, "config", a->config_path);
		agent_line_u64(&l, "rules", a->config.nrules);
	}
	if (a->policy_dir)
		agent_line_str(&l, "policy-dir", a->policy_dir);
	agent_line_u64(&l, "containers", a->ncontainers);
	agent_line_end(&l);
	/* not fatal: the default policy is read for each container */
	if (a->default_policy && policy_usable(a, a->default_policy, err, sizeof(err)))
		agent_log_msg(a, "reload: --default-policy cannot be used now: %s", err);
	return;
bad:
	free(dir);
	l = agent_line_begin(a, "reload", NULL, 0);
	agent_line_raw(&l, "result", "error");
	agent_line_str(&l, "error", err);
	agent_line_raw(&l, "kept", "the previous configuration");
	agent_line_end(&l);
}

/*
 * SIGUSR1: one "status" line for the agent, then one per container with
 * its policy, where it came from and its counts so far.  Only processes
 * that may signal the agent (root, or its uid, in a pid namespace where
 * its pid is visible) can ask (doc/agent.md, "Status").
 */
static void agent_status(struct agent *a)
{
	struct agent_line l = agent_line_begin(a, "status", NULL, 0);

	agent_line_int(&l, "agent-pid", getpid());
	agent_line_u64(&l, "containers", a->ncontainers);
	agent_line_u64(&l, "connections", a->nclients);
	agent_line_u64(&l, "reloads", a->reloads);
	if (a->config_path) {
		agent_line_str(&l, "config", a->config_path);
		agent_line_u64(&l, "rules", a->config.nrules);
	}
	if (a->policy_dir)
		agent_line_str(&l, "policy-dir", a->policy_dir);
	if (a->default_policy)
		agent_line_str(&l, "default-policy", a->default_policy);
	agent_line_end(&l);
	for (struct container *c = a->containers; c; c = c->next) {
		l = agent_line_container(a, "status", c);
		agent_line_str(&l, "policy", c->policy ? c->policy : "none");
		agent_line_raw(&l, "source", agent_source_str(c->source));
		agent_line_u64(&l, "age-s",
			       (unsigned long long)(agent_now_ms() - c->start_ms) / 1000);
		line_counts(&l, c);
		agent_line_end(&l);
	}
}

/*
 * A connection to --control: the status lines, written to it as they would
 * be to the log, then EOF.  The socket is the agent's uid's only (mode
 * 0600); a reader that does not read is dropped after a second.
 */
static void control_accept(struct agent *a)
{
	struct timeval tv = { .tv_sec = 1 };
	FILE *f, *log = a->log;
	int fd;

	for (;;) {
		fd = accept4(a->cfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno != EAGAIN)
				agent_log_msg(a, "--control: accept: %s", strerror(errno));
			return;
		}
		/* accept4 leaves the connection blocking: bound each write. */
		if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) ||
		    !(f = fdopen(fd, "w"))) {
			agent_log_msg(a, "--control: %s: connection dropped", strerror(errno));
			close(fd);
			continue;
		}
		a->log = f;
		agent_status(a);
		a->log = log;
		fclose(f);
	}
}

/* --query PATH: print the status a running agent writes to its --control
 * socket.  0, or CLI_FAIL when no agent answered. */
static int agent_query(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[4096];
	ssize_t n;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path))
		return cli_usage("--query: the path is longer than %zu bytes",
				 sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return cli_fail(-errno, "socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		r = -errno;
		close(fd);
		return cli_fail(r, "--query %s: no agent answered", path);
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			return cli_fail(r, "--query %s: reading the status", path);
		}
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			break;
	}
	close(fd);
	return fflush(stdout) ? CLI_FAIL : CLI_OK;
}

/* SIGTERM, SIGINT: 1 (stop); SIGHUP: reload; SIGUSR1: status. */
static int signal_read(struct agent *a)
{
	struct signalfd_siginfo si;

	while (read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			agent_reload(a);
			continue;
		}
		if (si.ssi_signo == SIGUSR1) {
			agent_status(a);
			continue;
		}
		agent_log_msg(a,
			      "signal %s: stopping (%d containers: their io_uring_setup() fails "
			      "with ENOSYS from now on)",
			      si.ssi_signo == SIGTERM ? "TERM" : "INT", a->ncontainers);
		return 1;
	}
	return 0;
}

static int agent_loop(struct agent *a)
{
	struct epoll_event evs[32];

	for (;;) {
		int timeout = client_timeouts(a), n, wt = agent_watch_tick(a);

		if (wt >= 0 && (timeout < 0 || wt < timeout))
			timeout = wt;

		n = epoll_wait(a->epfd, evs, 32, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return cli_fail(-errno, "epoll_wait");
		}
		for (int i = 0; i < n; i++) {
			struct ent *e = evs[i].data.ptr;

			if (e->dead)
				continue;
			switch (e->kind) {
			case ENT_LISTEN:
				client_accept(a);
				break;
			case ENT_CONTROL:
				control_accept(a);
				break;
			case ENT_SIGNAL:
				if (signal_read(a))
					return CLI_OK;
				break;
			case ENT_CLIENT:
				client_read(a, (struct client *)e);
				break;
			case ENT_CONTAINER:
				container_event(a, (struct container *)e, evs[i].events);
				break;
			}
		}
		grave_empty(a);
	}
}

static void agent_close(struct agent *a)
{
	while (a->clients)
		client_free(a, a->clients);
	for (struct container *c = a->containers; c; c = c->next)
		agent_watch_gone(a, c);
	agent_watch_close(a);
	while (a->containers) {
		struct container *c = a->containers;

		a->containers = c->next;
		a->ncontainers--;
		container_free(c);
	}
	grave_empty(a);
	if (a->lfd >= 0) {
		close(a->lfd);
		sock_remove(a->sock_path, a->sock_dev, a->sock_ino);
	}
	if (a->cfd >= 0) {
		close(a->cfd);
		sock_remove(a->ctl_path, a->ctl_dev, a->ctl_ino);
	}
	if (a->sigfd >= 0)
		close(a->sigfd);
	if (a->epfd >= 0)
		close(a->epfd);
	if (a->log)
		fclose(a->log);
	free(a->policy_dir);
	agent_config_free(&a->config);
}

int cmd_agent(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ "policy-dir", required_argument, NULL, 'p' },
		{ "max-rings", required_argument, NULL, 'R' },
		{ "default-policy", required_argument, NULL, 'D' },
		{ "config", required_argument, NULL, 'C' },
		{ "log-format", required_argument, NULL, 'F' },
		{ "control", required_argument, NULL, 'T' },
		{ "query", required_argument, NULL, 'Q' },
		{ "log-denials", no_argument, NULL, 'G' },
		{ "report-interval", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent a = { .epfd = -1,
			   .lfd = -1,
			   .cfd = -1,
			   .sigfd = -1,
			   .max_rings = AGENT_MAX_RINGS,
			   .report_interval = 10 };
	const char *query = NULL;
	const char *dir = NULL;
	uint64_t v;
	sigset_t mask;
	int c, r, rc = CLI_FAIL;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:l:p:h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			a.sock_path = optarg;
			break;
		case 'l':
			a.log_path = optarg;
			break;
		case 'p':
			dir = optarg;
			break;
		case 'R':
			if (cli_parse_u64(optarg, &v) || v > UINT32_MAX)
				return cli_usage("--max-rings: '%s' is not a number from 0 to %u",
						 optarg, UINT32_MAX);
			a.max_rings = (uint32_t)v;
			break;
		case 'D':
			a.default_policy = optarg;
			break;
		case 'C':
			a.config_path = optarg;
			break;
		case 'T':
			a.ctl_path = optarg;
			break;
		case 'Q':
			query = optarg;
			break;
		case 'G':
			a.log_denials = true;
			break;
		case 'I':
			if (cli_parse_u64(optarg, &v) || v < 1 || v > 86400)
				return cli_usage(
					"--report-interval: '%s' is not a number of seconds "
					"from 1 to 86400",
					optarg);
			a.report_interval = (unsigned)v;
			break;
		case 'F':
			if (!strcmp(optarg, "json"))
				a.json = true;
			else if (strcmp(optarg, "text"))
				return cli_usage("--log-format: '%s' is not text or json", optarg);
			break;
		case 'h':
			return cli_help(cli_help_agent);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (query) {
		if (a.sock_path || a.ctl_path || a.log_path || dir || a.config_path ||
		    a.default_policy || a.json || a.log_denials)
			return cli_usage("--query takes no other option");
		return agent_query(query);
	}
	if (!a.sock_path || !a.sock_path[0])
		return cli_usage("no socket given (--socket PATH)");
	if (a.config_path && !dir)
		return cli_usage("--config needs --policy-dir (its rules name files there)");
	if (a.default_policy && a.default_policy[0] != '/')
		return cli_usage("--default-policy: '%s' is not an absolute path",
				 a.default_policy);
	if (dir) {
		a.policy_dir_arg = dir;
		a.policy_dir = realpath(dir, NULL);
		if (!a.policy_dir)
			return cli_fail(-errno, "--policy-dir %s", dir);
	}
	if (a.default_policy || a.config_path) {
		char err[512];

		if (a.default_policy && policy_usable(&a, a.default_policy, err, sizeof(err))) {
			cli_msg("--default-policy: %s", err);
			goto out;
		}
		if (a.config_path &&
		    agent_config_load(a.config_path, a.policy_dir, &a.config, err, sizeof(err))) {
			cli_msg("--config %s: %s", a.config_path, err);
			goto out;
		}
	}
	if (a.log_path && (r = log_open(&a))) {
		cli_fail(r, "opening the log %s", a.log_path);
		goto out;
	}
	/* --log-denials: the watch from the start (a failure is logged, and
	 * each container's new line says its denials are not logged) */
	if (a.log_denials)
		(void)agent_watch_start(&a);

	/* Non-dumpable: a process of the agent's uid (a container's, in the
	 * same user namespace) cannot ptrace it, read or write its memory or
	 * take its fds without CAP_SYS_PTRACE (doc/security.md, section 3a,
	 * "Ring acquisition"). */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) {
		cli_fail(-errno, "prctl(PR_SET_DUMPABLE, 0)");
		goto out;
	}
	/* Signals arrive through the signalfd; a runtime that hangs up must
	 * not kill the agent. */
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) ||
	    (a.sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC)) < 0) {
		cli_fail(-errno, "signalfd");
		goto out;
	}
	a.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (a.epfd < 0) {
		cli_fail(-errno, "epoll_create1");
		goto out;
	}
	r = sock_open(&a);
	if (r) {
		rc = r;
		if (a.lfd >= 0) {
			close(a.lfd);
			a.lfd = -1;
		}
		goto out;
	}
	if (a.ctl_path) {
		r = unix_listen("--control", a.ctl_path, &a.cfd, &a.ctl_dev, &a.ctl_ino);
		if (r) {
			rc = r;
			if (a.cfd >= 0) {
				close(a.cfd);
				a.cfd = -1;
			}
			goto out;
		}
		if (watch(&a, a.cfd, &control_ent)) {
			cli_fail(-errno, "epoll_ctl");
			goto out;
		}
	}
	if (watch(&a, a.lfd, &listen_ent) || watch(&a, a.sigfd, &signal_ent)) {
		cli_fail(-errno, "epoll_ctl");
		goto out;
	}
	{
		struct agent_line l = agent_line_begin(&a, "listening", NULL, 0);

		agent_line_str(&l, "socket", a.sock_path);
		if (a.ctl_path)
			agent_line_str(&l, "control", a.ctl_path);
		if (a.policy_dir)
			agent_line_str(&l, "policy-dir", a.policy_dir);
		if (a.config_path) {
			agent_line_str(&l, "config", a.config_path);
			agent_line_u64(&l, "rules", a.config.nrules);
		}
		if (a.default_policy)
			agent_line_str(&l, "default-policy", a.default_policy);
		agent_line_end(&l);
	}
	rc = agent_loop(&a);
out:
	agent_close(&a);
	return rc;
}
