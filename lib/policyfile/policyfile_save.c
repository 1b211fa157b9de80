/* SPDX-License-Identifier: MIT */
/*
 * Policy files, the other direction: a policy written as canonical JSON
 * (iour_policy__save_json()), and the verdict of one request with the
 * rule that decided it (iour_policy__decide()).  The format is in
 * doc/policy-files.md.
 */
#include <arpa/inet.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>

#include "base/internal.h"
#include "filter/filter_internal.h"
#include "policy/policy_internal.h"
#include "policyfile_internal.h"
#include "base/schema.h"
#include "iouring_restrict/filter.h"
#include "iouring_restrict/names.h"
#include "iouring_restrict/policy.h"
#include "iouring_restrict/policyfile.h"
#include "iouring_restrict/ruleset.h"

/* Field names, as the loader reads them: lib/base/schema.def.  NULL for a
 * field the schema cannot name (saving refuses it: has_unnamed_field). */
static const char *field_name(uint32_t f)
{
	const struct iour__schema_field *sf = iour__schema_field_of(f);

	return sf ? sf->name : NULL;
}

static const char *op_name(uint32_t op)
{
	static const char *const n[] = {
		[IOUR_CMP_EQ] = "==",
		[IOUR_CMP_NE] = "!=",
		[IOUR_CMP_LT] = "<",
		[IOUR_CMP_LE] = "<=",
		[IOUR_CMP_GT] = ">",
		[IOUR_CMP_GE] = ">=",
		[IOUR_CMP_MASKED_EQ] = "&==",
		[IOUR_CMP_ANY_BITS] = "&=",
		[IOUR_CMP_ALL_BITS] = "all-bits",
		[IOUR_CMP_NONE_BITS] = "none-bits",
		[IOUR_CMP_IN_SET] = "in",
		[IOUR_CMP_NOT_IN_SET] = "not in",
		[IOUR_CMP_IN_RANGE] = "in",
		[IOUR_CMP_NOT_IN_RANGE] = "not in",
		[IOUR_CMP_IN_PREFIX] = "in",
		[IOUR_CMP_NOT_IN_PREFIX] = "not in",
	};
	return op < IOUR_ARRAY_SIZE(n) && n[op] ? n[op] : "==";
}

/* A number: an integer when it fits, a hex string otherwise (jansson's
 * integers are signed 64-bit). */
static json_t *num(uint64_t v)
{
	char buf[24];

	if (v <= (uint64_t)INT64_MAX)
		return json_integer((json_int_t)v);
	snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)v);
	return json_string(buf);
}

static json_t *addr4(uint64_t v, int plen)
{
	struct in_addr a = { htonl((uint32_t)v) };
	char buf[INET_ADDRSTRLEN + 4];

	inet_ntop(AF_INET, &a, buf, sizeof(buf));
	if (plen >= 0)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%d", plen);
	return json_string(buf);
}

static json_t *addr6(const uint8_t *a, int plen)
{
	char buf[INET6_ADDRSTRLEN + 5];

	inet_ntop(AF_INET6, a, buf, sizeof(buf));
	if (plen >= 0)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "/%d", plen);
	return json_string(buf);
}

static json_t *value(uint32_t field, uint64_t v)
{
	const char *c = iour__pf_const_name(field, v);

	if (c)
		return json_string(c);
	return field == IOUR_FIELD_CONNECT_ADDR4 ? addr4(v, -1) : num(v);
}

/* jansson refuses NULL values; a failed allocation anywhere makes the
 * whole document NULL. */
static int set(json_t *o, const char *k, json_t *v)
{
	return v ? json_object_set_new(o, k, v) : -1;
}

static int push(json_t *a, json_t *v)
{
	return v ? json_array_append_new(a, v) : -1;
}

