/* SPDX-License-Identifier: MIT */
/*
 * Guest checks (Linux 6.1): a ring restricted to READ with IOSQE_FIXED_FILE
 * required is not sealed, since MSG_RING (IORING_MSG_SEND_FD, Linux 6.0+)
 * on another restricted ring installs a file it then reads; denied MSG_RING
 * on the sender keeps the table (doc/security.md, section 3).  And
 * io_uring's own threads (SQPOLL, io-wq) are not counted as threads of the
 * process.
 */
#include <dirent.h>
#include <fcntl.h>

#include "guest.h"
#include "mini_ring.h"

#define OP_NOP 0
#define OP_READ 22
#define OP_MSG_RING 40
#define REG_FILES 2
#define SQE_FIXED_FILE 0x01
#define SQE_ASYNC 0x10
#define MSG_SEND_FD 1
#define NOTICE 0x5e5eULL

static struct iour_ruleset *only(uint32_t op, uint32_t flags)
{
	struct iour_ruleset *rs = NULL;

	if (iour_ruleset__new(NULL, &rs) || iour_ruleset__deny_all_sqe_ops(rs) ||
	    iour_ruleset__allow_sqe_op(rs, op) || iour_ruleset__set_sqe_flags(rs, flags, flags) ||
	    iour_ruleset__deny_all_register_ops(rs)) {
		iour_ruleset__free(rs);
		return NULL;
	}
	return rs;
}

/* A disabled ring with `files` registered, then restricted by `rs`. */
static int restricted(struct mini_ring *r, struct iour_ruleset *rs, int *files, uint32_t n)
{
	int rc = mini_ring_init(r, 4, KIO_SETUP_R_DISABLED);

	if (rc)
		return rc;
	rc = (int)raw_register(r->fd, REG_FILES, files, n);
	if (!rc)
		rc = iour_ring_apply(r->fd, rs, NULL);
	iour_ruleset__free(rs);
	return rc;
}

static int32_t fixed_read(struct mini_ring *r, int slot, char *c)
{
	struct kio_sqe sqe;
	int32_t res = MINI_RING_NO_CQE;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = OP_READ;
	sqe.flags = SQE_FIXED_FILE;
	sqe.fd = slot;
	sqe.addr = (uintptr_t)c;
	sqe.len = 1;
	if (mini_ring_run(r, &sqe, &res) != 1)
		return MINI_RING_NO_CQE;
	return res;
}

static int32_t send_fd(struct mini_ring *b, int target, uint32_t src, uint32_t dst)
{
	struct kio_sqe sqe;
	int32_t res = MINI_RING_NO_CQE;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = OP_MSG_RING;
	sqe.fd = target;
	sqe.addr = MSG_SEND_FD;
	sqe.addr3 = src;
	sqe.splice_fd_in = (int32_t)(dst + 1); /* file_index, 1-based */
	sqe.off = NOTICE;
	if (mini_ring_run(b, &sqe, &res) != 1)
		return MINI_RING_NO_CQE;
	return res;
}

/* Take the target's notice of a successful SEND_FD; 1 if it was there. */
static int take_notice(struct mini_ring *a)
{
	uint32_t head = *a->cq_head;

	if (head == __atomic_load_n(a->cq_tail, __ATOMIC_ACQUIRE) ||
	    a->cqes[head & *a->cq_mask].user_data != NOTICE)
		return 0;
	__atomic_store_n(a->cq_head, head + 1, __ATOMIC_RELEASE);
	return 1;
}

static void check_msg_ring_plants_a_file(void)
{
	int allowed[2], secret[2], a_files[2];
	struct mini_ring a, b, c;
	char ch = 0;
	int32_t res;

	if (pipe(allowed) || pipe(secret) || write(allowed[1], "aa", 2) != 2 ||
	    write(secret[1], "SS", 2) != 2) {
		CHECK("pipes", 0);
		return;
	}
	a_files[0] = allowed[0];
	a_files[1] = -1;
	CHECK_EQ("sealed ring: READ only, FIXED_FILE required",
		 restricted(&a, only(OP_READ, SQE_FIXED_FILE), a_files, 2), 0);
	CHECK_EQ("sender: MSG_RING only", restricted(&b, only(OP_MSG_RING, 0), &secret[0], 1), 0);
	CHECK_EQ("closed sender: NOP only", restricted(&c, only(OP_NOP, 0), &secret[0], 1), 0);
	res = fixed_read(&a, 0, &ch);
	CHECK_EQ("sealed ring reads slot 0", res, 1);
	CHECK_EQ("sealed ring: plain descriptor refused", mini_ring_op(&a, OP_READ, secret[0], 0),
		 -EACCES);
	CHECK_EQ("sealed ring: empty slot 1", fixed_read(&a, 1, &ch), -EBADF);
	CHECK_EQ("closed sender: MSG_RING denied", send_fd(&c, a.fd, 0, 1), -EACCES);
	CHECK_EQ("slot 1 still empty", fixed_read(&a, 1, &ch), -EBADF);
	CHECK_EQ("MSG_RING SEND_FD from the MSG_RING-only ring", send_fd(&b, a.fd, 0, 1), 0);
	CHECK_EQ("sealed ring got the notice", take_notice(&a), 1);
	ch = 0;
	res = fixed_read(&a, 1, &ch);
	CHECK_EQ("sealed ring reads the planted file", res, 1);
	CHECK_EQ("  ... and it is the secret pipe", ch, 'S');
	mini_ring_exit(&a);
	mini_ring_exit(&b);
	mini_ring_exit(&c);
}

static int raw_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void check_io_uring_threads(void)
{
	struct kio_params p;
	struct mini_ring w;
	struct kio_sqe sqe;
	int pfd[2], tasks = 0;
	long sq;
	char ch;

	CHECK_EQ("alone: 1 thread", iour_task_thread_count(), 1);
	memset(&p, 0, sizeof(p));
	p.flags = KIO_SETUP_SQPOLL;
	p.sq_thread_idle = 10000;
	sq = raw_setup(4, &p);
	CHECK("SQPOLL ring", sq >= 0);
	if (pipe(pfd) || mini_ring_init(&w, 4, 0)) {
		CHECK("worker ring", 0);
		return;
	}
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = OP_READ;
	sqe.flags = SQE_ASYNC; /* blocks in an io-wq worker */
	sqe.fd = pfd[0];
	sqe.addr = (uintptr_t)&ch;
	sqe.len = 1;
	w.sqes[0] = sqe;
	w.sq_array[0] = 0;
	__atomic_store_n(w.sq_tail, *w.sq_tail + 1, __ATOMIC_RELEASE);
	CHECK_EQ("blocking read submitted", raw_enter(w.fd, 1, 0, 0), 1);
	for (int i = 0; i < 2000 && tasks < 3; i++) {
		tasks = raw_tasks();
		if (tasks < 3)
			usleep(1000);
	}
	CHECK("SQPOLL thread and io-wq worker exist (>= 3 tasks)", tasks >= 3);
	CHECK_EQ("with them: still 1 thread", iour_task_thread_count(), 1);
	CHECK_EQ("wake the worker", write(pfd[1], "x", 1), 1);
	mini_ring_exit(&w);
	if (sq >= 0)
		close((int)sq);
}

int main(void)
{
	if (guest_gen()->op_last > 40)
		check_msg_ring_plants_a_file();
	else
		GUEST_SKIP("MSG_RING plants a file", "the kernel lacks MSG_RING (opcode 40, 5.18)");
	check_io_uring_threads();
	return guest_summary();
}
