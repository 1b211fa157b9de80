/* SPDX-License-Identifier: MIT */
/*
 * Policy files, loading (doc/policy-files.md): the classic part, the
 * programs, the document and iour_policy__load_json()/_file().  The field
 * tables, conditions and entries, and the loader's error reporting are in
 * lib/policyfile/policyfile.c (shared through lib/policyfile/policyfile_load.h).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/openat2.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/internal.h"
#include "policy/policy_internal.h"
#include "policyfile_internal.h"
#include "policyfile_load.h"
#include "base/schema.h"
#include "iouring_restrict/filter.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/policy.h"
#include "iouring_restrict/policyfile.h"
#include "iouring_restrict/ruleset.h"

/* ---- classic part and programs ---------------------------------------------- */

static int sqe_flag_list(struct ld *l, json_t *arr, uint32_t *mask)
{
	size_t i;
	json_t *v;
	int r;

	if (iour__pf_want_array(l, arr, "a list of SQE flag names"))
		return -EBADMSG;
	json_array_foreach(arr, i, v)
	{
		iour__pf_push_idx(l, i);
		if (!json_is_string(v))
			return iour__pf_fail(l, "expected an SQE flag name, found %s",
					     iour__pf_type_name(v));
		r = iour_sqe_flag_from_name(json_string_value(v));
		if (r <= 0) {
			const char *near =
				iour_name_suggest(IOUR_NAME_SQE_FLAG, json_string_value(v));

			return iour__pf_fail(l, "unknown SQE flag \"%s\"%s%s%s",
					     json_string_value(v), near ? " (did you mean \"" : "",
					     near ? near : "", near ? "\"?)" : "");
		}
		*mask |= (uint32_t)r;
		iour__pf_pop(l);
	}
	return 0;
}

static const char *const sqe_keys[] = { "comment", "allowed", "required", NULL };

static int parse_classic(struct ld *l, json_t *root, struct iour_ruleset **out)
{
	json_t *req = json_object_get(root, "requestOps");
	json_t *reg = json_object_get(root, "registerOps");
	json_t *sqe = json_object_get(root, "sqeFlags");
	bool ops[IOUR__NOPCODES];
	struct iour_ruleset *rs;
	uint32_t op;
	int rc;

	*out = NULL;
	/* defaultAction "allow": what is not listed is not restricted.
	 * "deny" (the default) denies what is not listed: no registerOps is
	 * an empty list, no sqeFlags allows no flag (doc/policy-files.md). */
	if (!req && !reg && !sqe && l->dflt == IOUR_POLICY_DEFAULT_ALLOW)
		return 0;
	if (iour_ruleset__new(NULL, &rs))
		return -ENOMEM;
	*out = rs;
	if (l->dflt != IOUR_POLICY_DEFAULT_ALLOW) {
		if (!reg && iour_ruleset__deny_all_register_ops(rs))
			return -ENOMEM;
		if (!sqe && iour_ruleset__set_sqe_flags(rs, 0, 0))
			return -ENOMEM;
	}
	if (req) {
		memset(ops, 0, sizeof(ops));
		iour__pf_push_key(l, "requestOps");
		if ((rc = iour__pf_op_list(l, req, "a list of request opcodes", ops, false)))
			return rc;
		if (iour_ruleset__deny_all_sqe_ops(rs))
			return -ENOMEM;
		for (op = 0; op < IOUR__NOPCODES; op++)
			if (ops[op] && (rc = iour_ruleset__allow_sqe_op(rs, op)))
				return rc == -ENOMEM ?
					       rc :
					       iour__pf_fail(l,
							     "request opcode %u is not known to "
							     "this library's classic part",
							     op);
		iour__pf_pop(l);
	}
	if (reg) {
		memset(ops, 0, sizeof(ops));
		iour__pf_push_key(l, "registerOps");
		if ((rc = iour__pf_op_list(l, reg, "a list of register opcodes", ops, true)))
			return rc;
		if (iour_ruleset__deny_all_register_ops(rs))
			return -ENOMEM;
		for (op = 0; op < IOUR__NOPCODES; op++)
			if (ops[op] && (rc = iour_ruleset__allow_register_op(rs, op)))
				return rc == -ENOMEM ?
					       rc :
					       iour__pf_fail(l,
							     "register opcode %u is not known to "
							     "this library's classic part",
							     op);
		iour__pf_pop(l);
	}
	if (sqe) {
		uint32_t allowed = 0, required = 0;
		json_t *v;

		iour__pf_push_key(l, "sqeFlags");
		if (!json_is_object(sqe))
			return iour__pf_fail(
				l,
				"expected an object {\"allowed\": [...], \"required\": "
				"[...]}, found %s",
				iour__pf_type_name(sqe));
		if ((rc = iour__pf_check_keys(l, sqe, "sqeFlags", sqe_keys)))
			return rc;
		if ((v = json_object_get(sqe, "allowed"))) {
			iour__pf_push_key(l, "allowed");
			if ((rc = sqe_flag_list(l, v, &allowed)))
				return rc;
			iour__pf_pop(l);
		} else {
			allowed = IOUR_SQE__VALID;
		}
		if ((v = json_object_get(sqe, "required"))) {
			iour__pf_push_key(l, "required");
			if ((rc = sqe_flag_list(l, v, &required)))
				return rc;
			iour__pf_pop(l);
		}
		if (iour_ruleset__set_sqe_flags(rs, allowed, required))
			return iour__pf_fail(l, "invalid SQE flags");
		iour__pf_pop(l);
	}
	return 0;
}

