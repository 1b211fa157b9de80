/* SPDX-License-Identifier: MIT */
/*
 * Restriction sets exported by the library for Linux 6.1 (coupled gates,
 * 49 request and 26 register opcodes), registered on a real 6.1 kernel:
 * accepted, clamped where they name newer opcodes, and enforced with the
 * meaning the set gives them (an unrestricted side stays usable).
 */
#include "mini_ring.h"

#define OP_NOP 0
#define OP_READ 22
#define OP_WRITE 23
#define OP_READV_FIXED 60 /* 6.15: unknown to 6.1 */
#define REG_FILES 2
#define REG_CLONE_BUFFERS 30 /* 6.12: unknown to 6.1 */

static uint8_t entries[600 * sizeof(struct iour_restriction)];

/* Export rs for (kver); returns the entry count or -errno. */
static int export_for(const struct iour_ruleset *rs, uint32_t kver, struct iour_clamp_report *c)
{
	struct iour_export_opts o;
	size_t len = sizeof(entries);

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.kver = kver;
	if (c) {
		memset(c, 0, sizeof(*c));
		c->sz = sizeof(*c);
		o.clamp = c;
	}
	return iour_ruleset__export(rs, &o, entries, &len);
}

static int32_t run(struct mini_ring *r, uint8_t op, int fd)
{
	struct kio_sqe sqe;
	int32_t res = 1;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = op;
	sqe.fd = fd;
	if (op == OP_WRITE || op == OP_READ) {
		static char buf[8] = "abcdefgh";

		sqe.addr = (uintptr_t)buf;
		sqe.len = 8;
	}
	if (mini_ring_run(r, &sqe, &res) < 0)
		return -9999;
	return res;
}

/* SQE side {NOP, WRITE}, flags decided, register side unrestricted. */
static void check_sqe_allow_list(void)
{
	struct iour_clamp_report c;
	struct iour_ruleset *rs = NULL;
	struct mini_ring ring;
	int pipefd[2], n;

	CHECK_EQ("ruleset new", iour_ruleset__new(NULL, &rs), 0);
	if (!rs)
		return;
	iour_ruleset__allow_sqe_op(rs, OP_NOP);
	iour_ruleset__allow_sqe_op(rs, OP_WRITE);
	iour_ruleset__allow_sqe_op(rs, OP_READV_FIXED);
	iour_ruleset__set_sqe_flags(rs, 0, 0);

	/* the same set exported for 6.18 names opcodes 6.1 does not know */
	n = export_for(rs, IOUR_KVER(6, 18), NULL);
	CHECK("export for 6.18", n > 0);
	if (mini_ring_init(&ring, 4, KIO_SETUP_R_DISABLED) == 0) {
		CHECK_EQ("6.18 export rejected by 6.1 (unclamped)",
			 raw_register(ring.fd, KIO_REGISTER_RESTRICTIONS, entries, (uint32_t)n),
			 -EINVAL);
		mini_ring_exit(&ring);
	}

	n = export_for(rs, IOUR_KVER(guest_gen()->ver / 100, guest_gen()->ver % 100), &c);
	CHECK("export for 6.1", n > 0);
	CHECK_EQ("clamped request opcodes", c.n_sqe_ops, 1);
	CHECK_EQ("clamped READV_FIXED", (c.sqe_ops[0] >> OP_READV_FIXED) & 1, 1);
	if (pipe(pipefd) || mini_ring_init(&ring, 4, KIO_SETUP_R_DISABLED)) {
		CHECK("ring and pipe", 0);
		iour_ruleset__free(rs);
		return;
	}
	CHECK_EQ("export for this kernel's version registered",
		 raw_register(ring.fd, KIO_REGISTER_RESTRICTIONS, entries, (uint32_t)n), 0);
	CHECK_EQ("enable", raw_register(ring.fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	CHECK_EQ("allowed NOP", run(&ring, OP_NOP, -1), 0);
	CHECK_EQ("allowed WRITE", run(&ring, OP_WRITE, pipefd[1]), 8);
	CHECK_EQ("forbidden READ", run(&ring, OP_READ, pipefd[0]), -EACCES);
	/* the register side was left unrestricted by the set: still usable */
	{
		static uint8_t pbuf[sizeof(struct kio_probe) + 4 * sizeof(struct kio_probe_op)];

		CHECK_EQ("unrestricted register side: PROBE",
			 raw_register(ring.fd, KIO_REGISTER_PROBE, pbuf, 4), 0);
		CHECK_EQ("unrestricted register side: REGISTER_FILES",
			 raw_register(ring.fd, REG_FILES, &pipefd[0], 1), 0);
	}
	mini_ring_exit(&ring);
	close(pipefd[0]);
	close(pipefd[1]);
	iour_ruleset__free(rs);
}

/* Register side {PROBE, CLONE_BUFFERS}, SQE side unrestricted. */
static void check_register_allow_list(void)
{
	struct iour_clamp_report c;
	struct iour_ruleset *rs = NULL;
	struct mini_ring ring;
	int n;

	CHECK_EQ("ruleset new", iour_ruleset__new(NULL, &rs), 0);
	if (!rs)
		return;
	iour_ruleset__allow_register_op(rs, KIO_REGISTER_PROBE);
	iour_ruleset__allow_register_op(rs, REG_CLONE_BUFFERS);
	n = export_for(rs, IOUR_KVER(guest_gen()->ver / 100, guest_gen()->ver % 100), &c);
	CHECK("export for this kernel's version", n > 0);
	CHECK_EQ("clamped register opcodes (CLONE_BUFFERS where REGISTER_LAST is not above it)",
		 c.n_register_ops, guest_gen()->reg_last > REG_CLONE_BUFFERS ? 0 : 1);
	if (mini_ring_init(&ring, 4, KIO_SETUP_R_DISABLED) != 0) {
		CHECK("ring", 0);
		iour_ruleset__free(rs);
		return;
	}
	CHECK_EQ("export for this kernel's version registered",
		 raw_register(ring.fd, KIO_REGISTER_RESTRICTIONS, entries, (uint32_t)n), 0);
	CHECK_EQ("enable", raw_register(ring.fd, KIO_REGISTER_ENABLE_RINGS, NULL, 0), 0);
	CHECK_EQ("allowed PROBE", raw_register(ring.fd, KIO_REGISTER_PROBE, NULL, 0), -EINVAL);
	CHECK_EQ("forbidden REGISTER_FILES", raw_register(ring.fd, REG_FILES, NULL, 0), -EACCES);
	/* the SQE side was left unrestricted: every request and flag passes */
	CHECK_EQ("unrestricted SQE side: NOP", run(&ring, OP_NOP, -1), 0);
	CHECK_EQ("unrestricted SQE side: READ (fd -1 fails in prep)", run(&ring, OP_READ, -1),
		 -EBADF);
	mini_ring_exit(&ring);
	iour_ruleset__free(rs);
}

int main(void)
{
	if (guest_gen()->query || !guest_gen()->exact) {
		GUEST_SKIP("t_ruleset", "the 6.18 export is clamped only on a kernel before 6.18");
		return guest_summary();
	}
	check_sqe_allow_list();
	check_register_allow_list();
	return guest_summary();
}
