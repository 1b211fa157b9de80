/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict agent: an OCI seccomp agent (runtime-spec
 * `linux.seccomp.listenerPath`).  runc and crun connect to its UNIX socket
 * while they create a container and send one message: the container's
 * state as JSON, and the seccomp listener of the container's filter as
 * SCM_RIGHTS.  A filter whose `io_uring_setup` action is SCMP_ACT_NOTIFY
 * then sends every io_uring_setup() of the container here.
 *
 * For a container whose annotation `org.iouring-restrict.policy` names a
 * policy file, the agent plans that policy for the ring broker on the
 * running kernel (IOUR_PLAN_BROKERED, as `explain --mechanism broker`
 * does) and hands the listener to a ring broker (broker.h): every ring the
 * container creates is created by the broker, restricted, and installed in
 * the container (doc/containers.md, doc/security.md).  A container without
 * the annotation, or whose policy cannot be loaded, gets EPERM from every
 * io_uring_setup(), answered here.
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

#include "agent.h"
#include "cli.h"

const char cli_help_agent[] =
	"Usage: iour-restrict agent --socket PATH [--log FILE] [--policy-dir DIR]\n"
	"                           [--max-rings N]\n"
	"\n"
	"An OCI seccomp agent for runc and crun (runtime-spec\n"
	"linux.seccomp.listenerPath).  It listens on the UNIX socket PATH; the\n"
	"container runtime connects while it creates a container and passes the\n"
	"listener of the container's seccomp filter.  A filter whose action for\n"
	"io_uring_setup is SCMP_ACT_NOTIFY then sends every io_uring_setup() of\n"
	"the container to the agent, which creates the ring itself, restricted by\n"
	"the policy file named in the container's annotation\n"
	"org.iouring-restrict.policy (a path on the host), and installs it in the\n"
	"container.  A container without that annotation, or whose policy cannot\n"
	"be loaded, gets EPERM from io_uring_setup().  One line is logged per\n"
	"container and per ring.  If the agent stops, io_uring_setup() fails with\n"
	"ENOSYS in the containers it served.  doc/containers.md has the setup for\n"
	"runc, crun, podman and containerd.\n"
	"\n"
	"Options:\n"
	"  -s, --socket PATH      the socket to listen on (mode 0600; an existing\n"
	"                         socket nobody listens on is replaced, any other\n"
	"                         file is not)\n"
	"  -l, --log FILE         append the log to FILE, with timestamps (default:\n"
	"                         standard error, without); SIGHUP reopens it\n"
	"  -p, --policy-dir DIR   accept only policy files inside DIR\n"
	"      --max-rings N      rings each container may hold alive at once\n"
	"                         (default 1024; 0: no limit); more get ENOMEM\n"
	"                         (while calls are served at once, up to 3 more\n"
	"                         may be handed out)\n"
	"  -h, --help             show this help\n"
	"\n"
	"Example: iour-restrict agent --socket /run/iour-restrict/agent.sock\n"
	"\n"
	"Exit status: 0 after SIGTERM or SIGINT; 1 if the socket or the log cannot\n"
	"be set up; 2 on a usage error.\n";

/* The annotation that names a container's policy file. */

static struct ent listen_ent = { .kind = ENT_LISTEN };
static struct ent signal_ent = { .kind = ENT_SIGNAL };

static void container_free(struct container *c)
{
	if (!c)
		return;
	iour_broker__free(c->broker);
	iour_plan__free(c->plan);
	if (c->deny_fd >= 0)
		close(c->deny_fd);
	free(c->id);
	free(c->policy);
	free(c);
}

