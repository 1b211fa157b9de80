/* SPDX-License-Identifier: MIT */
/*
 * The argument-filter compiler's driver: the entry points that run the
 * three stages over the decision graph (filter_ir.c).  The pipeline is
 * described in filter_ir.h.
 */
#include <stdlib.h>

#include "filter_ir.h"

/* ---- entry points --------------------------------------------------------- */
static int prog_from_raw(const struct iour__opfilter *of, uint32_t opcode, struct iour_prog **out)
{
	struct iour_prog *p = iour__malloc(sizeof(*p) + of->raw_cnt * sizeof(struct iour_insn));
	bool payload = false;

	if (!p)
		return -ENOMEM;
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->cnt = of->raw_cnt;
	memcpy(p->insns, of->raw, of->raw_cnt * sizeof(struct iour_insn));
	for (size_t i = 0; i < of->raw_cnt; i++)
		if (of->raw[i].code == C_LD_ABS && of->raw[i].k >= IOUR_CTX_OFF_PDU)
			payload = true;
	p->pdu_size = payload ? iour__opcode_pdu_size(opcode) : 0;
	p->kind = IOUR_PROG_FILTER;
	if (of->raw_cnt == 1 && of->raw[0].code == C_RET_K)
		p->kind = of->raw[0].k ? IOUR_PROG_ALWAYS_ALLOW : IOUR_PROG_ALWAYS_DENY;
	*out = p;
	return 0;
}

/* Longest path (instructions run, RET included) through a program whose
 * jumps all go forward, as the emitter lays them out; UINT32_MAX when out
 * of memory. */
static uint32_t prog_longest_path(const struct iour_prog *p)
{
	uint32_t *len = iour__malloc(p->cnt * sizeof(*len)), best;

	if (!len)
		return UINT32_MAX;
	for (size_t i = p->cnt; i-- > 0;) {
		const struct iour_insn *in = &p->insns[i];
		uint32_t cls = in->code & 7, a, b;

		if (cls == KBPF_RET)
			len[i] = 1;
		else if (in->code == C_JA)
			len[i] = 1 + len[i + 1 + in->k];
		else if (cls == KBPF_JMP) {
			a = len[i + 1 + in->jt];
			b = len[i + 1 + in->jf];
			len[i] = 1 + (a > b ? a : b);
		} else
			len[i] = 1 + len[i + 1];
	}
	best = len[0];
	iour__free(len);
	return best;
}

/*
 * Specialise and emit `root`, falling back to the unspecialised graph when
 * the specialised one does not fit.  A graph that is one interval map over
 * one field with leaf targets (c->leaf_map) is emitted as it is: every test
 * of its balanced search or equality chain splits the values its path
 * leaves into two non-empty parts, so no path knows a test's outcome and
 * specialisation would rebuild the same graph (doc/design.md, "Where a
 * small filter's compile time goes"; the filter_spec_skip unit test
 * compares both ways).
 */
static bool spec_skipped(const struct cc *c, uint32_t root, const struct iour__compile_cfg *cfg)
{
	return root >= 2 && root == c->leaf_map && !cfg->spec_always;
}

static int spec_emit(struct cc *c, uint32_t root, uint32_t opcode,
		     const struct iour__compile_cfg *cfg, struct iour_prog **out)
{
	uint32_t sroot = root;
	int rc;

	if (!spec_skipped(c, root, cfg))
		sroot = iour__fc_specialise(c, root, cfg->spec_budget);

	if (c->err)
		return c->err;
	rc = iour__fc_emit(c, sroot, opcode, cfg->max_insns, out);
	if (rc == -IOUR_ERRNO__PROG_TOO_LARGE && sroot != root)
		rc = iour__fc_emit(c, root, opcode, cfg->max_insns, out);
	return rc;
}

