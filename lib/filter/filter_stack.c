/* SPDX-License-Identifier: MIT */
/*
 * Stacked programs: a deny-list too large for one program compiled as
 * several programs for the same opcode whose conjunction decides as the
 * whole rule list (doc/design.md, "Stacked filters";
 * iour__filter_compile_stack() in filter_internal.h).  Each part is
 * compiled by the driver, filter_compile.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "filter_ir.h"
#include "filter_map.h"
#include "radix.h"

/* ---- stacked programs (filter_internal.h, iour__filter_compile_stack()) --- */
/* One entry of the deny run: a whole rule, or a slice [a, b) of the set of
 * a one-comparison IN_SET rule. */
struct unit {
	uint32_t rule;   /* index in the opcode's rules */
	uint32_t sorted; /* 0: one comparison, ordered by (field, key); 1: kept in place */
	uint32_t field;
	uint32_t pad;
	uint64_t key;
	size_t a, b; /* set slice; a == b: the whole rule */
};

struct stacker {
	const struct iour_filter *f;
	const struct iour__opfilter *of;
	uint32_t opcode;
	struct iour__compile_cfg cfg;
	size_t p_end, s_begin; /* P = rules[0, p_end), S = rules[s_begin, nrules) */
	struct unit *units;
	size_t nunits;
	struct iour__rule *rules; /* scratch: P, a part of D, S */
	struct iour__cmp *cmps;   /* scratch: set slices */
	struct iour_filter *tf;   /* scratch: f with the opcode's rules replaced */
	struct iour__opfilter tof;
	/* tf's page of the opcode: f's, with the opcode's slot at tof */
	struct iour__opfilter *tpage[IOUR__OP_PAGE];
	struct iour_prog *head, **tail;
	uint32_t nprogs;
	uint32_t compiles; /* of parts (iour__stack_stats) */
	bool points4;      /* every deny unit is an IPv4 point: pack by loaded word */
	uint64_t *vals;    /* with points4: scratch for one part's values */
	bool precheck;     /* with points4: give each program a range pre-check */
	/* wsum[i]: weight of units[0, i) (stack_weights()); wsum31: of
	 * those whose compared constant has bit 31 set */
	uint64_t *wsum, *wsum31;
	/* fill per weight (stack_pack()): r[d][k], d 0 of the instruction
	 * limit, 1 of the converted one (stack_fill()); k 0 without, 1 with
	 * bit 31 */
	double r[2][2];
	bool known[2]; /* r[.][k] measured, not the first guess */
	double err;    /* how far the last fills were from a measured prediction */
};

/* A stacked program's longest chain of equality tests (filter_ir.h):
 * about 1 + 1/8 instructions per point instead of 1 + 1/3, so that more
 * entries fit in each program, at a few more instructions on the path. */
#define STACK_CHAIN 8

/* Compile P, units[a, b), S as one program. */
static int stack_compile(struct stacker *st, size_t a, size_t b, uint32_t max_insns,
			 struct iour_prog **out)
{
	const struct iour__opfilter *of = st->of;
	struct iour__compile_cfg cfg = st->cfg;
	size_t n = 0, nc = 0, i;
	struct iour__rule *prev = NULL;
	size_t prev_rule = SIZE_MAX, prev_b = 0;