static void container_drop(struct agent *a, struct container *c, const char *why)
{
	struct container **pp;
	FILE *f = agent_log_container(a, c);

	fprintf(f, "gone reason=%s", why);
	if (c->suppressed)
		fprintf(f, " suppressed=%lu", c->suppressed);
	if (c->broker) {
		struct iour_broker_counters n = { .sz = sizeof(n) };

		if (!iour_broker__counters(c->broker, &n))
			fprintf(f, " rings=%llu refused=%llu deadline=%llu busy=%llu quota=%llu",
				(unsigned long long)n.served, (unsigned long long)n.refused,
				(unsigned long long)n.refused_deadline,
				(unsigned long long)n.refused_busy,
				(unsigned long long)n.refused_quota);
	} else {
		fprintf(f, " rings=0 refused=%lu", c->refused);
	}
	agent_log_end(f);
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
static void ring_line_end(struct container *c, FILE *f)
{
	if (c->suppressed)
		fprintf(f, " suppressed=%lu", c->suppressed);
	c->suppressed = 0;
	agent_log_end(f);
}

/* The broker's callback: one line per ring the container asked for. */
static void on_ring(void *arg, const struct iour_broker_event *ev)
{
	struct container *c = arg;
	FILE *f;

	if (!ring_line_allowed(c))
		return;
	f = agent_log_container(c->agent, c);

	fprintf(f, "ring task=%d entries=%u flags=0x%x ", ev->pid, ev->entries, ev->setup_flags);
	if (ev->result >= 0)
		fprintf(f, "result=ok fd=%d", ev->result);
	else
		fprintf(f, "result=%s", errno_name(-ev->result));
	fputs(" policy=", f);
	agent_log_str(f, c->policy);
	if (ev->what) {
		fputs(ev->result >= 0 ? " registered=" : " why=", f);
		agent_log_str(f, ev->what);
	}
	ring_line_end(c, f);
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
	FILE *f;

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
	f = agent_log_container(a, c);
	fprintf(f, "ring task=%u entries=%llu result=EPERM why=", req.pid,
		(unsigned long long)(uint32_t)req.data.args[0]);
	agent_log_str(f, c->deny_why);
	ring_line_end(c, f);
}

/*
 * The policy of a container: @path from its annotation, absolute, inside
 * --policy-dir if one was given, loaded and planned for one ring on the
 * running kernel.  0 or -1 with *why set (a static string) and the detail
 * logged.
 */
static int container_plan(struct agent *a, struct container *c, const char *path,
			  struct iour_plan **out, const char **why)
{
	struct iour_policy_load_opts lo = { .sz = sizeof(lo) };
	struct iour_load_error e;
	struct iour_policy *pol = NULL;
	char *real = NULL;
	int r;

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
	memset(&e, 0, sizeof(e));
	e.sz = sizeof(e);
	r = iour_policy__load_file(path, &lo, &pol, &e);
	if (r) {
		FILE *f = agent_log_container(a, c);

		fputs("policy=", f);
		agent_log_str(f, path);
		fprintf(f, " error=%s line=%u column=%u message=", errno_name(-r), e.line,
			e.column);
		agent_log_str(f, e.message[0] ? e.message : cli_strerror(r));
		agent_log_end(f);
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
		FILE *f = agent_log_container(a, c);

		fprintf(f, "planning error=%s message=", errno_name(-r));
		agent_log_str(f, cli_strerror(r));
		agent_log_end(f);
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

static void agent_log_effects(FILE *f, const struct iour_report *rep)
{
	struct effect_log el = { .f = f, .n = 0 };

	fputs(" effects=", f);
	cli_effects_each(rep, effect_item, &el);
	if (!el.n)
		fputs("none", f);
}

static int watch(struct agent *a, int fd, struct ent *e)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = e };

	(void)a;
	return epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev);
}

/*
 * A container from a runtime's message: the listener @fd (owned from here
 * on), its id and pid, and its policy path or NULL.
 */