static json_t *cond(const struct iour__cmp *c)
{
	json_t *o = json_object(), *a;
	size_t i;
	int bad = !o;

	if (bad)
		return NULL;
	bad |= set(o, "field", json_string(field_name(c->field)));
	bad |= set(o, "op", json_string(op_name(c->op)));
	switch (c->op) {
	case IOUR_CMP_IN_SET:
	case IOUR_CMP_NOT_IN_SET:
		a = json_array();
		bad |= set(o, "values", a);
		for (i = 0; a && i < c->set_len; i++)
			bad |= push(a, value(c->field, c->set[i]));
		break;
	case IOUR_CMP_IN_RANGE:
	case IOUR_CMP_NOT_IN_RANGE:
		a = json_array();
		bad |= set(o, "range", a);
		if (a) {
			bad |= push(a, value(c->field, c->value));
			bad |= push(a, value(c->field, c->arg));
		}
		break;
	case IOUR_CMP_IN_PREFIX:
	case IOUR_CMP_NOT_IN_PREFIX:
		bad |= set(o, "value",
			   c->field == IOUR_FIELD_CONNECT_ADDR4 ? addr4(c->value, (int)c->arg) :
								  addr6(c->addr6, (int)c->arg));
		break;
	case IOUR_CMP_MASKED_EQ:
		bad |= set(o, "mask", num(c->arg));
		bad |= set(o, "value", num(c->value));
		break;
	default:
		bad |= set(o, "value",
			   c->field == IOUR_FIELD_CONNECT_ADDR6 ? addr6(c->addr6, -1) :
								  value(c->field, c->value));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *opname(uint32_t op)
{
	char buf[40];
	const char *n = iour_opcode_name(op);
	size_t i;

	if (!n)
		return json_integer(op);
	for (i = 0; n[i] && i + 1 < sizeof(buf); i++)
		buf[i] = (char)(n[i] >= 'A' && n[i] <= 'Z' ? n[i] - 'A' + 'a' : n[i]);
	buf[i] = '\0';
	return json_string(buf);
}

static json_t *regname(uint32_t op)
{
	char buf[40];
	const char *n = iour_register_op_name(op);
	size_t i;

	if (!n)
		return json_integer(op);
	for (i = 0; n[i] && i + 1 < sizeof(buf); i++)
		buf[i] = (char)(n[i] >= 'A' && n[i] <= 'Z' ? n[i] - 'A' + 'a' : n[i]);
	buf[i] = '\0';
	return json_string(buf);
}

static json_t *entry(uint32_t op, uint32_t verdict, const struct iour__rule *r)
{
	json_t *o = json_object(), *names = json_array(), *args;
	uint32_t i;
	int bad = !o || !names;

	if (bad) {
		json_decref(o);
		json_decref(names);
		return NULL;
	}
	bad |= set(o, "names", names);
	bad |= push(names, opname(op));
	bad |= set(o, "action", json_string(verdict == IOUR_ALLOW ? "allow" : "deny"));
	if (r && r->ncmps) {
		args = json_array();
		bad |= set(o, "args", args);
		for (i = 0; args && i < r->ncmps; i++)
			bad |= push(args, cond(&r->cmps[i]));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *flag_list(uint32_t mask)
{
	json_t *a = json_array();
	uint32_t b;
	int bad = !a;

	for (b = 1; a && b <= IOUR_SQE__VALID; b <<= 1)
		if (mask & b)
			bad |= push(a, json_string(iour_sqe_flag_name(b)));
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* The classic part (rs NULL: none).  Under defaultAction "deny" a file
 * without registerOps or sqeFlags denies every register opcode or SQE
 * flag, so what this policy leaves unrestricted is written out in full
 * (every register opcode, every flag). */
static int classic(json_t *root, const struct iour_ruleset *rs, bool deny)
{
	json_t *a;
	uint32_t op, allowed, required;
	int bad = 0;

	if (!rs) {
		if (!deny)
			return 0;
		a = json_array();
		bad |= set(root, "registerOps", a);
		for (op = 0; a && op < IOUR_REGISTER__COUNT; op++)
			bad |= push(a, regname(op));
		a = json_object();
		bad |= set(root, "sqeFlags", a);
		if (a) {
			bad |= set(a, "allowed", flag_list(IOUR_SQE__VALID));
			bad |= set(a, "required", flag_list(0));
		}
		return bad;
	}

	if (iour_ruleset__sqe_restricted(rs) == 1) {
		a = json_array();
		bad |= set(root, "requestOps", a);
		for (op = 0; a && op < IOUR_OP__COUNT; op++)
			if (iour_ruleset__sqe_op_allowed(rs, op) == 1)
				bad |= push(a, opname(op));
	}
	if (deny || iour_ruleset__register_restricted(rs) == 1) {
		a = json_array();
		bad |= set(root, "registerOps", a);
		for (op = 0; a && op < IOUR_REGISTER__COUNT; op++)
			if (iour_ruleset__register_op_allowed(rs, op) == 1)
				bad |= push(a, regname(op));
	}
	if (iour_ruleset__sqe_flags(rs, &allowed, &required) == 1 || deny) {
		if (iour_ruleset__sqe_flags(rs, &allowed, &required) != 1) {
			allowed = IOUR_SQE__VALID;
			required = 0;
		}
		a = json_object();
		bad |= set(root, "sqeFlags", a);
		if (a) {
			bad |= set(a, "allowed", flag_list(allowed & ~required));
			bad |= set(a, "required", flag_list(required));
		}
	}
	/* A classic part that restricts nothing still exists: say so with an
	 * sqeFlags object that allows everything. */
	if (!json_object_get(root, "requestOps") && !json_object_get(root, "registerOps") &&
	    !json_object_get(root, "sqeFlags")) {
		a = json_object();
		bad |= set(root, "sqeFlags", a);
		if (a) {
			bad |= set(a, "allowed", flag_list(IOUR_SQE__VALID));
			bad |= set(a, "required", flag_list(0));
		}
	}
	return bad;
}

static json_t *program(uint32_t op, const struct iour_prog *pr)
{
	json_t *o = json_object(), *in = json_array(), *i4;
	static const struct iour_insn ret0 = { 0x06, 0, 0, 0 }, ret1 = { 0x06, 0, 0, 1 };
	const struct iour_insn *insns = pr->insns;
	size_t cnt = pr->cnt, i;
	int bad = !o || !in;

	if (pr->kind != IOUR_PROG_FILTER) {
		insns = pr->kind == IOUR_PROG_ALWAYS_ALLOW ? &ret1 : &ret0;
		cnt = 1;
	}
	if (bad) {
		json_decref(o);
		json_decref(in);
		return NULL;
	}
	bad |= set(o, "name", opname(op));
	bad |= set(o, "pduSize", json_integer(pr->kind == IOUR_PROG_FILTER ? pr->pdu_size : 0));
	bad |= set(o, "insns", in);
	for (i = 0; i < cnt && !bad; i++) {
		i4 = json_pack("[iiiI]", insns[i].code, insns[i].jt, insns[i].jf,
			       (json_int_t)insns[i].k);
		bad |= push(in, i4);
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Attributes in a fixed order: the default first, as in seccomp profiles. */
static const uint32_t attr_order[] = { IOUR_POLICY_ATTR_DEFAULT,
				       IOUR_POLICY_ATTR_TARGET,
				       IOUR_POLICY_ATTR_COMPAT,
				       IOUR_POLICY_ATTR_NNP,
				       IOUR_POLICY_ATTR_THREADS,
				       IOUR_POLICY_ATTR_COMPANION,
				       IOUR_POLICY_ATTR_NO_FILTER_FALLBACK };

/* One unconditional rule, nothing else: the opcode is allowed or denied
 * outright by the filter. */
static bool simple(const struct iour_policy *p, uint32_t op)
{
	const struct iour__opfilter *of = p->src ? iour__filter_op(p->src, op) : NULL;

	return p->progs[op] && !p->raw[op] && of && !of->raw &&
	       ((of->nrules == 1 && of->rules[0].ncmps == 0) ||
		(of->nrules == 0 && of->has_default));
}

/* The verdict of a simple() opcode. */
static uint32_t simple_verdict(const struct iour_policy *p, uint32_t op)
{
	const struct iour__opfilter *of = iour__filter_op(p->src, op);

	return of->nrules ? of->rules[0].verdict : of->default_verdict;
}

static json_t *build(const struct iour_policy *p)
{
	json_t *root = json_object(), *entries = NULL, *progs = NULL;
	const struct iour_filter *f = p->src;
	uint32_t i, op, dflt = p->attr[IOUR_POLICY_ATTR_DEFAULT] ? IOUR_ALLOW : IOUR_DENY;
	int bad = !root;

	if (bad)
		return NULL;
	bad |= set(root, "version", json_integer(1));
	for (i = 0; i < IOUR_ARRAY_SIZE(attr_order); i++) {
		uint32_t a = attr_order[i];

		bad |= set(root, iour__policy_attr_key[a],
			   json_string(iour__policy_attr_val[a][p->attr[a]]));
	}
	if (f && (f->flags & IOUR_FILTER_ADDR4_LITERAL))
		bad |= set(root, "addr4Literal", json_true());
	bad |= classic(root, p->rs, dflt == IOUR_DENY);
	/* Opcodes whose only rule is unconditional (and whose default is
	 * unreachable) share one entry per verdict, written first. */
	for (i = 0; i < 2 && f && !bad; i++) {
		json_t *e = NULL, *names = NULL;

		for (op = 0; op < IOUR__NOPCODES && !bad; op++) {
			if (!simple(p, op) || simple_verdict(p, op) != 1 - i)
				continue;
			if (!e) {
				e = entry(op, 1 - i, NULL);
				if (!entries)
					bad |= set(root, "entries", entries = json_array());
				bad |= push(entries, e);
				names = e ? json_object_get(e, "names") : NULL;
				continue;
			}
			bad |= names ? push(names, opname(op)) : -1;
		}
	}
	for (op = 0; op < IOUR__NOPCODES && !bad; op++) {
		const struct iour__opfilter *of = f ? iour__filter_op(f, op) : NULL;
		uint32_t def;

		if (!p->progs[op] || simple(p, op))
			continue;
		if (p->raw[op] || !of || of->raw) {
			if (!progs)
				bad |= set(root, "programs", progs = json_array());
			if (progs)
				bad |= push(progs, program(op, p->progs[op]));
			continue;
		}
		if (!entries)
			bad |= set(root, "entries", entries = json_array());
		if (!entries)
			break;
		for (i = 0; i < of->nrules; i++)
			bad |= push(entries, entry(op, of->rules[i].verdict, &of->rules[i]));
		/* The opcode's default, when the file's default would not give
		 * it: an unconditional last entry (unless one is there). */
		def = of->has_default ? of->default_verdict : f->default_verdict;
		if (of->nrules == 0 || (def != dflt && of->rules[of->nrules - 1].ncmps != 0))
			bad |= push(entries, entry(op, def, NULL));
	}
	if (bad) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* Whether a rule compares a field the file format has no name for: the
 * file would not load back as the same policy, so saving refuses it. */
static bool has_unnamed_field(const struct iour_filter *f)
{
	uint32_t op, i, j;

	for (op = 0; f && op < IOUR__NOPCODES; op++) {
		const struct iour__opfilter *of = iour__filter_op(f, op);

		for (i = 0; of && i < of->nrules; i++)
			for (j = 0; j < of->rules[i].ncmps; j++)
				if (!field_name(of->rules[i].cmps[j].field))
					return true;
	}
	return false;
}

/* Documented in include/iouring_restrict/policyfile.h */
int iour_policy__save_json(const struct iour_policy *p, uint64_t flags, char *buf, size_t size)
{
	json_t *root;
	size_t need;
	char *tmp;

	if (!p || (!buf && size) || flags)
		return -EINVAL;
	if (has_unnamed_field(p->src))
		return -EINVAL;
	root = build(p);
	if (!root)
		return -ENOMEM;
	need = json_dumpb(root, NULL, 0, JSON_INDENT(2));
	if (need == 0 || need + 1 > INT_MAX) {
		json_decref(root);
		return need ? -EOVERFLOW : -ENOMEM;
	}
	tmp = iour__malloc(need + 2);
	if (!tmp) {
		json_decref(root);
		return -ENOMEM;
	}
	json_dumpb(root, tmp, need, JSON_INDENT(2));
	json_decref(root);
	tmp[need] = '\n';
	tmp[need + 1] = '\0';
	if (size) {
		size_t n = need + 1 < size ? need + 1 : size - 1;

		memcpy(buf, tmp, n);
		buf[n] = '\0';
	}
	iour__free(tmp);
	return (int)(need + 1);
}

/* ---- decide ---------------------------------------------------------------- */

/* The verdict of a program, or of a deny-list split across stacked
 * programs (->next): the kernel runs every one and the request runs only
 * if all allow (doc/design.md, "Stacked filters"). */
static int run(const struct iour_prog *pr, const uint8_t *ctx, uint32_t *verdict)
{
	*verdict = IOUR_ALLOW;
	for (; pr && *verdict == IOUR_ALLOW; pr = pr->next) {
		struct iour_sim_result r = { .sz = sizeof(r) };

		if (pr->kind != IOUR_PROG_FILTER) {
			*verdict = pr->kind == IOUR_PROG_ALWAYS_ALLOW ? IOUR_ALLOW : IOUR_DENY;
			continue;
		}
		if (iour_cbpf_run(pr->insns, pr->cnt, ctx, IOUR_CTX_SIZE, &r))
			return -IOUR_ERRNO__INTERNAL;
		*verdict = r.allowed ? IOUR_ALLOW : IOUR_DENY;
	}
	return 0;
}

/* Does rule r of opcode op hold for ctx?  Compiled alone, with the
 * opposite verdict as default, so the answer is the compiler's own. */
static int rule_holds(const struct iour_filter *src, uint32_t op, const struct iour__rule *r,
		      const uint8_t *ctx, bool *holds)
{
	IOUR_OPTS(iour_filter_opts, fo, .default_verdict = !r->verdict, .flags = src->flags);
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__,
					 .max_insns = IOUR_MAX_INSNS };
	struct iour_cmp cmps[IOUR_FILTER_MAX_CMPS];
	struct iour_filter *f;
	struct iour_prog *pr = NULL;
	uint32_t v = 0, i;
	int rc;

	for (i = 0; i < r->ncmps && i < IOUR_FILTER_MAX_CMPS; i++) {
		const struct iour__cmp *c = &r->cmps[i];

		cmps[i] = (struct iour_cmp){ .sz = sizeof(cmps[i]),
					     .field = c->field,
					     .op = c->op,
					     .value = c->value,
					     .arg = c->arg,
					     .set = c->set,
					     .set_len = c->set_len };
		memcpy(cmps[i].addr6, c->addr6, 16);
	}
	rc = iour_filter__new(&fo, &f);
	if (rc)
		return rc;
	rc = iour_filter__add_rule(f, op, r->verdict, cmps, r->ncmps);
	/* A deny rule of a large deny-list may need stacked programs alone. */
	if (!rc)
		rc = iour__filter_compile_stack(f, op, &cfg, NULL, &pr, NULL, 0);
	if (!rc)
		rc = run(pr, ctx, &v);
	iour_prog__free(pr);
	iour_filter__free(f);
	if (rc)
		return rc == -ENOMEM ? rc : -IOUR_ERRNO__INTERNAL;
	*holds = v == r->verdict;
	return 0;
}

/* Documented in include/iouring_restrict/policyfile.h */
int iour_policy__decide(const struct iour_policy *p, const uint8_t *ctx, size_t ctx_len,
			struct iour_request_verdict *out)
{
	struct iour_request_verdict d = { .rule = IOUR_VERDICT_NO_RULE };
	const struct iour__opfilter *of;
	uint32_t op, flags, allowed = IOUR_SQE__VALID, required = 0, v;
	size_t n;
	int rc;

	if (!p || !ctx || !out || ctx_len != IOUR_CTX_SIZE || out->sz > IOUR_OPTS_MAX_SZ ||
	    !IOUR_OUT_HAS(out, rule))
		return -EINVAL;
	op = ctx[IOUR_CTX_OFF_OPCODE];
	flags = ctx[IOUR_CTX_OFF_SQE_FLAGS];
	d.opcode = op;
	if (p->rs && iour_ruleset__sqe_restricted(p->rs) == 1 &&
	    iour_ruleset__sqe_op_allowed(p->rs, op) != 1) {
		d.verdict = IOUR_DENY;
		d.reason = IOUR_DECIDE_CLASSIC_GATE;
		goto done;
	}
	if (p->rs)
		iour_ruleset__sqe_flags(p->rs, &allowed, &required);
	if ((flags & ~(allowed | required)) || (flags & required) != required) {
		d.verdict = IOUR_DENY;
		d.reason = IOUR_DECIDE_SQE_FLAGS;
		goto done;
	}
	if (p->progs[op]) {
		rc = run(p->progs[op], ctx, &d.verdict);
		if (rc)
			return rc;
		of = p->src && !p->raw[op] ? iour__filter_op(p->src, op) : NULL;
		if (!of || of->raw) {
			d.reason = IOUR_DECIDE_PROGRAM;
			goto done;
		}
		d.reason = IOUR_DECIDE_OPCODE_DEFAULT;
		for (n = 0; n < of->nrules; n++) {
			bool holds = false;

			rc = rule_holds(p->src, op, &of->rules[n], ctx, &holds);
			if (rc)
				return rc;
			if (holds) {
				d.reason = IOUR_DECIDE_RULE;
				d.rule = (uint32_t)n;
				v = of->rules[n].verdict;
				if (v != d.verdict)
					return -IOUR_ERRNO__INTERNAL;
				break;
			}
		}
		goto done;
	}
	if (p->rs && iour_ruleset__sqe_restricted(p->rs) == 1) {
		d.verdict = IOUR_ALLOW;
		d.reason = IOUR_DECIDE_CLASSIC_ALLOW;
		goto done;
	}
	d.verdict = p->attr[IOUR_POLICY_ATTR_DEFAULT] == IOUR_POLICY_DEFAULT_ALLOW ? IOUR_ALLOW :
										     IOUR_DENY;
	d.reason = IOUR_DECIDE_POLICY_DEFAULT;
done:
	d.sz = out->sz;
	memcpy(out, &d, out->sz < sizeof(d) ? out->sz : sizeof(d));
	return 0;
}