	for (i = 0; i < st->p_end; i++)
		st->rules[n++] = of->rules[i];
	if (st->points4) {
		/* all IPv4 points: one IN_SET rule of the part's values, sorted
		 * and without duplicates as the builder keeps a set (filter.c) */
		size_t m = 0;

		for (i = a; i < b; i++) {
			const struct iour__cmp *c = &of->rules[st->units[i].rule].cmps[0];

			st->vals[m++] = c->op == IOUR_CMP_EQ ? c->value : c->set[st->units[i].a];
		}
		if (iour__fm_sort_u64(st->vals, m))
			return -ENOMEM;
		nc = 0;
		for (i = 0; i < m; i++)
			if (!nc || st->vals[nc - 1] != st->vals[i])
				st->vals[nc++] = st->vals[i];
		memset(&st->cmps[0], 0, sizeof(st->cmps[0]));
		st->cmps[0].field = IOUR_FIELD_CONNECT_ADDR4;
		st->cmps[0].op = IOUR_CMP_IN_SET;
		st->cmps[0].set = st->vals;
		st->cmps[0].set_len = nc;
		st->rules[n].verdict = IOUR_DENY;
		st->rules[n].ncmps = 1;
		st->rules[n].cmps = &st->cmps[0];
		n += b > a;
	}
	for (i = st->points4 ? b : a; i < b; i++) {
		const struct unit *u = &st->units[i];
		const struct iour__rule *r = &of->rules[u->rule];

		if (u->a == u->b) {
			st->rules[n++] = *r;
			prev = NULL;
			continue;
		}
		if (prev && prev_rule == u->rule && prev_b == u->a) {
			prev->cmps[0].set_len += u->b - u->a; /* adjacent slices join */
			prev_b = u->b;
			continue;
		}
		st->cmps[nc] = r->cmps[0];
		st->cmps[nc].set = r->cmps[0].set + u->a;
		st->cmps[nc].set_len = u->b - u->a;
		prev = &st->rules[n++];
		prev->verdict = IOUR_DENY;
		prev->ncmps = 1;
		prev->cmps = &st->cmps[nc++];
		prev_rule = u->rule;
		prev_b = u->b;
	}
	for (i = st->s_begin; i < of->nrules; i++)
		st->rules[n++] = of->rules[i];
	st->tof.nrules = (uint32_t)n;
	cfg.max_insns = max_insns;
	cfg.chain = STACK_CHAIN;
	if (st->points4 && st->precheck && b > a) {
		/* the units are sorted by loaded word: a range pre-check
		 * (filter_lower.c, range_precheck(), which checks this again) */
		cfg.range_d_lo = (uint32_t)st->p_end;
		cfg.range_d_hi = (uint32_t)(n - (of->nrules - st->s_begin));
		cfg.range_lo = (uint32_t)st->units[a].key;
		cfg.range_hi = (uint32_t)st->units[b - 1].key;
		cfg.range_mirror = st->nprogs & 1; /* every other program */
	}
	st->compiles++;
	return iour__filter_compile_cfg(st->tf, st->opcode, &cfg, NULL, out);
}

static void stack_append(struct stacker *st, struct iour_prog *p)
{
	*st->tail = p;
	st->tail = &p->next;
	st->nprogs++;
}

#define STACK_MEASURE (1U << 24)

/*
 * The kernel converts a classic program before it runs it: a jump with a
 * constant of bit 31 set needs one more instruction (the constant goes
 * through a register), a jump with two far targets one more (a JA), a
 * RET one more.  On 6.18, SO_ATTACH_FILTER (the tests' kernel oracle,
 * tests/common/kernel_oracle.c) refused stacked programs of 4,059
 * instructions whose converted size came to about 8,200 and took those of
 * about 8,100 (measured while packing 100,000 addresses, most constants
 * with bit 31 set).  A stacked program stays within STACK_CONVERTED_MAX
 * so that every program the compiler packs is one that engine accepts.
 */
#define STACK_CONVERTED_MAX 7900U

static uint32_t converted_size(const struct iour_prog *p)
{
	uint32_t n = 0;

	for (size_t i = 0; i < p->cnt; i++) {
		const struct iour_insn *in = &p->insns[i];
		uint32_t cls = in->code & 7;

		n++;
		if (cls == KBPF_RET)
			n++;
		else if (cls == KBPF_JMP && in->code != C_JA)
			n += ((in->k & 0x80000000U) != 0) + (in->jt && in->jf);
	}
	return n;
}

/* How full a program is, 1.0 at the limits; > 1: too large. */
static double stack_fill(const struct stacker *st, const struct iour_prog *p)
{
	double a = (double)p->cnt / st->cfg.max_insns;
	double b = (double)converted_size(p) / STACK_CONVERTED_MAX;

	return a > b ? a : b;
}