static const char *const prog_keys[] = { "comment", "name", "pduSize", "insns", NULL };

static int parse_programs(struct ld *l, json_t *arr, struct iour_policy *p)
{
	struct iour_insn *insns = NULL;
	bool ops[IOUR__NOPCODES];
	size_t i, j;
	json_t *o, *v;
	int rc = 0;

	iour__pf_push_key(l, "programs");
	if (iour__pf_want_array(l, arr, "a list of programs"))
		return -EBADMSG;
	json_array_foreach(arr, i, o)
	{
		uint32_t op = 0, pdu = 0;
		json_t *in;

		iour__pf_push_idx(l, i);
		if (!json_is_object(o))
			return iour__pf_fail(l, "expected a program (an object), found %s",
					     iour__pf_type_name(o));
		if ((rc = iour__pf_check_keys(l, o, "a program", prog_keys)))
			return rc;
		memset(ops, 0, sizeof(ops));
		if (!(v = json_object_get(o, "name")))
			return iour__pf_fail(l, "a program needs \"name\" (its request opcode)");
		iour__pf_push_key(l, "name");
		if (json_is_string(v) && json_string_value(v)[0] == '@')
			return iour__pf_fail(l, "a program is for one opcode, not a group");
		if ((rc = iour__pf_add_op_name(l, v, ops, false)))
			return rc;
		while (!ops[op])
			op++;
		iour__pf_pop(l);
		if ((v = json_object_get(o, "pduSize"))) {
			iour__pf_push_key(l, "pduSize");
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > 24)
				return iour__pf_fail(l, "expected a payload size 0 to 24");
			pdu = (uint32_t)json_integer_value(v);
			iour__pf_pop(l);
		}
		if (!(in = json_object_get(o, "insns")))
			return iour__pf_fail(l, "a program needs \"insns\"");
		iour__pf_push_key(l, "insns");
		if (iour__pf_want_array(l, in, "a list of instructions [code, jt, jf, k]"))
			return -EBADMSG;
		if (json_array_size(in) == 0 || json_array_size(in) > IOUR_MAX_INSNS)
			return iour__pf_fail(l, "a program has 1 to %d instructions",
					     IOUR_MAX_INSNS);
		insns = iour__calloc(json_array_size(in), sizeof(*insns));
		if (!insns)
			return -ENOMEM;
		json_array_foreach(in, j, v)
		{
			static const json_int_t lim[4] = { 0xffff, 0xff, 0xff, 0xffffffff };
			json_int_t x[4];
			size_t k;

			iour__pf_push_idx(l, j);
			if (!json_is_array(v) || json_array_size(v) != 4) {
				rc = iour__pf_fail(l, "expected an instruction [code, jt, jf, k]");
				goto out;
			}
			for (k = 0; k < 4; k++) {
				json_t *e = json_array_get(v, k);

				x[k] = json_is_integer(e) ? json_integer_value(e) : -1;
				if (x[k] < 0 || x[k] > lim[k]) {
					iour__pf_push_idx(l, k);
					rc = iour__pf_fail(l, "expected an integer 0 to %lld",
							   (long long)lim[k]);
					goto out;
				}
			}
			insns[j] = (struct iour_insn){ (uint16_t)x[0], (uint8_t)x[1], (uint8_t)x[2],
						       (uint32_t)x[3] };
			iour__pf_pop(l);
		}
		rc = iour_policy__set_prog(p, op, insns, json_array_size(in), pdu);
		if (rc) {
			rc = rc == -ENOMEM ?
				     rc :
				     iour__pf_fail(l,
						   "the kernel's checker would refuse this program "
						   "(%s)",
						   iour_strerror_desc(rc));
			goto out;
		}
		iour__free(insns);
		insns = NULL;
		iour__pf_pop(l);
		iour__pf_pop(l);
	}
	iour__pf_pop(l);
