/* SPDX-License-Identifier: MIT */
/*
 * iour-restrict agent: its configuration file (--config), which maps a
 * container's annotations to a policy in --policy-dir (doc/agent.md,
 * "The configuration file"):
 *
 *   { "rules": [ { "annotation": "io.kubernetes.cri.image-name",
 *                  "value": "registry.example/web:*", "policy": "web.json" } ] }
 *
 * The first rule whose annotation is present, with a value matching
 * "value" (fnmatch(3); absent: any value), names the policy.  A file that
 * is not valid in every part is refused whole: unknown keys, a policy
 * that is not a plain file name, or one that does not load.
 */
#include <errno.h>
#include <fnmatch.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "core/cli.h"

const char *agent_source_str(enum agent_source s)
{
	switch (s) {
	case AGENT_SRC_ANNOTATION:
		return "annotation";
	case AGENT_SRC_METADATA:
		return "metadata";
	case AGENT_SRC_CONFIG:
		return "config";
	case AGENT_SRC_DEFAULT:
		return "default";
	default:
		return "none";
	}
}

bool agent_policy_name_ok(const char *name)
{
	size_t n = strlen(name);

	if (!n || n > NAME_MAX || name[0] == '.')
		return false;
	for (const char *p = name; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

void agent_config_free(struct agent_config *c)
{
	for (size_t i = 0; i < c->nrules; i++) {
		free(c->rules[i].annotation);
		free(c->rules[i].value);
		free(c->rules[i].policy);
	}
	free(c->rules);
	c->rules = NULL;
	c->nrules = 0;
}

/* Does @dir/@name exist and load as a policy file? */
static int policy_loads(const char *dir, const char *name, char *err, size_t errlen)
{
	struct iour_policy_load_opts lo = { .sz = sizeof(lo) };
	struct iour_load_error e;
	struct iour_policy *pol = NULL;
	char *path = NULL;
	int r;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return -ENOMEM;
	memset(&e, 0, sizeof(e));
	e.sz = sizeof(e);
	r = iour_policy__load_file(path, &lo, &pol, &e);
	if (r)
		snprintf(err, errlen, "policy %s: %s", path,
			 e.message[0] ? e.message : cli_strerror(r));
	iour_policy__free(pol);
	free(path);
	return r;
}

static int rule_load(json_t *o, size_t i, const char *dir, struct agent_rule *r, char *err,
		     size_t errlen)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o)) {
		snprintf(err, errlen, "rules[%zu]: not an object", i);
		return -EINVAL;
	}
	json_object_foreach(o, k, v)
	{
		char **dst;

		if (!strcmp(k, "annotation"))
			dst = &r->annotation;
		else if (!strcmp(k, "value"))
			dst = &r->value;
		else if (!strcmp(k, "policy"))
			dst = &r->policy;
		else {
			snprintf(err, errlen, "rules[%zu]: unknown key \"%s\"", i, k);
			return -EINVAL;
		}
		if (!json_is_string(v) || !json_string_value(v)[0]) {
			snprintf(err, errlen, "rules[%zu].%s: not a non-empty string", i, k);
			return -EINVAL;
		}
		*dst = strdup(json_string_value(v));
		if (!*dst)
			return -ENOMEM;
	}
	if (!r->annotation || !r->policy) {
		snprintf(err, errlen, "rules[%zu]: needs \"annotation\" and \"policy\"", i);
		return -EINVAL;
	}
	if (!agent_policy_name_ok(r->policy)) {
		snprintf(err, errlen,
			 "rules[%zu].policy: \"%s\" is not a plain file name in --policy-dir", i,
			 r->policy);
		return -EINVAL;
	}
	return policy_loads(dir, r->policy, err, errlen);
}

int agent_config_load(const char *path, const char *policy_dir, struct agent_config *out, char *err,
		      size_t errlen)
{
	json_error_t je;
	json_t *root, *rules;
	const char *k;
	json_t *v;
	int r = 0;

	memset(out, 0, sizeof(*out));
	root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snprintf(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		return -EINVAL;
	}
	json_object_foreach(root, k, v)
	{
		if (strcmp(k, "rules")) {
			snprintf(err, errlen, "unknown key \"%s\"", k);
			r = -EINVAL;
			goto out;
		}
	}
	rules = json_object_get(root, "rules");
	if (!json_is_array(rules)) {
		snprintf(err, errlen, "no \"rules\" array");
		r = -EINVAL;
		goto out;
	}
	out->rules = calloc(json_array_size(rules) + 1, sizeof(*out->rules));
	if (!out->rules) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < json_array_size(rules); i++) {
		out->nrules++;
		r = rule_load(json_array_get(rules, i), i, policy_dir, &out->rules[i], err, errlen);
		if (r)
			goto out;
	}
out:
	if (r == -ENOMEM)
		snprintf(err, errlen, "out of memory");
	if (r)
		agent_config_free(out);
	json_decref(root);
	return r;
}

const struct agent_rule *agent_config_match(const struct agent_config *c, const json_t *ann)
{
	if (!json_is_object(ann))
		return NULL;
	for (size_t i = 0; i < c->nrules; i++) {
		const struct agent_rule *r = &c->rules[i];
		json_t *v = json_object_get(ann, r->annotation);

		if (!json_is_string(v))
			continue;
		if (!r->value || !fnmatch(r->value, json_string_value(v), 0))
			return r;
	}
	return NULL;
}