/* Compile units [a, b) without the size limit; *fill as stack_fill().  A
 * single unit is held to the kernel's limit alone, and compiled without
 * the range pre-check if that is what makes it too large. */
static int stack_try(struct stacker *st, size_t a, size_t b, struct iour_prog **out, double *fill)
{
	int rc = stack_compile(st, a, b, STACK_MEASURE, out);

	if (rc)
		return rc;
	*fill = stack_fill(st, *out);
	if (b - a == 1 && *fill > 1.0 && (*out)->cnt <= st->cfg.max_insns)
		*fill = 1.0;
	if (b - a == 1 && *fill > 1.0 && st->precheck) {
		iour_prog__free(*out);
		*out = NULL;
		st->precheck = false;
		rc = stack_compile(st, a, b, STACK_MEASURE, out);
		st->precheck = true;
		if (rc)
			return rc;
		*fill = (*out)->cnt <= st->cfg.max_insns ? 1.0 : 2.0;
	}
	return 0;
}

/* A part filled this far below the aim is grown once more. */
#define STACK_SLACK (1.0 / 64)

/* The predicted fill of units [a, b) (stack_pack()) in dimension d of
 * stack_fill(). */
static double stack_predict_d(const struct stacker *st, size_t a, size_t b, int d)
{
	uint64_t w = st->wsum[b] - st->wsum[a], w1 = st->wsum31[b] - st->wsum31[a];

	if (!w) /* a part's first unit starts a run of its own */
		return st->r[d][(st->units[a].key & 0x80000000U) != 0];
	return st->r[d][0] * (double)(w - w1) + st->r[d][1] * (double)w1;
}

static double stack_predict(const struct stacker *st, size_t a, size_t b)
{
	double x = stack_predict_d(st, a, b, 0), y = stack_predict_d(st, a, b, 1);

	return x > y ? x : y;
}

/* How full a part is aimed at: below 1 by a margin for the prediction's
 * error, as large as the last errors were. */
static double stack_aim(const struct stacker *st)
{
	double aim = 1.0 - 1.0 / 512 - 2 * st->err;

	return aim > 0.9 ? aim : 0.9;
}

/* The end of the part from `a` whose predicted fill comes to the aim: at
 * least a + 1, at most nunits. */