out:
	iour__free(insns);
	return rc;
}

/* ---- the document --------------------------------------------------------- */

static const char *const top_keys[] = {
	"comment",     "version",   "defaultAction",    "target",       "compat",     "noNewPrivs",
	"threads",     "companion", "noFilterFallback", "addr4Literal", "groupsAsOf", "requestOps",
	"registerOps", "sqeFlags",  "entries",          "programs",     NULL
};

static int load_doc(struct ld *l, json_t *root, struct iour_policy *p)
{
	struct iour_filter *f = NULL;
	struct iour_ruleset *rs = NULL;
	uint32_t a, val = 0;
	json_t *v;
	size_t i;
	char why[IOUR_LOAD_ERROR_MSG] = "";
	int rc;

	if (!json_is_object(root))
		return iour__pf_fail(l, "expected a policy (a JSON object), found %s",
				     iour__pf_type_name(root));
	if ((rc = iour__pf_check_keys(l, root, "a policy", top_keys)))
		return rc;
	if ((v = json_object_get(root, "version"))) {
		iour__pf_push_key(l, "version");
		if (!json_is_integer(v) || json_integer_value(v) != 1)
			return iour__pf_fail(l,
					     "unsupported version (this library reads version 1)");
		iour__pf_pop(l);
	}
	for (a = IOUR_POLICY_ATTR__MIN + 1; a < IOUR_POLICY_ATTR__MAX; a++) {
		if (!(v = json_object_get(root, iour__policy_attr_key[a])))
			continue;
		iour__pf_push_key(l, iour__policy_attr_key[a]);
		if ((rc = iour__pf_parse_enum(l, v, iour__policy_attr_key[a],
					      iour__policy_attr_val[a], IOUR__POLICY_ATTR_VALS,
					      &val)))
			return rc;
		iour_policy__set_attr(p, a, val);
		iour__pf_pop(l);
	}
	iour_policy__get_attr(p, IOUR_POLICY_ATTR_DEFAULT, &l->dflt);
	if ((v = json_object_get(root, "groupsAsOf"))) {
		iour__pf_push_key(l, "groupsAsOf");
		if ((rc = iour__pf_parse_kver(l, v, &l->asof)))
			return rc;
		iour__pf_pop(l);
	}
	{
		IOUR_OPTS(iour_filter_opts, fo,
			  .default_verdict =
				  l->dflt == IOUR_POLICY_DEFAULT_ALLOW ? IOUR_ALLOW : IOUR_DENY);
		if ((v = json_object_get(root, "addr4Literal"))) {
			iour__pf_push_key(l, "addr4Literal");
			if (!json_is_boolean(v))
				return iour__pf_fail(l, "expected true or false, found %s",
						     iour__pf_type_name(v));
			fo.flags = json_is_true(v) ? IOUR_FILTER_ADDR4_LITERAL : 0;
			iour__pf_pop(l);
		}
		if (iour_filter__new(&fo, &f))
			return -ENOMEM;
	}
	rc = parse_classic(l, root, &rs);
	if (rc)
		goto out;
	if ((v = json_object_get(root, "entries"))) {
		json_t *e;

		iour__pf_push_key(l, "entries");
		if (iour__pf_want_array(l, v, "a list of entries")) {
			rc = -EBADMSG;
			goto out;
		}
		json_array_foreach(v, i, e)
		{
			iour__pf_push_idx(l, i);
			if ((rc = iour__pf_parse_entry(l, e, f)))
				goto out;
			iour__pf_pop(l);
		}
		iour__pf_pop(l);
	}
	if ((rc = iour_policy__set_ruleset(p, rs)))
		goto out;
	rc = iour__policy_set_filter(p, f, why, sizeof(why));
	if (rc == -IOUR_ERRNO__PROG_TOO_LARGE) {
		l->depth = 0;
		iour__pf_push_key(l, "entries");
		if (why[0])
			iour__pf_fail(l, "%s", why);
		else
			iour__pf_fail(l, "the rules of an opcode need more than %d instructions",
				      IOUR_MAX_INSNS);
		goto out;
	}
	if (rc)
		goto out;
	if ((v = json_object_get(root, "programs")))
		rc = parse_programs(l, v, p);
out:
	iour_filter__free(f);
	iour_ruleset__free(rs);
	return rc;
}

