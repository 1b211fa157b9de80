/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict seccomp-profile: a container engine's seccomp profile made
 * ready for the agent (doc/containers.md, doc/cli.md "seccomp-profile").
 *
 * The profile is read with jansson, as policy files are, and written back
 * with its keys in their order.  What changes, and nothing else:
 * - io_uring_setup, io_uring_enter and io_uring_register are taken out of
 *   every rule that names them (a rule left with no name is dropped), then
 *   io_uring_setup gets SCMP_ACT_NOTIFY and the other two SCMP_ACT_ALLOW
 *   (a profile whose default action allows needs no rule for them).  A
 *   profile that left enter and register to a denying default would give
 *   the container rings it cannot submit to.
 * - ptrace, pidfd_getfd, process_vm_readv and process_vm_writev are taken
 *   out of every rule and denied (doc/containers.md, "What is enforced":
 *   a container that can reach another process's memory or fds can take a
 *   ring that process was given), unless --keep-peer-calls, which keeps
 *   them and warns.
 * - listenerPath (and listenerMetadata) are set.
 * Both formats are read: the OCI runtime spec's (architectures) and
 * Docker's (archMap, includes, excludes), which podman reads too.
 * containerd reads the OCI format only.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cli.h"
#include "learn/learn.h"

const char cli_help_seccomp_profile[] =
	"Usage: iour-restrict seccomp-profile --listener-path PATH [--engine ENGINE]\n"
	"         [--input FILE] [--listener-metadata STR] [--keep-peer-calls] [-o OUT]\n"
	"\n"
	"Write a container engine's seccomp profile ready for `iour-restrict agent`:\n"
	"io_uring_setup sent to the agent (SCMP_ACT_NOTIFY), io_uring_enter and\n"
	"io_uring_register allowed, ptrace, pidfd_getfd, process_vm_readv and\n"
	"process_vm_writev denied, listenerPath set.  Nothing else changes; what\n"
	"changed is printed on stderr.\n"
	"\n"
	"Options:\n"
	"  --listener-path PATH   the agent's socket (required)\n"
	"  --listener-metadata S  listenerMetadata, passed to the agent\n"
	"  --engine ENGINE        docker, podman, containerd or oci: the format the\n"
	"                         engine reads (containerd and oci: the OCI format\n"
	"                         only) and, for podman, the default profile\n"
	"  --input FILE           the profile to start from ('-': stdin); default:\n"
	"                         the engine's default profile where it is a file\n"
	"                         (podman: /etc/containers/seccomp.json, then\n"
	"                         /usr/share/containers/seccomp.json)\n"
	"  --keep-peer-calls      leave ptrace, pidfd_getfd and process_vm_* as the\n"
	"                         profile has them (warns where they are allowed)\n"
	"  -o, --output OUT       write the profile to OUT (default '-': stdout);\n"
	"                         written as learn writes (a new file renamed over OUT)\n"
	"  -h, --help             show this help\n"
	"\n"
	"Exit status: 0 written; 1 OUT cannot be written; 2 usage error, or no\n"
	"default profile for the engine; 3 the profile cannot be read or is not\n"
	"a seccomp profile the command can change safely.\n";

enum engine { ENG_ANY, ENG_DOCKER, ENG_PODMAN, ENG_CONTAINERD, ENG_OCI };
static const char *const engine_names[] = { "any", "docker", "podman", "containerd", "oci" };

static const char *const uring_calls[] = { "io_uring_setup", "io_uring_enter",
					   "io_uring_register" };
static const char *const peer_calls[] = { "ptrace", "pidfd_getfd", "process_vm_readv",
					  "process_vm_writev" };
#define NR_URING (sizeof(uring_calls) / sizeof(uring_calls[0]))
#define NR_PEER (sizeof(peer_calls) / sizeof(peer_calls[0]))

static bool in_list(const char *s, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(s, list[i]))
			return true;
	return false;
}