static size_t stack_end(const struct stacker *st, size_t a)
{
	size_t lo = a + 1, hi = st->nunits;
	double aim = stack_aim(st);

	while (lo < hi) { /* the first b whose prediction reaches the aim */
		size_t mid = lo + (hi - lo) / 2;

		if (stack_predict(st, a, mid) >= aim)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* Learn from the compiled part [a, b) of more than one unit: each
 * dimension's fill per weight of each kind of unit (of a mixed part, that
 * of bit-31 units once the other is known), and the error of the
 * prediction if it came from measured rates alone. */
static void stack_learn(struct stacker *st, size_t a, size_t b, const struct iour_prog *p)
{
	uint64_t w = st->wsum[b] - st->wsum[a], w1 = st->wsum31[b] - st->wsum31[a];
	double fill[2] = { (double)p->cnt / st->cfg.max_insns,
			   (double)converted_size(p) / STACK_CONVERTED_MAX };
	double pred = stack_predict(st, a, b), f = fill[0] > fill[1] ? fill[0] : fill[1];
	double e = f / pred - 1.0;

	/* how far off the predictions were, either way */
	if ((w1 == w || st->known[0]) && (!w1 || st->known[1]))
		st->err = 0.75 * st->err + 0.25 * (e < 0 ? -e : e);
	if (!w)
		return;
	for (int d = 0; d < 2; d++) {
		/* a measured rate is averaged with the last one: one odd part
		 * moves the next part's end by half as much */
		if (!w1 || w1 == w) {
			int k = w1 != 0;
			double r = fill[d] / (double)w;

			st->r[d][k] = st->known[k] ? (st->r[d][k] + r) / 2 : r;
		} else if (st->known[0] && 8 * w1 >= w) {
			double r1 = (fill[d] - st->r[d][0] * (double)(w - w1)) / (double)w1;

			st->r[d][1] = r1 > st->r[d][0] ? r1 : st->r[d][0];
		}
	}
	if (!w1)
		st->known[0] = true;
	else if (w1 == w || (st->known[0] && 8 * w1 >= w))
		st->known[1] = true;
}

/*
 * Pack units[0, nunits) into programs, in order, each as full as it
 * goes.  Every unit has a weight (stack_weights(): what it adds to the
 * compiler's interval map, in the order the compiler compares), and a
 * program's size grows about linearly with its part's weight; the fill
 * per weight measured on the parts compiled so far sets where the next
 * part ends, so each part is compiled about once.  One that comes out
 * too large is cut by its own measure and compiled again; one well
 * below the aim (the first, whose measure is a guess) is grown.
 */
static int stack_pack(struct stacker *st, double fill_per_weight)
{
	size_t a = 0;

	st->r[0][0] = st->r[0][1] = st->r[1][0] = st->r[1][1] = fill_per_weight;
	while (a < st->nunits) {
		struct iour_prog *best = NULL, *p = NULL;
		size_t best_b = a, b = stack_end(st, a);
		int tries = 0;

		for (;;) {
			double fill;
			size_t nb;
			int rc = stack_try(st, a, b, &p, &fill);

			if (rc) {
				iour_prog__free(best);
				return rc;
			}
			if (b - a > 1)
				stack_learn(st, a, b, p);
			if (fill <= 1.0) {
				iour_prog__free(best);
				best = p;
				best_b = b;
				if (b == st->nunits || fill >= stack_aim(st) - STACK_SLACK ||
				    ++tries > 3)
					break;
				nb = stack_end(st, a);
				if (nb <= b)
					break;
				b = nb;
				continue;
			}
			iour_prog__free(p);
			if (b - a == 1) {
				iour_prog__free(best);
				return -IOUR_ERRNO__PROG_TOO_LARGE; /* one unit is too large */
			}
			/* cut by this part's own measure, always shorter */
			nb = stack_end(st, a);
			if (nb >= b)
				nb = b - 1;
			if (best && nb <= best_b)
				break;
			b = nb;
		}
		if (st->nprogs >= IOUR__STACK_MAX) {
			iour_prog__free(best);
			return -E2BIG;
		}
		stack_append(st, best);
		a = best_b;
	}
	return 0;
}

/* The heaviest run of consecutive deny rules: [*lo, *hi); false if none. */
static bool deny_run(const struct iour__opfilter *of, size_t *lo, size_t *hi, size_t *weight)
{
	size_t best = 0, i = 0;

	while (i < of->nrules) {
		size_t j = i, w = 0;

		while (j < of->nrules && of->rules[j].verdict == IOUR_DENY) {
			const struct iour__rule *r = &of->rules[j];

			w += r->ncmps == 1 && r->cmps[0].op == IOUR_CMP_IN_SET ?
				     r->cmps[0].set_len :
				     1;
			j++;
		}
		if (j > i && w > best) {
			best = w;
			*lo = i;
			*hi = j;
		}
		i = j > i ? j : i + 1;
	}
	*weight = best;
	return best > 0;
}

/* The digit of a unit the radix sort's pass `d` orders by: 8 bits of the
 * key (d = 0..7, lowest first), then of the field (8, 9), then sorted
 * (10). */
static unsigned unit_digit(const void *e, unsigned d)
{
	const struct unit *u = e;

	if (d < 8)
		return (unsigned)(u->key >> (8 * d)) & 0xff;
	if (d < 10)
		return (u->field >> (8 * (d - 8))) & 0xff;
	return u->sorted;
}

/*
 * Order the units by (sorted, field, key), equal ones kept in the order
 * they were made, i.e. by (rule, slice): the radix sort of lib/filter/radix.h,
 * linear in the units where a comparison sort is not (n = 100,000
 * entries).  0 or -ENOMEM.
 */
static int sort_units(struct unit *v, size_t n)
{
	return iour__radix_sort(v, n, sizeof(*v), 11, unit_digit);
}

/*
 * What each unit adds to the interval map the compiler builds of a part
 * (filter_lower.c), in the order the units are compared: a unit whose
 * values touch or overlap the run before it on the same field adds
 * nothing, any other one run (a unit kept in place, or not an interval
 * of one field, counts one).  With points4 a run is one point: the
 * compiler compares the loaded word with byte-swapped constants, so
 * neighbouring addresses are no neighbours there.  wsum[i] is the weight
 * of units[0, i), wsum31[i] that of those whose key has bit 31 set: the
 * kernel converts a jump on such a constant to two instructions
 * (converted_size()), so those weigh more.
 */
static void stack_weights(struct stacker *st)
{
	const struct iour__opfilter *of = st->of;
	bool have = false;
	uint32_t field = 0;
	uint64_t hi = 0;

	st->wsum[0] = st->wsum31[0] = 0;
	for (size_t i = 0; i < st->nunits; i++) {
		const struct unit *u = &st->units[i];
		const struct iour__cmp *c = &of->rules[u->rule].cmps[0];
		uint64_t l = u->key, h = l;
		bool interval = !u->sorted;
		uint64_t w = 1;

		if (interval && !st->points4 && u->a == u->b) {
			if (c->op == IOUR_CMP_IN_RANGE)
				h = c->arg;
			else if (c->op == IOUR_CMP_IN_PREFIX &&
				 c->field == IOUR_FIELD_CONNECT_ADDR4 && c->arg < 32)
				h = l | ((1ULL << (32 - c->arg)) - 1);
			else if (c->op != IOUR_CMP_EQ)
				interval = false;
		}
		if (interval && have && u->field == field && (st->points4 ? l == hi : l <= hi + 1))
			w = 0;
		if (interval) {
			if (!have || u->field != field || w || h > hi)
				hi = h;
			field = u->field;
		}
		have = interval;
		st->wsum[i + 1] = st->wsum[i] + w;
		st->wsum31[i + 1] = st->wsum31[i] + (l & 0x80000000U ? w : 0);
	}
}

static int stack_units(struct stacker *st, size_t lo, size_t hi)
{
	const struct iour__opfilter *of = st->of;
	size_t n = 0;
	int rc;

	for (size_t i = lo; i < hi; i++) {
		const struct iour__rule *r = &of->rules[i];
		struct unit u = { .rule = (uint32_t)i, .sorted = 1 };

		if (r->ncmps == 1 && r->cmps[0].field != IOUR_FIELD_CONNECT_ADDR6) {
			u.sorted = 0;
			u.field = r->cmps[0].field;
			u.key = r->cmps[0].value;
		}
		if (r->ncmps == 1 && r->cmps[0].op == IOUR_CMP_IN_SET) {
			for (size_t k = 0; k < r->cmps[0].set_len; k++) {
				u.key = r->cmps[0].set[k];
				u.a = k;
				u.b = k + 1;
				st->units[n++] = u;
			}
			continue;
		}
		st->units[n++] = u;
	}
	st->nunits = n;
	/* all IPv4 points: sorted by the word the program loads, so that each
	 * program holds one range of it (filter_lower.c, range_precheck()) */
	st->points4 = n > 0;
	for (size_t i = lo; i < hi && st->points4; i++) {
		const struct iour__rule *r = &of->rules[i];

		st->points4 = r->ncmps == 1 && r->cmps[0].field == IOUR_FIELD_CONNECT_ADDR4 &&
			      (r->cmps[0].op == IOUR_CMP_IN_SET || r->cmps[0].op == IOUR_CMP_EQ);
	}
	if (st->points4 && !st->cfg.big_endian)
		for (size_t i = 0; i < n; i++)
			st->units[i].key = bswap32((uint32_t)st->units[i].key);
	rc = sort_units(st->units, n);
	if (rc)
		return rc;
	stack_weights(st);
	return 0;
}

/* The point values of the deny run [lo, hi) (one-comparison IN_SET and
 * EQ rules) into v, the field in the top bits so that values of
 * different fields never join; as numbers, or (words) as the word the
 * program loads for a network-order field (filter_map.c,
 * iour__fm_raw_of()).  64-bit fields (user_data, open flags) are left
 * out.  Returns how many. */
static size_t run_points(const struct iour__opfilter *of, size_t lo, size_t hi, bool words, bool be,
			 uint64_t *v)
{
	size_t n = 0;

	for (size_t i = lo; i < hi; i++) {
		const struct iour__cmp *c;
		struct layout L;
		bool raw;

		if (of->rules[i].ncmps != 1)
			continue;
		c = &of->rules[i].cmps[0];
		if (iour__field_valid_bits(c->field) > UINT32_MAX ||
		    (c->op != IOUR_CMP_EQ && c->op != IOUR_CMP_IN_SET))
			continue;
		iour__fm_field_layout(c->field, be, &L);
		raw = words && L.width == 32 && L.network;
		for (size_t k = 0; k < (c->op == IOUR_CMP_EQ ? 1 : c->set_len); k++) {
			uint64_t x = c->op == IOUR_CMP_EQ ? c->value : c->set[k];

			v[n++] = (uint64_t)c->field << 32 | (raw ? iour__fm_raw_of(&L, x, be) : x);
		}
	}
	return n;
}

/* Runs of consecutive values in v[0, n), which it sorts; SIZE_MAX:
 * -ENOMEM. */
static size_t count_runs(uint64_t *v, size_t n)
{
	size_t runs = 0;

	if (iour__fm_sort_u64(v, n))
		return SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		runs += !i || (v[i] != v[i - 1] && v[i] != v[i - 1] + 1);
	return runs;
}

/*
 * Can the deny run [lo, hi) not fit in one program?  True when its point
 * values (one-comparison IN_SET and EQ rules) fall into more than twice
 * max_insns runs of consecutive values on one field, counted both as
 * numbers and as the words the program loads (the compiler compares a
 * network-order field either way, filter_map.c, map_field32()), the
 * smaller of the two: each run needs a comparison of its own.  Spares
 * the compile of the whole rule list at 100,000 entries.  1: too large;
 * 0: maybe not; -ENOMEM.
 */
static int surely_too_large(const struct iour__opfilter *of, size_t lo, size_t hi, size_t weight,
			    uint32_t max, bool be)
{
	uint64_t *v;
	size_t runs = SIZE_MAX;

	if (weight <= 2 * (size_t)max)
		return 0;
	v = iour__malloc(weight * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (int words = 0; words < 2 && runs != 0; words++) {
		size_t r = count_runs(v, run_points(of, lo, hi, words, be, v));

		if (r == SIZE_MAX) {
			iour__free(v);
			return -ENOMEM;
		}
		runs = r < runs ? r : runs;
	}
	iour__free(v);
	return runs > 2 * (size_t)max;
}

/* Documented in filter_internal.h */
int iour__filter_compile_stack(const struct iour_filter *f, uint32_t opcode,
			       const struct iour__compile_cfg *cfg, struct iour__stack_stats *stats,
			       struct iour_prog **out, char *why, size_t whylen)
{
	struct iour__stack_stats local = { 0 };
	struct iour__stack_stats *ss = stats ? stats : &local;
	struct stacker st = { .f = f, .opcode = opcode, .cfg = *cfg, .precheck = true };
	struct iour_prog *one = NULL;
	char tmp[24];
	const char *name;
	size_t lo = 0, hi = 0, weight = 0;
	int rc;

	memset(ss, 0, sizeof(*ss));
	if (why && whylen)
		why[0] = '\0';
	rc = 0;
	st.of = opcode < IOUR__NOPCODES ? iour__filter_op(f, opcode) : NULL;
	if (st.of && !st.of->raw && deny_run(st.of, &lo, &hi, &weight))
		rc = surely_too_large(st.of, lo, hi, weight, cfg->max_insns, cfg->big_endian);
	if (rc < 0)
		return rc;
	if (rc) {
		rc = -IOUR_ERRNO__PROG_TOO_LARGE;
	} else {
		ss->compiles = 1;
		rc = iour__filter_compile_cfg(f, opcode, cfg, NULL, &one);
	}
	if (rc != -IOUR_ERRNO__PROG_TOO_LARGE) {
		if (!rc) {
			ss->progs = 1;
			ss->insns = one->cnt;
			*out = one;
		}
		return rc;
	}
	if (!st.of) /* not reached: an opcode without a filter is -ENOENT */
		return -ENOENT;
	name = iour__op_label(opcode, tmp, sizeof(tmp));
	if (st.of->raw) {
		if (why)
			snprintf(why, whylen,
				 "%s: a raw program of %zu instructions is above %u and cannot be "
				 "split",
				 name, st.of->raw_cnt, cfg->max_insns);
		return rc;
	}
	if (!deny_run(st.of, &lo, &hi, &weight)) {
		if (why)
			snprintf(why, whylen,
				 "%s: %u rules need more than %u instructions and none denies: "
				 "an allow-list cannot be split across stacked filters (every "
				 "stacked filter must allow, so each part would deny what the "
				 "others allow)",
				 name, st.of->nrules, cfg->max_insns);
		return rc;
	}
	st.p_end = lo;
	st.s_begin = hi;
	st.units = iour__malloc(weight * sizeof(*st.units));
	st.cmps = iour__malloc(weight * sizeof(*st.cmps));
	st.rules = iour__malloc((st.of->nrules + weight) * sizeof(*st.rules));
	st.tf = iour__malloc(sizeof(*st.tf));
	st.vals = iour__malloc(weight * sizeof(*st.vals));
	st.wsum = iour__malloc((weight + 1) * sizeof(*st.wsum));
	st.wsum31 = iour__malloc((weight + 1) * sizeof(*st.wsum31));
	if (!st.units || !st.cmps || !st.rules || !st.tf || !st.vals || !st.wsum || !st.wsum31) {
		rc = -ENOMEM;
		goto out;
	}
	*st.tf = *f;
	st.tof = *st.of;
	st.tof.rules = st.rules;
	memcpy(st.tpage, f->page[opcode / IOUR__OP_PAGE], sizeof(st.tpage));
	st.tpage[opcode % IOUR__OP_PAGE] = &st.tof;
	st.tf->page[opcode / IOUR__OP_PAGE] = st.tpage;
	st.tail = &st.head;
	rc = stack_units(&st, lo, hi);
	if (rc)
		goto out;
	/* In order, each program as full as it goes (one program again when
	 * the ordered entries fit).  The first measure is a guess: about one
	 * instruction per run in each of the plain and the mapped reading. */
	rc = stack_pack(&st, 2.0 / cfg->max_insns);
	if (rc == -IOUR_ERRNO__PROG_TOO_LARGE) {
		if (why)
			snprintf(why, whylen,
				 "%s: the rules around the deny entries (%zu before, %zu after) "
				 "need more than %u instructions with a single entry, so they "
				 "cannot be split",
				 name, st.p_end, (size_t)st.of->nrules - st.s_begin,
				 cfg->max_insns);
		goto out;
	}
	if (rc == -E2BIG) {
		rc = -IOUR_ERRNO__PROG_TOO_LARGE;
		if (why)
			snprintf(why, whylen,
				 "%s: the deny-list needs more than %u stacked filters", name,
				 IOUR__STACK_MAX);
		goto out;
	}
	if (rc)
		goto out;
	ss->split = st.nprogs > 1;
	ss->deny_units = (uint32_t)st.nunits;
	ss->progs = st.nprogs;
	ss->compiles += st.compiles;
	for (struct iour_prog *p = st.head; p; p = p->next)
		ss->insns += p->cnt;
	*out = st.head;
	st.head = NULL;
	rc = 0;
out:
	iour_prog__free(st.head);
	iour__free(st.units);
	iour__free(st.cmps);
	iour__free(st.rules);
	iour__free(st.tf);
	iour__free(st.vals);
	iour__free(st.wsum);
	iour__free(st.wsum31);
	return rc;
}