static void container_add(struct agent *a, int fd, const char *id, int pid, const char *policy)
{
	struct container *c = calloc(1, sizeof(*c));
	struct iour_broker_opts bo = { .sz = sizeof(bo) };
	const char *why = "no " AGENT_ANNOTATION " annotation";
	FILE *f;
	int wfd, r;

	if (!c || !(c->id = strdup(id)) || (policy && !(c->policy = strdup(policy)))) {
		agent_log_msg(a, "out of memory: closing the listener of a container");
		close(fd);
		container_free(c);
		return;
	}
	c->ent.kind = ENT_CONTAINER;
	c->agent = a;
	c->pid = pid;
	c->deny_fd = -1;
	c->line_tokens = AGENT_RING_LINES_BURST;
	c->line_ms = agent_now_ms();
	if (policy && !container_plan(a, c, policy, &c->plan, &why)) {
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
			f = agent_log_container(a, c);
			fprintf(f, "broker error=%s message=", errno_name(-r));
			agent_log_str(f, cli_strerror(r));
			agent_log_end(f);
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
	f = agent_log_container(a, c);
	fputs("new policy=", f);
	agent_log_str(f, c->policy ? c->policy : "none");
	if (c->broker) {
		const struct iour_report *rep = iour_plan__report(c->plan);

		fprintf(f, " status=%s", rep ? iour_status_str(iour_report__status(rep)) : "?");
		if (rep)
			agent_log_effects(f, rep);
	} else {
		fputs(" io_uring_setup=EPERM why=", f);
		agent_log_str(f, why);
	}
	agent_log_end(f);
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
			FILE *f = agent_log_container(a, c);

			fprintf(f, "serve error=%s message=", errno_name(-r));
			agent_log_str(f, cli_strerror(r));
			agent_log_end(f);
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
	json_t *root, *state, *fds, *ann, *v;
	const char *id = "?", *policy = NULL;
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
		FILE *f = agent_log_begin(a);

		fputs("container=", f);
		agent_log_str(f, id);
		fprintf(f, " pid=%d error=\"no seccomp listener in the message (%d fds)\"", pid,
			cl->nfds);
		agent_log_end(f);
		json_decref(root);
		return 0;
	}
	ann = json_object_get(state, "annotations");
	v = json_is_object(ann) ? json_object_get(ann, AGENT_ANNOTATION) : NULL;
	if (json_is_string(v))
		policy = json_string_value(v);
	fd = cl->fds[idx];
	cl->fds[idx] = -1;
	container_add(a, fd, id, pid, policy);
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

static int sock_open(struct agent *a)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r;

	if (strlen(a->sock_path) >= sizeof(sa.sun_path))
		return cli_usage("--socket: the path is longer than %zu bytes",
				 sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, a->sock_path, strlen(a->sock_path) + 1);
	if (!lstat(a->sock_path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			cli_msg("%s exists and is not a socket: not replacing it", a->sock_path);
			return CLI_FAIL;
		}
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return cli_fail(-errno, "socket");
		r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		close(fd);
		if (!r) {
			cli_msg("%s: another agent is listening on it", a->sock_path);
			return CLI_FAIL;
		}
		if (unlink(a->sock_path) && errno != ENOENT)
			return cli_fail(-errno, "removing the stale socket %s", a->sock_path);
	} else if (errno != ENOENT) {
		return cli_fail(-errno, "%s", a->sock_path);
	}
	a->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (a->lfd < 0)
		return cli_fail(-errno, "socket");
	old = umask(0177);
	r = bind(a->lfd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r)
		return cli_fail(-errno, "binding %s", a->sock_path);
	if (chmod(a->sock_path, 0600) || lstat(a->sock_path, &st)) {
		r = -errno;
		unlink(a->sock_path);
		return cli_fail(r, "%s", a->sock_path);
	}
	a->sock_dev = st.st_dev;
	a->sock_ino = st.st_ino;
	if (listen(a->lfd, 128)) {
		r = -errno;
		unlink(a->sock_path);
		return cli_fail(r, "listening on %s", a->sock_path);
	}
	return 0;
}

/* Removes the socket if it is still the one this agent created. */
static void sock_remove(struct agent *a)
{
	struct stat st;

	if (!lstat(a->sock_path, &st) && st.st_dev == a->sock_dev && st.st_ino == a->sock_ino)
		unlink(a->sock_path);
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

/* SIGTERM, SIGINT: 1 (stop); SIGHUP: reopen the log. */
static int signal_read(struct agent *a)
{
	struct signalfd_siginfo si;
	int r;

	while (read(a->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			if (a->log_path && (r = log_open(a)))
				agent_log_msg(a, "reopening %s: %s", a->log_path, strerror(-r));
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
		int timeout = client_timeouts(a), n;

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
	while (a->containers) {
		struct container *c = a->containers;

		a->containers = c->next;
		a->ncontainers--;
		container_free(c);
	}
	grave_empty(a);
	if (a->lfd >= 0) {
		close(a->lfd);
		sock_remove(a);
	}
	if (a->sigfd >= 0)
		close(a->sigfd);
	if (a->epfd >= 0)
		close(a->epfd);
	if (a->log)
		fclose(a->log);
	free(a->policy_dir);
}

int cmd_agent(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ "policy-dir", required_argument, NULL, 'p' },
		{ "max-rings", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct agent a = { .epfd = -1, .lfd = -1, .sigfd = -1, .max_rings = AGENT_MAX_RINGS };
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
		case 'h':
			return cli_help(cli_help_agent);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("unexpected argument '%s'", argv[optind]);
	if (!a.sock_path || !a.sock_path[0])
		return cli_usage("no socket given (--socket PATH)");
	if (dir) {
		a.policy_dir = realpath(dir, NULL);
		if (!a.policy_dir)
			return cli_fail(-errno, "--policy-dir %s", dir);
	}
	if (a.log_path && (r = log_open(&a))) {
		cli_fail(r, "opening the log %s", a.log_path);
		goto out;
	}

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
	if (watch(&a, a.lfd, &listen_ent) || watch(&a, a.sigfd, &signal_ent)) {
		cli_fail(-errno, "epoll_ctl");
		goto out;
	}
	{
		FILE *f = agent_log_begin(&a);

		fputs("listening socket=", f);
		agent_log_str(f, a.sock_path);
		if (a.policy_dir) {
			fputs(" policy-dir=", f);
			agent_log_str(f, a.policy_dir);
		}
		agent_log_end(f);
	}
	rc = agent_loop(&a);
out:
	agent_close(&a);
	return rc;
}