static int init_err(struct iour_load_error *err)
{
	if (!err)
		return 0;
	if (!iour__pf_err_ok(err))
		return -EINVAL;
	err->line = 0;
	err->column = 0;
	if (IOUR_OUT_HAS(err, offset))
		err->offset = 0;
	err->path[0] = '\0';
	err->message[0] = '\0';
	return 0;
}

/* What kind of JSON error jansson found, in words that quote nothing of
 * the text. */
static const char *json_error_kind(const json_error_t *je)
{
	switch (json_error_code(je)) {
	case json_error_invalid_utf8:
		return "invalid UTF-8";
	case json_error_premature_end_of_input:
		return "unexpected end of input";
	case json_error_end_of_input_expected:
		return "text after the end of the JSON value";
	case json_error_null_character:
	case json_error_null_byte_in_key:
		return "a NUL character";
	case json_error_duplicate_key:
		return "a duplicate key";
	case json_error_numeric_overflow:
		return "a number out of range";
	case json_error_stack_overflow:
		return "nested too deeply";
	default:
		return "not valid JSON syntax";
	}
}

/* Documented in include/iouring_restrict/policyfile.h */
int iour_policy__load_json(const char *text, size_t len, const struct iour_policy_load_opts *opts,
			   struct iour_policy **out, struct iour_load_error *err)
{
	struct ld l = { .text = text, .len = len, .err = err };
	struct iour_policy *p = NULL;
	json_error_t je;
	json_t *root;
	int rc;