static int bad_profile(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int bad_profile(const char *path, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s seccomp-profile: %s: ", CLI_PROG, path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return CLI_POLICY;
}

static void note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s seccomp-profile: ", CLI_PROG);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* An action that lets the call run (the kernel's, through the runtime). */
static bool action_allows(const char *a)
{
	return !strcmp(a, "SCMP_ACT_ALLOW") || !strcmp(a, "SCMP_ACT_LOG");
}

static bool has_conditions(json_t *e)
{
	json_t *v;

	v = json_object_get(e, "includes");
	if (json_is_object(v) && json_object_size(v))
		return true;
	v = json_object_get(e, "excludes");
	return json_is_object(v) && json_object_size(v);
}

/* " (includes {...})" for an entry with conditions, into buf. */
static const char *conditions(json_t *e, char *buf, size_t len)
{
	char *in = NULL, *ex = NULL;
	json_t *v;

	buf[0] = '\0';
	v = json_object_get(e, "includes");
	if (json_is_object(v) && json_object_size(v))
		in = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	v = json_object_get(e, "excludes");
	if (json_is_object(v) && json_object_size(v))
		ex = json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (in || ex)
		snprintf(buf, len, " (%s%s%s%s%s)", in ? "includes " : "", in ? in : "",
			 in && ex ? ", " : "", ex ? "excludes " : "", ex ? ex : "");
	free(in);
	free(ex);
	return buf;
}

static json_t *name_array(const char *const *names, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_string(names[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* Appends {"names": [...], "action": ACTION[, "errnoRet": ERR]}; -1 on ENOMEM. */
static int add_rule(json_t *syscalls, const char *const *names, size_t n, const char *action,
		    int errno_ret)
{
	json_t *e = json_object();

	if (!e || json_object_set_new(e, "names", name_array(names, n)) ||
	    json_object_set_new(e, "action", json_string(action)) ||
	    (errno_ret && json_object_set_new(e, "errnoRet", json_integer(errno_ret))) ||
	    json_array_append_new(syscalls, e))
		return -1;
	return 0;
}

struct opts {
	enum engine engine;
	const char *input;
	const char *out;
	const char *listener;
	const char *metadata;
	bool keep_peers;
};

/*
 * Checks the profile's shape and changes it in place; the changes are
 * printed.  Returns 0, CLI_POLICY (printed) or CLI_FAIL (memory).
 */
static int change(json_t *root, const struct opts *o, const char *path)
{
	json_t *syscalls, *v, *e;
	const char *dflt;
	bool docker_fmt = false, dflt_allows;
	size_t i;

	if (!json_is_object(root))
		return bad_profile(path,
				   "not a seccomp profile (the top level is not a JSON object)");
	v = json_object_get(root, "defaultAction");
	if (!json_is_string(v))
		return bad_profile(path, "not a seccomp profile: no \"defaultAction\" string");
	dflt = json_string_value(v);
	if (strncmp(dflt, "SCMP_ACT_", 9))
		return bad_profile(path, "defaultAction \"%s\" is not a seccomp action", dflt);
	if (!strcmp(dflt, "SCMP_ACT_NOTIFY"))
		return bad_profile(path,
				   "defaultAction SCMP_ACT_NOTIFY would send every call to the "
				   "agent, which serves io_uring_setup only");
	dflt_allows = action_allows(dflt);
	syscalls = json_object_get(root, "syscalls");
	if (!syscalls) {
		syscalls = json_array();
		if (!syscalls || json_object_set_new(root, "syscalls", syscalls))
			return cli_fail(-ENOMEM, "building the profile");
	}
	if (!json_is_array(syscalls))
		return bad_profile(path, "\"syscalls\" is not an array");
	if (json_object_get(root, "archMap"))
		docker_fmt = true;
	if (json_object_get(root, "archMap") && json_object_get(root, "architectures"))
		return bad_profile(path,
				   "both \"archMap\" and \"architectures\": engines refuse this");

	/* Shape first, so that nothing is changed in a profile refused. */
	json_array_foreach(syscalls, i, e)
	{
		json_t *names, *n, *act;
		size_t j;

		if (!json_is_object(e))
			return bad_profile(path, "syscalls[%zu] is not an object", i);
		act = json_object_get(e, "action");
		if (!json_is_string(act))
			return bad_profile(path, "syscalls[%zu] has no \"action\" string", i);
		if (has_conditions(e))
			docker_fmt = true;
		if (json_object_get(e, "name")) {
			/* Docker's old format: one name per rule */
			if (!json_is_string(json_object_get(e, "name")) ||
			    json_object_get(e, "names"))
				return bad_profile(path,
						   "syscalls[%zu]: \"name\" must be a string, "
						   "without \"names\"",
						   i);
			docker_fmt = true;
			n = json_object_get(e, "name");
			if (!strcmp(json_string_value(act), "SCMP_ACT_NOTIFY"))
				return bad_profile(path,
						   "syscalls[%zu] sends %s to the listener: the "
						   "agent serves io_uring_setup only",
						   i, json_string_value(n));
			continue;
		}
		names = json_object_get(e, "names");
		if (!json_is_array(names))
			return bad_profile(path, "syscalls[%zu] has no \"names\" array", i);
		json_array_foreach(names, j, n)
		{
			if (!json_is_string(n))
				return bad_profile(path, "syscalls[%zu].names[%zu] is not a string",
						   i, j);
			if (!strcmp(json_string_value(act), "SCMP_ACT_NOTIFY") &&
			    strcmp(json_string_value(n), "io_uring_setup"))
				return bad_profile(path,
						   "syscalls[%zu] sends %s to the listener: the "
						   "agent serves io_uring_setup only",
						   i, json_string_value(n));
		}
	}
	if (docker_fmt && (o->engine == ENG_CONTAINERD || o->engine == ENG_OCI))
		return bad_profile(path,
				   "a profile in Docker's format (archMap, includes, excludes or "
				   "name), but %s reads the OCI format only: it would ignore "
				   "the conditions and apply every rule",
				   engine_names[o->engine]);

	/* Take the calls out of every rule; the input's indexes are printed. */
	for (size_t idx = 0, k = 0; k < json_array_size(syscalls); idx++) {
		json_t *names, *n, *act;
		const char *a;
		char cond[512], took[256];
		size_t j, len = 0;
		bool peer_allowed = false;

		e = json_array_get(syscalls, k);
		act = json_object_get(e, "action");
		a = json_string_value(act);
		conditions(e, cond, sizeof(cond));
		took[0] = '\0';
		if (json_object_get(e, "name")) {
			const char *s = json_string_value(json_object_get(e, "name"));

			if (in_list(s, uring_calls, NR_URING) ||
			    (!o->keep_peers && in_list(s, peer_calls, NR_PEER))) {
				note("syscalls[%zu] (%s%s): removed (it named only %s)", idx, a,
				     cond, s);
				json_array_remove(syscalls, k);
				continue;
			}
			if (in_list(s, peer_calls, NR_PEER) && action_allows(a))
				note("WARNING: syscalls[%zu] allows %s%s: a container process can take "
				     "the rings of processes it reaches (doc/containers.md)",
				     idx, s, cond);
			k++;
			continue;
		}
		names = json_object_get(e, "names");
		for (j = 0; j < json_array_size(names);) {
			const char *s;

			n = json_array_get(names, j);
			s = json_string_value(n);
			if (in_list(s, uring_calls, NR_URING) ||
			    (!o->keep_peers && in_list(s, peer_calls, NR_PEER))) {
				len += (size_t)snprintf(took + len,
							len < sizeof(took) ? sizeof(took) - len : 0,
							"%s%s", len ? ", " : "", s);
				json_array_remove(names, j);
				continue;
			}
			if (in_list(s, peer_calls, NR_PEER) && action_allows(a))
				peer_allowed = true;
			j++;
		}
		if (peer_allowed)
			note("WARNING: syscalls[%zu] (%s%s) allows ptrace, pidfd_getfd or process_vm_*: "
			     "a container process can take the rings of processes it reaches "
			     "(doc/containers.md)",
			     idx, a, cond);
		if (!len) {
			k++;
			continue;
		}
		if (!json_array_size(names)) {
			note("syscalls[%zu] (%s%s): removed (it named only %s)", idx, a, cond,
			     took);
			json_array_remove(syscalls, k);
			continue;
		}
		note("syscalls[%zu] (%s%s): took out %s", idx, a, cond, took);
		k++;
	}
	if (o->keep_peers && dflt_allows)
		note("WARNING: the default action %s allows ptrace, pidfd_getfd and process_vm_* "
		     "where no rule names them (doc/containers.md)",
		     dflt);

	if (add_rule(syscalls, uring_calls, 1, "SCMP_ACT_NOTIFY", 0))
		return cli_fail(-ENOMEM, "building the profile");
	note("added: io_uring_setup SCMP_ACT_NOTIFY");
	if (!dflt_allows) {
		if (add_rule(syscalls, uring_calls + 1, 2, "SCMP_ACT_ALLOW", 0))
			return cli_fail(-ENOMEM, "building the profile");
		note("added: io_uring_enter, io_uring_register SCMP_ACT_ALLOW");
	}
	if (!o->keep_peers && dflt_allows) {
		if (add_rule(syscalls, peer_calls, NR_PEER, "SCMP_ACT_ERRNO", EPERM))
			return cli_fail(-ENOMEM, "building the profile");
		note("added: ptrace, pidfd_getfd, process_vm_readv, process_vm_writev SCMP_ACT_ERRNO "
		     "(EPERM)");
	} else if (!o->keep_peers) {
		note("ptrace, pidfd_getfd, process_vm_readv, process_vm_writev: denied by the default "
		     "action %s",
		     dflt);
	}

	v = json_object_get(root, "listenerPath");
	if (json_is_string(v) && strcmp(json_string_value(v), o->listener))
		note("listenerPath: was \"%s\"", json_string_value(v));
	if (json_object_set_new(root, "listenerPath", json_string(o->listener)))
		return cli_fail(-ENOMEM, "building the profile");
	note("listenerPath: %s", o->listener);
	if (o->metadata) {
		if (json_object_set_new(root, "listenerMetadata", json_string(o->metadata)))
			return cli_fail(-ENOMEM, "building the profile");
		note("listenerMetadata: %s", o->metadata);
	}
	if (o->engine == ENG_DOCKER)
		note("note: dockerd 20.10 drops listenerPath and listenerMetadata from the profile "
		     "(runc then refuses the container): see doc/containers.md, \"Docker\"");
	return 0;
}

static const char *podman_defaults[] = { "/etc/containers/seccomp.json",
					 "/usr/share/containers/seccomp.json" };

int cmd_seccomp_profile(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "listener-path", required_argument, NULL, 'L' },
		{ "listener-metadata", required_argument, NULL, 'M' },
		{ "engine", required_argument, NULL, 'e' },
		{ "input", required_argument, NULL, 'i' },
		{ "keep-peer-calls", no_argument, NULL, 'K' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts o = { .out = "-" };
	struct learn_out out;
	json_error_t je;
	json_t *root;
	char *text;
	int c, r;

	while ((c = getopt_long(argc, argv, "+o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'L':
			o.listener = optarg;
			break;
		case 'M':
			o.metadata = optarg;
			break;
		case 'e': {
			size_t i;

			for (i = 1; i < sizeof(engine_names) / sizeof(engine_names[0]); i++)
				if (!strcmp(optarg, engine_names[i]))
					break;
			if (i == sizeof(engine_names) / sizeof(engine_names[0]))
				return cli_usage("--engine '%s': docker, podman, containerd or oci",
						 optarg);
			o.engine = (enum engine)i;
			break;
		}
		case 'i':
			o.input = optarg;
			break;
		case 'K':
			o.keep_peers = true;
			break;
		case 'o':
			o.out = optarg;
			break;
		case 'h':
			return cli_help(cli_help_seccomp_profile);
		default:
			return cli_getopt_error(c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("unexpected operand '%s'", argv[optind]);
	if (!o.listener)
		return cli_usage("--listener-path is required (the agent's socket)");
	if (o.listener[0] != '/')
		return cli_usage(
			"--listener-path '%s': an absolute path (the runtime connects to it)",
			o.listener);
	if (!o.input) {
		switch (o.engine) {
		case ENG_PODMAN:
			for (size_t i = 0; i < sizeof(podman_defaults) / sizeof(podman_defaults[0]);
			     i++)
				if (!access(podman_defaults[i], R_OK)) {
					o.input = podman_defaults[i];
					break;
				}
			if (!o.input)
				return cli_usage(
					"no podman default profile here (%s, %s): give --input",
					podman_defaults[0], podman_defaults[1]);
			note("input: %s", o.input);
			break;
		case ENG_DOCKER:
		case ENG_CONTAINERD:
			return cli_usage("%s's default profile is compiled into it: give --input "
					 "(examples/seccomp/ has it)",
					 engine_names[o.engine]);
		default:
			return cli_usage(
				"give --input FILE (or --engine podman for its default profile)");
		}
	}

	if (!strcmp(o.input, "-"))
		root = json_loadf(stdin, JSON_REJECT_DUPLICATES, &je);
	else
		root = json_load_file(o.input, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		fprintf(stderr, "%s:%d:%d: %s\n", o.input, je.line, je.column, je.text);
		return CLI_POLICY;
	}
	r = change(root, &o, o.input);
	if (r) {
		json_decref(root);
		return r;
	}
	text = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (!text)
		return cli_fail(-ENOMEM, "writing the profile");
	r = learn_out_open(&out, o.out);
	if (r) {
		free(text);
		return r;
	}
	if (fputs(text, out.f) < 0 || fputc('\n', out.f) < 0) {
		learn_out_abort(&out);
		if (!out.std)
			fclose(out.f);
		free(text);
		return cli_fail(-EIO, "writing the profile to '%s'", o.out);
	}
	free(text);
	return learn_out_commit(&out, o.out);
}
