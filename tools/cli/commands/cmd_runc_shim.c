/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict runc-shim: an OCI runtime that engines register in runc's
 * place (dockerd --add-runtime, daemon.json "runtimes"), for engines that
 * drop the seccomp profile's listenerPath or pass no annotations
 * (doc/containers.md, "Docker").  For `create` and `run` it changes the
 * bundle's config.json, then executes the real runc with the arguments it
 * was given, unchanged:
 * - a seccomp section that sends a call to a listener (SCMP_ACT_NOTIFY)
 *   but names none gets listenerPath = --socket;
 * - a container whose environment has --env NAME=FILE (a file name, no
 *   '/') gets the annotation org.iouring-restrict.policy =
 *   POLICY_DIR/FILE, unless it already has that annotation.  The agent,
 *   which should run with the same --policy-dir, loads the file.
 * Anything else is passed to runc untouched.  A value that is not a file
 * name, or a config.json that cannot be changed, fails the command
 * (exit 1) with a message on stderr, which the engine shows.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cli.h"

#define POLICY_ANNOTATION "org.iouring-restrict.policy"

const char cli_help_runc_shim[] =
	"Usage: iour-restrict runc-shim --socket PATH --policy-dir DIR [--env NAME]\n"
	"         [--runc PATH] -- RUNC-ARGUMENTS...\n"
	"\n"
	"An OCI runtime for engines that drop listenerPath from the seccomp profile\n"
	"or pass no annotations (Docker 20.10): register it in runc's place, with\n"
	"these options before runc's arguments.  For `create` and `run` it changes\n"
	"the bundle's config.json, then executes runc with its arguments unchanged:\n"
	"a seccomp section with an SCMP_ACT_NOTIFY rule but no listenerPath gets\n"
	"listenerPath PATH; a container whose environment has NAME=FILE gets the\n"
	"annotation org.iouring-restrict.policy=DIR/FILE (FILE a file name in DIR).\n"
	"\n"
	"Options:\n"
	"  --socket PATH      the agent's socket (listenerPath)\n"
	"  --policy-dir DIR   the directory of the policy files (absolute)\n"
	"  --env NAME         the environment variable naming the policy file\n"
	"                     (default IOUR_RESTRICT_POLICY)\n"
	"  --runc PATH        the runtime to execute (default runc, found in PATH)\n"
	"  -h, --help         show this help\n"
	"\n"
	"Exit status: runc's; 1 if config.json cannot be changed or NAME's value\n"
	"is not a file name; 2 usage error.\n";

struct shim {
	const char *socket;
	const char *policy_dir;
	const char *env;
	const char *runc;
};

/* runc's --log FILE and --log-format of this command line: engines read
 * a failed runtime's error from there (Docker: "unable to retrieve OCI
 * runtime error" otherwise), so errors go there too, in runc's format. */
static const char *runc_log, *runc_log_format;

static int shim_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int shim_err(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s runc-shim: %s\n", CLI_PROG, msg);
	f = runc_log ? fopen(runc_log, "ae") : NULL;
	if (f && runc_log_format && !strcmp(runc_log_format, "json")) {
		json_t *o = json_pack("{s:s, s:s+}", "level", "error", "msg",
				      CLI_PROG " runc-shim: ", msg);
		char *line = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

		if (line)
			fprintf(f, "%s\n", line);
		free(line);
		json_decref(o);
	} else if (f) {
		fprintf(f, "level=error msg=\"%s runc-shim: %s\"\n", CLI_PROG, msg);
	}
	if (f)
		fclose(f);
	return CLI_FAIL;
}

/* runc's global options that take a value (runc --help). */
static bool global_takes_value(const char *a)
{
	static const char *const v[] = { "--root", "--log", "--log-format", "--criu",
					 "--rootless" };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		if (!strcmp(a, v[i]))
			return true;
	return false;
}

/* The bundle directory of a create/run command line (args after the
 * command); "." when not given, as runc. */
static const char *bundle_dir(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if ((!strcmp(argv[i], "--bundle") || !strcmp(argv[i], "-b")) && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--bundle=", 9))
			return argv[i] + 9;
		if (!strncmp(argv[i], "-b=", 3))
			return argv[i] + 3;
	}
	return ".";
}

/* The value of NAME in the process's env array, or NULL. */
static const char *env_value(json_t *env, const char *name)
{
	size_t n = strlen(name), i;
	json_t *v;

	json_array_foreach(env, i, v)
	{
		const char *s = json_string_value(v);

		if (s && !strncmp(s, name, n) && s[n] == '=')
			return s + n + 1;
	}
	return NULL;
}

static bool has_notify(json_t *seccomp)
{
	json_t *calls = json_object_get(seccomp, "syscalls"), *e;
	size_t i;

	json_array_foreach(calls, i, e)
	{
		const char *a = json_string_value(json_object_get(e, "action"));

		if (a && !strcmp(a, "SCMP_ACT_NOTIFY"))
			return true;
	}
	return false;
}

