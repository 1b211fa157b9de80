/* SPDX-License-Identifier: MIT */
/*
 * Stage 3 of the argument-filter compiler (filter_ir.h): emission.
 * The decision graph is laid out in reverse post-order, each node encoded
 * as [load][transform][test] with loads skipped where A already holds the
 * word, and symbolic jumps are fixed up, through trampolines where a
 * conditional jump would reach past 255 instructions.
 */
#include <stdlib.h>

#include "filter_ir.h"

static const uint16_t jop_code[4] = { C_JEQ_K, C_JGT_K, C_JGE_K, C_JSET_K };

/* ---- emission ------------------------------------------------------------- */
struct sinsn {
	uint16_t code;
	uint8_t is_jmp; /* 1: conditional (jt/jf are labels); 2: JA (jt) */
	uint8_t tramp;  /* inserted trampoline */
	uint32_t k;
	uint32_t jt, jf; /* label ids */
	uint32_t uid;
};

struct emitter {
	struct sinsn *v;
	size_t n, cap;
	uint32_t *lab_uid; /* label id -> uid of the insn it marks */
	size_t nlab, caplab;
	uint32_t next_uid;
	uint32_t ntramp;
};

static int em_push(struct emitter *e, uint16_t code, uint32_t k, uint8_t is_jmp, uint32_t jt,
		   uint32_t jf)
{
	struct sinsn *s;

	if (e->n == e->cap) {
		size_t ncap = e->cap ? e->cap * 2 : 64;
		struct sinsn *nv = iour__realloc(e->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		e->v = nv;
		e->cap = ncap;
	}
	s = &e->v[e->n++];
	memset(s, 0, sizeof(*s));
	s->code = code;
	s->k = k;
	s->is_jmp = is_jmp;
	s->jt = jt;
	s->jf = jf;
	s->uid = e->next_uid++;
	return 0;
}

static int em_newlabel(struct emitter *e, uint32_t uid, uint32_t *id)
{
	if (e->nlab == e->caplab) {
		size_t ncap = e->caplab ? e->caplab * 2 : 64;
		uint32_t *nl = iour__realloc(e->lab_uid, ncap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		e->lab_uid = nl;
		e->caplab = ncap;
	}
	e->lab_uid[e->nlab] = uid;
	*id = (uint32_t)e->nlab++;
	return 0;
}

/* Emit the instructions computing wx (full: from scratch; else from the
 * raw word already in A). */
static int em_xform(struct emitter *e, uint64_t wx, bool full)
{
	uint32_t off = WX_OFF(wx);
	int rc = 0;

	if (full)
		rc |= em_push(e, C_LD_ABS, off, 0, 0, 0);
	switch (WX_KIND(wx)) {
	case WX_AND:
		rc |= em_push(e, C_AND_K, WX_K(wx), 0, 0, 0);
		break;
	case WX_BSWAP16:
		/* w < 2^16: (w * 0x10001) >> 8 holds both bytes swapped */
		rc |= em_push(e, C_MUL_K, 0x10001, 0, 0, 0);
		rc |= em_push(e, C_RSH_K, 8, 0, 0, 0);
		rc |= em_push(e, C_AND_K, 0xffff, 0, 0, 0);
		break;
	case WX_BSWAP32:
		rc |= em_push(e, C_LSH_K, 24, 0, 0, 0);
		rc |= em_push(e, C_TAX, 0, 0, 0, 0);
		rc |= em_push(e, C_LD_ABS, off, 0, 0, 0);
		rc |= em_push(e, C_AND_K, 0xff00, 0, 0, 0);
		rc |= em_push(e, C_LSH_K, 8, 0, 0, 0);
		rc |= em_push(e, C_OR_X, 0, 0, 0, 0);
		rc |= em_push(e, C_TAX, 0, 0, 0, 0);
		rc |= em_push(e, C_LD_ABS, off, 0, 0, 0);
		rc |= em_push(e, C_RSH_K, 8, 0, 0, 0);
		rc |= em_push(e, C_AND_K, 0xff00, 0, 0, 0);
		rc |= em_push(e, C_OR_X, 0, 0, 0, 0);
		rc |= em_push(e, C_TAX, 0, 0, 0, 0);
		rc |= em_push(e, C_LD_ABS, off, 0, 0, 0);
		rc |= em_push(e, C_RSH_K, 24, 0, 0, 0);
		rc |= em_push(e, C_OR_X, 0, 0, 0, 0);
		break;
	}
	return rc ? -ENOMEM : 0;
}

/* Reverse post-order of the nodes reachable from root into order[]
 * (room for 2 * c->nnodes + 2: it is the walk's stack first), with
 * post[] (c->nnodes) and state[] (c->nnodes bytes, zeroed) as scratch. */
static void rpo_order(const struct cc *c, uint32_t root, uint32_t *order, uint32_t *post,
		      uint8_t *state, uint32_t *count, uint32_t *index)
{
	uint32_t *stack = order;
	uint32_t sp = 0, np = 0;

	stack[sp++] = root;
	while (sp) {
		uint32_t n = stack[sp - 1];

		if (state[n] == 0) {
			state[n] = 1;
			if (!is_leaf(c, n)) {
				/* visit t first, then f: f ends up right after n */
				if (!state[c->nodes[n].f])
					stack[sp++] = c->nodes[n].f;
				if (!state[c->nodes[n].t])
					stack[sp++] = c->nodes[n].t;
			}
		} else {
			sp--;
			if (state[n] == 1) {
				state[n] = 2;
				post[np++] = n;
			}
		}
	}
	for (uint32_t i = 0; i < np; i++)
		order[i] = post[np - 1 - i];
	for (uint32_t i = 0; i < np; i++)
		index[order[i]] = i;
	*count = np;
}

/* Is node n a test of an address word a range pre-check reads? */
static bool precheck_test(const struct cc *c, uint32_t n)
{
	uint64_t wx = c->nodes[n].wx;

	return !is_leaf(c, n) && WX_KIND(wx) == WX_RAW && WX_K(wx) == 0 &&
	       (WX_OFF(wx) == IOUR_CTX_OFF_CONNECT_ADDR ||
		WX_OFF(wx) == IOUR_CTX_OFF_CONNECT_ADDR + 12);
}

/*
 * A stacked program's range pre-check (filter_lower.c, range_precheck())
 * is the root and at most two levels of tests below it on words 24 and
 * 36.  Reverse post-order puts the tests of one branch after the whole
 * graph the other branch leads to, so that branch's requests would pay a
 * trampoline (JA) in every program of a stack.  Those few tests go
 * first instead, the rest keeping its order: still every jump forward
 * (checked; the order is kept as it is otherwise).  0 or -ENOMEM.
 */
static int hoist_precheck(const struct cc *c, uint32_t root, uint32_t *order, uint32_t count,
			  uint32_t *index)
{
	uint32_t head[7], nh = 0, from = 0;
	uint32_t *tmp;
	size_t k = 0;

	if (!count || !precheck_test(c, root))
		return 0;
	head[nh++] = root;
	for (int d = 0; d < 2; d++) { /* two levels below the root */
		uint32_t to = nh;

		for (uint32_t i = from; i < to; i++)
			for (int w = 0; w < 2; w++) {
				uint32_t ch = w ? c->nodes[head[i]].f : c->nodes[head[i]].t;
				bool seen = false;

				for (uint32_t j = 0; j < nh; j++)
					seen |= head[j] == ch;
				if (!seen && precheck_test(c, ch))
					head[nh++] = ch;
			}
		from = to;
	}
	/* zeroed: every slot is written below, which the analyzer cannot see */
	tmp = iour__calloc(count, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	/* the head in its reverse post-order, then the rest */
	for (uint32_t i = 0; i < count; i++)
		for (uint32_t j = 0; j < nh; j++)
			if (order[i] == head[j])
				tmp[k++] = order[i];
	for (uint32_t i = 0; i < count; i++) {
		bool in = false;

		for (uint32_t j = 0; j < nh; j++)
			in |= order[i] == head[j];
		if (!in)
			tmp[k++] = order[i];
	}
	for (uint32_t i = 0; i < count; i++)
		index[tmp[i]] = i;
	for (uint32_t i = 0; i < count; i++) {
		const struct node *n = &c->nodes[tmp[i]];

		if (!is_leaf(c, tmp[i]) && (index[n->t] <= i || index[n->f] <= i)) {
			for (uint32_t j = 0; j < count; j++) /* a backward jump: keep */
				index[order[j]] = j;
			iour__free(tmp);
			return 0;
		}
	}
	memcpy(order, tmp, (size_t)count * sizeof(*order));
	iour__free(tmp);
	return 0;
}

/* Label of the entry point of `to` for a jump from a block that leaves
 * the value of `from_wx` in A. */
static uint32_t edge_label(const struct cc *c, const uint32_t *index, uint64_t from_wx, uint32_t to)
{
	const struct node *n = &c->nodes[to];
	uint32_t base = 3 * index[to];

	if (n->jop == J_LEAF || from_wx == n->wx)
		return base + 2;
	if (WX_KIND(n->wx) != WX_RAW && from_wx == WX(WX_OFF(n->wx), WX_RAW, 0))
		return base + 1;
	return base;
}

/* Position of every uid in the current instruction vector. */
static int em_positions(const struct emitter *e, uint32_t **pos)
{
	uint32_t *p = iour__malloc((e->next_uid ? e->next_uid : 1) * sizeof(*p));

	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < e->n; i++)
		p[e->v[i].uid] = (uint32_t)i;
	*pos = p;
	return 0;
}

/* One round of em_fix_jumps: instruction positions, the nearest RET #0 /
 * RET #1 at or after each instruction, and the trampolines planned so far
 * (extra[j] goes right after instruction after[j]; after[] descends). */
struct fj_round {
	uint32_t *pos;
	uint32_t *nret;
	size_t *after;
	struct sinsn *extra;
	size_t nafter;
};

static void fj_free(struct fj_round *r)
{
	iour__free(r->pos);
	iour__free(r->nret);
	iour__free(r->after);
	iour__free(r->extra);
	memset(r, 0, sizeof(*r));
}

static int fj_start(const struct emitter *e, struct fj_round *r)
{
	int rc;

	memset(r, 0, sizeof(*r));
	rc = em_positions(e, &r->pos);
	if (rc)
		return rc;
	r->nret = iour__malloc(2 * (e->n + 1) * sizeof(*r->nret));
	if (!r->nret) {
		fj_free(r);
		return -ENOMEM;
	}
	r->nret[2 * e->n] = r->nret[2 * e->n + 1] = UINT32_MAX;
	for (size_t i = e->n; i-- > 0;) {
		const struct sinsn *q = &e->v[i];

		r->nret[2 * i] = q->code == C_RET_K && q->k == 0 ? (uint32_t)i : r->nret[2 * i + 2];
		r->nret[2 * i + 1] =
			q->code == C_RET_K && q->k == 1 ? (uint32_t)i : r->nret[2 * i + 3];
	}
	return 0;
}

/* An instruction within reach of jump i that does what the one at tpos
 * does: a RET with the same value, or a trampoline to tpos; or lim + 1. */
static size_t fj_in_reach(const struct emitter *e, const struct fj_round *r, size_t i,
			  uint32_t tpos, size_t lim)
{
	const struct sinsn *tgt = &e->v[tpos];
	size_t j;

	if (tgt->code == C_RET_K && tgt->k <= 1) {
		j = r->nret[2 * (i + 1) + tgt->k];
		return j == UINT32_MAX ? lim + 1 : j;
	}
	for (j = i + 1; j <= lim; j++) {
		const struct sinsn *q = &e->v[j];

		if (tgt->code == C_RET_K && q->code == C_RET_K && q->k == tgt->k)
			break;
		if (q->tramp && q->is_jmp == 2 && r->pos[e->lab_uid[q->jt]] == tpos)
			break;
	}
	return j;
}

/* A trampoline planned in this round a little after jump i that does
 * what the instruction at tpos does (the margin absorbs the insertions in
 * between; the next round re-checks every distance), or (size_t)-1. */
static size_t fj_planned(const struct emitter *e, const struct fj_round *r, size_t i, uint32_t tpos)
{
	const struct sinsn *tgt = &e->v[tpos];

	for (size_t j = r->nafter; j-- > 0;) {
		const struct sinsn *q = &r->extra[j];

		if (r->after[j] - i + (r->nafter - j) > 200)
			return (size_t)-1;
		if ((tgt->code == C_RET_K && q->code == C_RET_K && q->k == tgt->k) ||
		    (q->is_jmp == 2 && r->pos[e->lab_uid[q->jt]] == tpos))
			return j;
	}
	return (size_t)-1;
}

/* Plan a trampoline right after jump i for its label lab (aiming at tpos):
 * a RET copy, or a JA that never chains to another trampoline. */
static int fj_plan(struct emitter *e, struct fj_round *r, size_t i, uint32_t lab, uint32_t tpos,
		   uint32_t *uid)
{
	size_t *na = iour__realloc(r->after, (r->nafter + 1) * sizeof(*na));
	struct sinsn *ne;
	struct sinsn *t;
	const struct sinsn *tgt = &e->v[tpos];

	if (na)
		r->after = na;
	ne = iour__realloc(r->extra, (r->nafter + 1) * sizeof(*ne));
	if (ne)
		r->extra = ne;
	if (!na || !ne)
		return -ENOMEM;
	t = &r->extra[r->nafter];
	memset(t, 0, sizeof(*t));
	t->tramp = 1;
	t->uid = e->next_uid++;
	if (tgt->code == C_RET_K) {
		t->code = C_RET_K;
		t->k = tgt->k;
	} else {
		t->code = C_JA;
		t->is_jmp = 2;
		t->jt = tgt->is_jmp == 2 ? tgt->jt : lab;
	}
	r->after[r->nafter++] = i;
	*uid = t->uid;
	e->ntramp++;
	return 0;
}

/* Make label `which` of conditional jump i reach; *changed when it did not. */
static int fj_fix_one(struct emitter *e, struct fj_round *r, size_t i, int which, bool *changed)
{
	const struct sinsn *s = &e->v[i];
	uint32_t lab = which ? s->jf : s->jt;
	uint32_t tpos = r->pos[e->lab_uid[lab]];
	size_t lim = i + 256 < e->n ? i + 256 : e->n - 1;
	size_t j;
	uint32_t uid, nl;
	int rc;

	if (tpos - i - 1 <= 255)
		return 0;
	*changed = true;
	j = fj_in_reach(e, r, i, tpos, lim);
	if (j <= lim) {
		uid = e->v[j].uid;
	} else {
		j = r->nafter ? fj_planned(e, r, i, tpos) : (size_t)-1;
		if (j != (size_t)-1 && r->extra) {
			uid = r->extra[j].uid;
		} else {
			rc = fj_plan(e, r, i, lab, tpos, &uid);
			if (rc)
				return rc;
		}
	}
	if (em_newlabel(e, uid, &nl))
		return -ENOMEM;
	if (which)
		e->v[i].jf = nl;
	else
		e->v[i].jt = nl;
	return 0;
}

/* Insert the planned trampolines into the instruction vector. */
static int fj_apply(struct emitter *e, const struct fj_round *r, uint32_t max_insns)
{
	size_t nn = e->n + r->nafter, w = nn, a = 0;
	struct sinsn *nv;

	if (nn > max_insns)
		return -IOUR_ERRNO__PROG_TOO_LARGE;
	nv = iour__malloc(nn * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	for (size_t i = e->n; i-- > 0;) {
		/* trampolines planned after i, in plan order */
		size_t first = a;

		while (a < r->nafter && r->after[a] == i)
			a++;
		for (size_t q = a; q-- > first;)
			nv[--w] = r->extra[q];
		nv[--w] = e->v[i];
	}
	iour__free(e->v);
	e->v = nv;
	e->n = e->cap = nn;
	return 0;
}

/*
 * Make every conditional jump reach: a jump skipping more than 255
 * instructions is redirected to a RET with the same value within reach,
 * or to a JA (or RET copy) inserted right after it.  Repeats until
 * stable; fails when the program outgrows max_insns.
 */
static int em_fix_jumps(struct emitter *e, uint32_t max_insns)
{
	/* no jump of a program this short skips more than 255 */
	if (e->n <= 257)
		return 0;
	for (int round = 0; round < 64; round++) {
		struct fj_round r;
		bool changed = false;
		int rc = fj_start(e, &r);

		for (size_t i = e->n; !rc && i-- > 0;) {
			if (e->v[i].is_jmp != 1)
				continue;
			rc = fj_fix_one(e, &r, i, 0, &changed);
			if (!rc)
				rc = fj_fix_one(e, &r, i, 1, &changed);
		}
		if (!rc && r.nafter)
			rc = fj_apply(e, &r, max_insns);
		fj_free(&r);
		if (rc)
			return rc;
		if (!changed)
			return 0;
	}
	return -IOUR_ERRNO__INTERNAL;
}

/* Documented in filter_ir.h */
int iour__fc_emit(struct cc *c, uint32_t root, uint32_t opcode, uint32_t max_insns,
		  struct iour_prog **out)
{
	struct emitter e = { 0 };
	uint32_t *order, *post, *index, *pos = NULL, count = 0;
	uint8_t *state, *need; /* need: bit 0 full load, bit 1 transform from raw */
	struct iour_prog *p = NULL;
	bool payload = false;
	size_t nn = c->nnodes;
	void *blk;
	int rc = 0;

	/* one block of scratch: index[], order[] (the walk's stack first),
	 * post[], then the bytes state[] and need[] (doc/design.md, "Where a
	 * small filter's compile time goes") */
	blk = iour__calloc(1, (nn + (2 * nn + 2) + nn) * sizeof(uint32_t) + 2 * nn + 1);
	if (!blk)
		return -ENOMEM;
	index = blk;
	order = index + nn;
	post = order + 2 * nn + 2;
	state = (uint8_t *)(post + nn);
	need = state + nn;
	rpo_order(c, root, order, post, state, &count, index);
	if (c->precheck)
		rc = hoist_precheck(c, root, order, count, index);
	if (rc)
		goto out;
	need[0] |= 1; /* A holds nothing useful at the start */
	for (uint32_t i = 0; i < count; i++) {
		const struct node *n = &c->nodes[order[i]];

		if (n->jop == J_LEAF)
			continue;
		for (int w = 0; w < 2; w++) {
			uint32_t ch = w ? n->f : n->t;
			uint32_t l = edge_label(c, index, n->wx, ch) % 3;

			if (l == 0)
				need[index[ch]] |= 1;
			else if (l == 1)
				need[index[ch]] |= 2;
		}
	}
	/* three labels per node: full load, transform, test */
	e.caplab = 3 * (size_t)count + 16;
	e.lab_uid = iour__malloc(e.caplab * sizeof(*e.lab_uid));
	if (!e.lab_uid) {
		rc = -ENOMEM;
		goto out;
	}
	e.nlab = 3 * (size_t)count;
	for (size_t i = 0; i < count && !rc; i++) {
		const struct node *n = &c->nodes[order[i]];

		e.lab_uid[3 * i] = e.next_uid;
		if (n->jop == J_LEAF) {
			e.lab_uid[3 * i + 1] = e.lab_uid[3 * i + 2] = e.next_uid;
			rc = em_push(&e, C_RET_K, n->t == IOUR_ALLOW ? 1 : 0, 0, 0, 0);
			continue;
		}
		if (WX_OFF(n->wx) >= IOUR_CTX_OFF_PDU)
			payload = true;
		if (need[i] & 1)
			rc = em_push(&e, C_LD_ABS, WX_OFF(n->wx), 0, 0, 0);
		e.lab_uid[3 * i + 1] = e.next_uid;
		if (!rc && (need[i] & 3) && WX_KIND(n->wx) != WX_RAW)
			rc = em_xform(&e, n->wx, false);
		e.lab_uid[3 * i + 2] = e.next_uid;
		if (!rc)
			rc = em_push(&e, jop_code[n->jop], n->k, 1,
				     edge_label(c, index, n->wx, n->t),
				     edge_label(c, index, n->wx, n->f));
	}
	if (rc)
		goto out;
	if (e.n > max_insns) {
		rc = -IOUR_ERRNO__PROG_TOO_LARGE;
		goto out;
	}
	rc = em_fix_jumps(&e, max_insns);
	if (rc)
		goto out;
	/* without trampolines an instruction's uid is its position */
	if (e.ntramp) {
		rc = em_positions(&e, &pos);
		if (rc)
			goto out;
	}
	p = iour__malloc(sizeof(*p) + e.n * sizeof(struct iour_insn));
	if (!p) {
		rc = -ENOMEM;
		goto out;
	}
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->cnt = e.n;
	p->kind = IOUR_PROG_FILTER;
	if (count == 1 && is_leaf(c, root))
		p->kind = c->nodes[root].t == IOUR_ALLOW ? IOUR_PROG_ALWAYS_ALLOW :
							   IOUR_PROG_ALWAYS_DENY;
	p->pdu_size = payload ? iour__opcode_pdu_size(opcode) : 0;
	for (size_t i = 0; i < e.n; i++) {
		const struct sinsn *s = &e.v[i];
		struct iour_insn *o = &p->insns[i];

		o->code = s->code;
		o->k = s->k;
		o->jt = o->jf = 0;
		if (s->is_jmp == 1) {
			uint32_t t = e.lab_uid[s->jt], f = e.lab_uid[s->jf];

			o->jt = (uint8_t)((pos ? pos[t] : t) - i - 1);
			o->jf = (uint8_t)((pos ? pos[f] : f) - i - 1);
		} else if (s->is_jmp == 2) {
			uint32_t t = e.lab_uid[s->jt];

			o->k = (pos ? pos[t] : t) - (uint32_t)i - 1;
		}
	}
	*out = p;
	rc = 0;
out:
	iour__free(pos);
	iour__free(blk);
	iour__free(e.v);
	iour__free(e.lab_uid);
	if (!rc)
		c->ntramp = e.ntramp;
	return rc;
}