/* Documented in filter_internal.h */
int iour__filter_compile_cfg(const struct iour_filter *f, uint32_t opcode,
			     const struct iour__compile_cfg *cfg, struct iour__compile_stats *stats,
			     struct iour_prog **out)
{
	const struct iour__opfilter *of;
	struct iour__compile_stats local = { 0 };
	struct iour__compile_stats *st = stats ? stats : &local;
	uint32_t max_insns = cfg->max_insns;
	struct iour_prog *prog = NULL, *alt = NULL;
	struct cc c;
	uint32_t root;
	int rc;

	memset(st, 0, sizeof(*st));
	if (opcode >= IOUR__NOPCODES)
		return -EINVAL;
	of = iour__filter_op(f, opcode);
	if (!of)
		return -ENOENT;
	if (of->raw) /* max_insns holds for a raw program too */
		return of->raw_cnt > max_insns ? -IOUR_ERRNO__PROG_TOO_LARGE :
						 prog_from_raw(of, opcode, out);
	rc = iour__fc_init(&c, cfg->big_endian);
	if (rc) {
		iour__fc_fini(&c);
		return rc;
	}
	c.chain = cfg->chain;
	root = iour__fc_lower(&c, f, opcode, of, cfg);
	if (c.err) {
		rc = c.err;
		goto out;
	}
	st->ir_nodes = c.nnodes - 2;
	st->spec_skipped = spec_skipped(&c, root, cfg);
	rc = spec_emit(&c, root, opcode, cfg, &prog);
	if (rc && rc != -IOUR_ERRNO__PROG_TOO_LARGE)
		goto out;
	st->spec_aborted = c.aborted;
	st->spec_nodes = c.nnodes - 2;
	st->trampolines = c.ntramp;
	if (c.mapped_alt) {
		/* the same semantics another way (filter_lower.c,
		 * compile_mapped()): kept if it runs shorter, on a tie if it is
		 * smaller (or, alt_wins_ties, not much larger) */
		int arc = spec_emit(&c, c.mapped_alt, opcode, cfg, &alt);
		uint32_t la, lp;

		if (arc && arc != -IOUR_ERRNO__PROG_TOO_LARGE) {
			rc = arc;
			goto out;
		}
		if (!arc) {
			la = prog_longest_path(alt);
			lp = prog ? prog_longest_path(prog) : 0;
			if (la == UINT32_MAX || lp == UINT32_MAX) {
				rc = -ENOMEM;
				goto out;
			}
			if (!prog || la < lp ||
			    (la == lp && (c.alt_wins_ties ? alt->cnt <= prog->cnt + 8 :
							    alt->cnt < prog->cnt))) {
				iour_prog__free(prog);
				prog = alt;
				alt = NULL;
				rc = 0;
				st->spec_aborted = c.aborted;
				st->trampolines = c.ntramp;
			}
		}
	}
	if (!rc) {
		*out = prog;
		prog = NULL;
	}
out:
	iour_prog__free(prog);
	iour_prog__free(alt);
	iour__fc_fini(&c);
	return rc;
}

/* Documented in include/iouring_restrict/filter.h */
int iour_filter__compile(const struct iour_filter *f, uint32_t opcode,
			 const struct iour_compile_opts *opts, struct iour_prog **out)
{
	struct iour__compile_cfg cfg = { .big_endian = __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ };
	uint32_t max_insns;
	int rc;

	if (!f || !out || opcode >= IOUR__NOPCODES)
		return -EINVAL;
	rc = IOUR_OPTS_VALID(opts, iour_compile_opts);
	if (rc)
		return iour__err_public(rc, IOUR__ERRSET_FILTER_COMPILE);
	if (IOUR_OPTS_GET(opts, flags, 0U))
		return -EINVAL;
	max_insns = IOUR_OPTS_GET(opts, max_insns, 0U);
	if (max_insns > IOUR_MAX_INSNS)
		return -EINVAL;
	if (!max_insns)
		max_insns = IOUR_MAX_INSNS;
	cfg.max_insns = max_insns;
	rc = iour__filter_compile_cfg(f, opcode, &cfg, NULL, out);
	return iour__err_public(rc, IOUR__ERRSET_FILTER_COMPILE);
}