/* Changes DIR/config.json as the header says; 0 or CLI_FAIL (printed). */
static int fix_bundle(const struct shim *s, const char *dir)
{
	char path[PATH_MAX], tmp[PATH_MAX], pol[PATH_MAX];
	json_error_t je;
	json_t *root, *linux_, *seccomp, *process, *ann;
	const char *file;
	bool changed = false;
	struct stat st;
	int fd, r = 0;
	FILE *f;

	if ((size_t)snprintf(path, sizeof(path), "%s/config.json", dir) >= sizeof(path) ||
	    (size_t)snprintf(tmp, sizeof(tmp), "%s/.config.json.iour-restrict", dir) >= sizeof(tmp))
		return shim_err("bundle path too long: %s", dir);
	root = json_load_file(path, 0, &je);
	if (!root)
		return shim_err("%s:%d:%d: %s", path, je.line, je.column, je.text);
	linux_ = json_object_get(root, "linux");
	seccomp = json_is_object(linux_) ? json_object_get(linux_, "seccomp") : NULL;
	if (json_is_object(seccomp) && has_notify(seccomp)) {
		json_t *lp = json_object_get(seccomp, "listenerPath");

		if (!json_is_string(lp) || !json_string_length(lp)) {
			if (json_object_set_new(seccomp, "listenerPath", json_string(s->socket)))
				goto nomem;
			changed = true;
		}
	}
	process = json_object_get(root, "process");
	file = json_is_object(process) ? env_value(json_object_get(process, "env"), s->env) : NULL;
	ann = json_object_get(root, "annotations");
	if (file && !(json_is_object(ann) && json_object_get(ann, POLICY_ANNOTATION))) {
		if (!*file || strchr(file, '/') || !strcmp(file, ".") || !strcmp(file, "..")) {
			r = shim_err("%s=%s: not a file name in %s", s->env, file, s->policy_dir);
			goto out;
		}
		if ((size_t)snprintf(pol, sizeof(pol), "%s/%s", s->policy_dir, file) >=
		    sizeof(pol)) {
			r = shim_err("%s=%s: name too long", s->env, file);
			goto out;
		}
		if (!json_is_object(ann)) {
			ann = json_object();
			if (!ann || json_object_set_new(root, "annotations", ann))
				goto nomem;
		}
		if (json_object_set_new(ann, POLICY_ANNOTATION, json_string(pol)))
			goto nomem;
		changed = true;
	}
	if (!changed)
		goto out;
	if (stat(path, &st))
		st.st_mode = 0644;
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, st.st_mode & 07777);
	f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!f) {
		r = shim_err("%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	if (json_dumpf(root, f, JSON_PRESERVE_ORDER | JSON_COMPACT) || fflush(f) || ferror(f) ||
	    fsync(fileno(f))) {
		fclose(f);
		unlink(tmp);
		r = shim_err("writing %s failed", tmp);
		goto out;
	}
	fclose(f);
	if (rename(tmp, path)) {
		r = shim_err("renaming %s: %s", tmp, strerror(errno));
		unlink(tmp);
	}
out:
	json_decref(root);
	return r;
nomem:
	json_decref(root);
	return shim_err("out of memory");
}

int cmd_runc_shim(int argc, char **argv)
{
	struct shim s = { .env = "IOUR_RESTRICT_POLICY", .runc = "runc" };
	char **rargv;
	int i, n;

	/* Our options come first and end at "--" or at the first argument
	 * that is not one of them: runc's own options follow (the engine
	 * appends them), which getopt would take for ours. */
	for (i = 1; i < argc; i++) {
		const char **dst = NULL;

		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		}
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return cli_help(cli_help_runc_shim);
		if (!strcmp(argv[i], "--socket"))
			dst = &s.socket;
		else if (!strcmp(argv[i], "--policy-dir"))
			dst = &s.policy_dir;
		else if (!strcmp(argv[i], "--env"))
			dst = &s.env;
		else if (!strcmp(argv[i], "--runc"))
			dst = &s.runc;
		else
			break;
		if (i + 1 >= argc)
			return cli_usage("%s needs a value", argv[i]);
		*dst = argv[++i];
	}
	if (!s.socket || s.socket[0] != '/')
		return cli_usage("--socket PATH (absolute) is required");
	if (!s.policy_dir || s.policy_dir[0] != '/')
		return cli_usage("--policy-dir DIR (absolute) is required");
	if (!*s.env || strchr(s.env, '='))
		return cli_usage("--env '%s': a variable name", s.env);
	/* runc's arguments: the engine's, as given */
	n = argc - i;
	rargv = calloc((size_t)n + 2, sizeof(*rargv));
	if (!rargv)
		return shim_err("out of memory");
	rargv[0] = (char *)s.runc;
	for (i = 0; i < n; i++)
		rargv[i + 1] = argv[argc - n + i];
	/* the command: the first argument that is not a global option */
	for (i = 1; i <= n; i++) {
		if (global_takes_value(rargv[i]) && i < n) {
			if (!strcmp(rargv[i], "--log"))
				runc_log = rargv[i + 1];
			else if (!strcmp(rargv[i], "--log-format"))
				runc_log_format = rargv[i + 1];
			i++;
			continue;
		}
		if (rargv[i][0] != '-')
			break;
	}
	if (i <= n && (!strcmp(rargv[i], "create") || !strcmp(rargv[i], "run"))) {
		int r = fix_bundle(&s, bundle_dir(n - i, rargv + i + 1));

		if (r) {
			free(rargv);
			return r;
		}
	}
	execvp(s.runc, rargv);
	shim_err("cannot execute %s: %s", s.runc, strerror(errno));
	free(rargv);
	return 127;
}