	if (!text || !out)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_policy_load_opts);
	if (rc)
		return rc;
	if (IOUR_OPTS_GET(opts, flags, 0) != 0 || init_err(err))
		return -EINVAL;
	l.kernel = IOUR_OPTS_GET(opts, kernel, 0);
	l.origin = IOUR_OPTS_GET(opts, origin, NULL);
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		if (json_error_code(&je) == json_error_out_of_memory)
			return -ENOMEM;
		if (iour__pf_err_ok(err)) {
			err->line = je.line > 0 ? (uint32_t)je.line : 1;
			err->column = je.column > 0 ? (uint32_t)je.column : 1;
			err->offset = (uint64_t)je.position;
			/* jansson's own text quotes the file ("near 'root'"): for a
			 * path that names a secret file that would put its contents
			 * in the error.  Position and kind only. */
			snprintf(err->message, sizeof(err->message),
				 "invalid JSON at line %d, column %d: %s",
				 je.line > 0 ? je.line : 1, je.column > 0 ? je.column : 1,
				 json_error_kind(&je));
		}
		return -EBADMSG;
	}
	rc = iour_policy__new(NULL, &p);
	if (!rc)
		rc = load_doc(&l, root, p);
	json_decref(root);
	if (rc) {
		if (rc == -ENOMEM && iour__pf_err_ok(err))
			snprintf(err->message, sizeof(err->message), "out of memory");
		iour_policy__free(p);
		return rc;
	}
	*out = p;
	return 0;
}

#define MAX_FILE (16U << 20)

/* Documented in include/iouring_restrict/policyfile.h */
int iour_policy__load_file(const char *path, const struct iour_policy_load_opts *opts,
			   struct iour_policy **out, struct iour_load_error *err)
{
	struct iour_policy_load_opts o = { .sz = sizeof(o) };
	size_t len = 0, cap = 4096;
	char *buf, *nb;
	ssize_t n;
	int fd, rc;

	if (!path || !out)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_policy_load_opts);
	if (rc)
		return rc;
	if (init_err(err))
		return -EINVAL;
	o.flags = IOUR_OPTS_GET(opts, flags, 0);
	o.origin = IOUR_OPTS_GET(opts, origin, NULL);
	o.kernel = IOUR_OPTS_GET(opts, kernel, 0);
	if (!o.origin)
		o.origin = path;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer (nor a device
	 * for its carrier); O_NOCTTY: a terminal never becomes ours.  Then
	 * only a regular file is read. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		rc = -errno;
		if (iour__pf_err_ok(err))
			snprintf(err->message, sizeof(err->message), "cannot open %s: %s", path,
				 strerror(-rc));
		return rc;
	}
	{
		struct stat st;

		if (fstat(fd, &st) < 0) {
			rc = -errno;
			close(fd);
			if (iour__pf_err_ok(err))
				snprintf(err->message, sizeof(err->message), "cannot read %s: %s",
					 path, strerror(-rc));
			return rc;
		}
		if (!S_ISREG(st.st_mode)) {
			rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
			if (iour__pf_err_ok(err))
				snprintf(err->message, sizeof(err->message),
					 "cannot read %s: not a regular file (%s)", path,
					 S_ISDIR(st.st_mode)  ? "a directory" :
					 S_ISFIFO(st.st_mode) ? "a FIFO" :
					 S_ISCHR(st.st_mode)  ? "a character device" :
					 S_ISBLK(st.st_mode)  ? "a block device" :
					 S_ISSOCK(st.st_mode) ? "a socket" :
								"not a file");
			close(fd);
			return rc;
		}
	}
	buf = iour__malloc(cap);
	rc = buf ? 0 : -ENOMEM;
	while (!rc) {
		if (len == cap) {
			if (cap >= MAX_FILE) {
				rc = -EFBIG;
				break;
			}
			nb = iour__realloc(buf, cap * 2);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		else if (n == 0)
			break;
		else
			len += (size_t)n;
	}
	close(fd);
	if (!rc)
		rc = iour_policy__load_json(buf, len, &o, out, err);
	else if (iour__pf_err_ok(err))
		snprintf(err->message, sizeof(err->message), "cannot read %s: %s", path,
			 rc == -EFBIG ? "larger than 16 MiB" : strerror(-rc));
	iour__free(buf);
	return rc;
}
