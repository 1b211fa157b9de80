/* SPDX-License-Identifier: MIT */
/*
 * What "require IOSQE_FIXED_FILE" does and does not seal, attacked on the
 * real kernel (doc/security.md, section 2).
 *
 * Ring A is "sealed" by the library: only READ, IOSQE_FIXED_FILE required,
 * no register opcode, its files registered before it was enabled.  Ring B
 * is restricted by the library too, to MSG_RING alone.  B sends a file it
 * registered itself into A's fixed-file table (IORING_MSG_SEND_FD), into
 * an empty slot and over an occupied one, and A then reads from it: the
 * set of files A can use is not sealed by A's restrictions.  With MSG_RING
 * denied on B, the same request is refused.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "iouring_restrict/iouring_restrict.h"
#include "ring_util.h"
#include "uring_avail.h"

#define MSG_SEND_FD 1U /* IORING_MSG_SEND_FD */
#define MSG_USER_DATA 0x5e5eULL

static int fixed_read(struct io_uring *ring, unsigned slot, char *c)
{
	struct io_uring_sqe *s = io_uring_get_sqe(ring);
	int res = 1, r;

	cr_assert_not_null(s);
	io_uring_prep_read(s, (int)slot, c, 1, 0);
	s->flags |= IOSQE_FIXED_FILE;
	r = ring_submit_wait(ring, s, &res);
	cr_assert_eq(r, 1, "fixed read of slot %u: %d", slot, r);
	return res;
}

/* B sends its fixed file `src` into slot `dst` of the ring `target_fd`. */
static int send_fd(struct io_uring *b, int target_fd, unsigned src, unsigned dst)
{
	struct io_uring_sqe *s = io_uring_get_sqe(b);
	int res = 1;

	cr_assert_not_null(s);
	memset(s, 0, sizeof(*s));
	s->opcode = IORING_OP_MSG_RING;
	s->fd = target_fd;
	s->addr = MSG_SEND_FD;
	s->addr3 = src;
	s->file_index = dst + 1; /* 1-based: 0 would mean "no slot" */
	s->off = MSG_USER_DATA;  /* user_data of the target's notice */
	cr_assert_eq(ring_submit_wait(b, s, &res), 1);
	return res;
}

/* A successful SEND_FD also posts a completion in the target ring: take
 * it (it must be the notice, not a request of the target's own). */
static void take_notice(struct io_uring *a)
{
	struct io_uring_cqe *cqe;

	cr_assert_eq(io_uring_wait_cqe(a, &cqe), 0);
	cr_assert_eq(cqe->user_data, MSG_USER_DATA);
	io_uring_cqe_seen(a, cqe);
}

struct rings {
	struct io_uring a, b;
	int allowed[2], secret[2];
};

/* A: READ only, FIXED_FILE required, no register opcode; slot 0 holds the
 * allowed pipe, slot 1 is empty.  B: its own file table holds the secret
 * pipe; `b_op` is its only allowed request opcode. */
static void setup(struct rings *r, uint32_t b_op)
{
	uint32_t read_op = IORING_OP_READ;
	struct iour_ruleset *sealed, *sender;
	int a_files[2], b_files[1];

	cr_assert_eq(pipe(r->allowed), 0);
	cr_assert_eq(pipe(r->secret), 0);
	cr_assert_eq(write(r->allowed[1], "aa", 2), 2);
	cr_assert_eq(write(r->secret[1], "SS", 2), 2);

	sealed = rs_make(&read_op, 1, IOSQE_FIXED_FILE, IOSQE_FIXED_FILE, NULL, 0);
	sender = rs_make(&b_op, 1, 0, 0, NULL, 0);

	cr_assert_eq(ring_init_disabled(&r->a, 0), 0);
	a_files[0] = r->allowed[0];
	a_files[1] = -1;
	cr_assert_eq(io_uring_register_files(&r->a, a_files, 2), 0);
	cr_assert_eq(iour_ring_apply(r->a.ring_fd, sealed, NULL), 0);

	cr_assert_eq(ring_init_disabled(&r->b, 0), 0);
	b_files[0] = r->secret[0];
	cr_assert_eq(io_uring_register_files(&r->b, b_files, 1), 0);
	cr_assert_eq(iour_ring_apply(r->b.ring_fd, sender, NULL), 0);
	iour_ruleset__free(sealed);
	iour_ruleset__free(sender);
}

static void teardown(struct rings *r)
{
	io_uring_queue_exit(&r->a);
	io_uring_queue_exit(&r->b);
	close(r->allowed[0]);
	close(r->allowed[1]);
	close(r->secret[0]);
	close(r->secret[1]);
}

Test(sealed_ring, msg_ring_from_another_restricted_ring_plants_a_file)
{
	UNIT_REQUIRE_URING();
	struct rings r;
	char c = 0;
	int res;

	if (iour_feature_level() < IOUR_LEVEL_RING)
		cr_skip_test("no ring restrictions");
	setup(&r, IORING_OP_MSG_RING);

	/* What the seal does hold: only fixed files, only READ, no
	 * registration, and the empty slot is empty. */
	cr_assert_eq(fixed_read(&r.a, 0, &c), 1);
	cr_assert_eq(c, 'a');
	{
		struct io_uring_sqe *s = io_uring_get_sqe(&r.a);

		io_uring_prep_read(s, r.secret[0], &c, 1, 0);
		cr_assert_eq(ring_submit_wait(&r.a, s, &res), 1);
		cr_assert_eq(res, -EACCES, "a plain descriptor must be refused: %d", res);
	}
	cr_assert_eq(io_uring_register_files_update(&r.a, 1, &r.secret[0], 1), -EACCES);
	res = fixed_read(&r.a, 1, &c);
	cr_assert(res == -EBADF || res == -ENXIO, "empty slot read: %d", res);

	/* The attack: B (itself restricted to MSG_RING) plants its file. */
	res = send_fd(&r.b, r.a.ring_fd, 0, 1);
	cr_assert_eq(res, 0, "MSG_RING SEND_FD into the sealed ring: %d", res);
	take_notice(&r.a);
	c = 0;
	cr_assert_eq(fixed_read(&r.a, 1, &c), 1);
	cr_assert_eq(c, 'S', "the sealed ring read the planted file");

	/* An occupied slot is replaced just the same. */
	res = send_fd(&r.b, r.a.ring_fd, 0, 0);
	cr_assert_eq(res, 0, "MSG_RING SEND_FD over slot 0: %d", res);
	take_notice(&r.a);
	c = 0;
	cr_assert_eq(fixed_read(&r.a, 0, &c), 1);
	cr_assert_eq(c, 'S', "slot 0 now reads the planted file");
	cr_log_info("a ring requiring IOSQE_FIXED_FILE read a file planted by MSG_RING from "
		    "another restricted ring: its fixed-file set is not sealed");
	teardown(&r);
}

/* The guidance: deny MSG_RING on the rings that can reach the sealed
 * ring's descriptor.  Then the same request is refused and A's table is
 * unchanged. */
Test(sealed_ring, msg_ring_denied_on_the_sender_keeps_the_table)
{
	UNIT_REQUIRE_URING();
	struct rings r;
	char c = 0;
	int res;

	if (iour_feature_level() < IOUR_LEVEL_RING)
		cr_skip_test("no ring restrictions");
	setup(&r, IORING_OP_NOP);
	res = send_fd(&r.b, r.a.ring_fd, 0, 1);
	cr_assert_eq(res, -EACCES, "MSG_RING on a ring that denies it: %d", res);
	res = fixed_read(&r.a, 1, &c);
	cr_assert(res == -EBADF || res == -ENXIO, "slot 1 stays empty: %d", res);
	cr_assert_eq(fixed_read(&r.a, 0, &c), 1);
	cr_assert_eq(c, 'a');
	teardown(&r);
}

/* ---- the planner's lint: the same warning in every plan's report */

/* The FIXED_FILES notes of a ring plan for `rs`: bit 0 for the table note,
 * bit 1 for the MSG_RING note. */
static int fixed_file_notes(const struct iour_ruleset *rs)
{
	struct iour_policy *p = NULL;
	struct iour_plan *pl = NULL;
	const struct iour_report *rep;
	int found = 0, n;

	cr_assert_eq(iour_policy__new(NULL, &p), 0);
	cr_assert_eq(iour_policy__set_ruleset(p, rs), 0);
	cr_assert_eq(iour_policy__set_attr(p, IOUR_POLICY_ATTR_TARGET, IOUR_POLICY_TARGET_RING), 0);
	cr_assert_eq(iour_policy__plan(p, NULL, &pl), 0);
	rep = iour_plan__report(pl);
	n = iour_report__decision_cnt(rep);
	for (int i = 0; i < n; i++) {
		struct iour_decision d = { .sz = sizeof(d) };

		cr_assert_eq(iour_report__decision(rep, (size_t)i, &d), 0);
		if (d.reason != IOUR_REASON_FIXED_FILES)
			continue;
		cr_assert_eq(d.kind, IOUR_DECISION_NOTE);
		if (d.opcode == IORING_OP_MSG_RING) {
			cr_assert(strstr(d.text, "MSG_RING is allowed"), "%s", d.text);
			found |= 2;
		} else {
			cr_assert(strstr(d.text, "does not seal the fixed-file table"), "%s",
				  d.text);
			found |= 1;
		}
	}
	iour_plan__free(pl);
	iour_policy__free(p);
	return found;
}

Test(sealed_ring, plan_reports_that_fixed_files_are_not_sealed)
{
	UNIT_REQUIRE_URING();
	uint32_t read_only[] = { IORING_OP_READ },
		 with_msg[] = { IORING_OP_READ, IORING_OP_MSG_RING };
	struct iour_ruleset *rs;

	if (iour_feature_level() < IOUR_LEVEL_RING)
		cr_skip_test("no ring restrictions");
	rs = rs_make(read_only, 1, IOSQE_FIXED_FILE, IOSQE_FIXED_FILE, NULL, 0);
	cr_assert_eq(fixed_file_notes(rs), 1);
	iour_ruleset__free(rs);
	rs = rs_make(with_msg, 2, 0, 0, NULL, 0);
	cr_assert_eq(fixed_file_notes(rs), 2);
	iour_ruleset__free(rs);
	rs = rs_make(with_msg, 2, IOSQE_FIXED_FILE, IOSQE_FIXED_FILE, NULL, 0);
	cr_assert_eq(fixed_file_notes(rs), 3);
	iour_ruleset__free(rs);
	rs = rs_make(read_only, 1, 0, 0, NULL, 0);
	cr_assert_eq(fixed_file_notes(rs), 0, "no note for a set that needs none");
	iour_ruleset__free(rs);
}
