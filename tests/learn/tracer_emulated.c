/* SPDX-License-Identifier: MIT */
/*
 * Emulated test of learn's trace parsing (tools/cli/learn/learn_parse.c;
 * doc/cli.md, "learn"): synthetic tracefs lines, as the "fields" option
 * prints them, fed through a pipe to tracer_drain(), and the opcode counts
 * it learned checked.  No kernel tracing is involved: the cases are the
 * reuse of ring addresses and pids that a real run hits only by chance
 * (tests/learn/run.sh tries the real one).  Run by `make check-learn`;
 * needs nothing of the machine.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "learn/learn.h"

#define NOP 0
#define READ 22
#define WRITE 23
#define RING_X "0xffff888104a0c000"
#define RING_Y "0xffff888104a0d000"

static int failed, passed;
static char lines[65536];
static size_t used;

/* One trace line of task COMM-PID. */
static void ev(const char *comm, unsigned pid, const char *fmt, ...)
{
	va_list ap;

	used += (size_t)snprintf(lines + used, sizeof(lines) - used,
				 "%16s-%-7u [001] ..... 100.000001: ", comm, pid);
	va_start(ap, fmt);
	used += (size_t)vsnprintf(lines + used, sizeof(lines) - used, fmt, ap);
	va_end(ap);
	used += (size_t)snprintf(lines + used, sizeof(lines) - used, "\n");
}

static void fork_ev(const char *pcomm, unsigned ppid, const char *ccomm, unsigned cpid)
{
	ev(pcomm, ppid,
	   "sched_process_fork: parent_comm=%s parent_pid=%u child_comm=%s child_pid=%u", pcomm,
	   ppid, ccomm, cpid);
}

static void exit_ev(const char *comm, unsigned pid)
{
	ev(comm, pid, "sched_process_exit: comm=%s pid=%u prio=120", comm, pid);
}

static void create_ev(const char *comm, unsigned pid, const char *ring, unsigned flags)
{
	ev(comm, pid, "io_uring_create: fd=3 ctx=%s sq_entries=8 cq_entries=16 flags=0x%x", ring,
	   flags);
}

/* The "fields" option prints a one-byte field as "(N)", or as "'C'(N)"
 * when N is a printable character (opcodes 32 to 126: SOCKET is '-'). */
static void submit_ev(const char *comm, unsigned pid, const char *ring, int op, int sqt, int n)
{
	char opv[16];

	if (isprint(op))
		snprintf(opv, sizeof(opv), "'%c'(%d)", op, op);
	else
		snprintf(opv, sizeof(opv), "(%d)", op);
	for (int i = 0; i < n; i++)
		ev(comm, pid,
		   "io_uring_submit_req: ctx=%s req=0xffff888100001000 user_data=0x0 opcode=%s "
		   "flags=0x0 (0) sq_thread=(%d) op_str=X",
		   ring, opv, sqt);
}

/* Parses the lines written so far with the command's process @root
 * followed, into @L; 0 or -1. */
static int parse(struct learned *L, unsigned root)
{
	struct tracer t;
	char buf[4096];
	size_t held = 0;
	int fd[2], rc = 0;

	memset(&t, 0, sizeof(t));
	memset(L, 0, sizeof(*L));
	t.l = L;
	if (pipe(fd) || tracer_follow(&t, root, "prog"))
		return -1;
	if (write(fd[1], lines, used) != (ssize_t)used)
		rc = -1;
	close(fd[1]);
	if (!rc && tracer_drain(&t, fd[0], buf, sizeof(buf), &held) < 0)
		rc = -1;
	close(fd[0]);
	free(t.task);
	free(t.rings.v);
	free(t.strange.v);
	used = 0;
	return rc;
}

static void expect(const char *name, const struct learned *L, int op, uint64_t want)
{
	if (L->op[op] == want) {
		passed++;
		printf("  ok   %s\n", name);
	} else {
		failed++;
		printf("  FAIL %s: opcode %d counted %llu times, expected %llu\n", name, op,
		       (unsigned long long)L->op[op], (unsigned long long)want);
	}
}

int main(void)
{
	static struct learned L;

	learn_keys = (struct learn_keys){
		.submit = " io_uring_submit_req: ",
		.ctx = "ctx=",
		.op = "opcode=",
		.flags = "flags=",
		.sqt = "sq_thread=",
		.rop = "opcode=",
		.ret = "ret=",
		.cctx = "ctx=",
		.cflags = "flags=",
		.ppid = "parent_pid=",
		.cpid = "child_pid=",
		.ccomm = "child_comm=",
		.epid = "pid=",
		.ptr_base = 0,
	};

	/* The followed program's SQPOLL ring is counted, the SQPOLL ring of
	 * a process not followed is not. */
	create_ev("prog", 100, RING_X, SQPOLL_FLAG);
	submit_ev("iou-sqp-100", 101, RING_X, READ, 1, 2);
	create_ev("other", 300, RING_Y, SQPOLL_FLAG);
	submit_ev("iou-sqp-300", 301, RING_Y, WRITE, 1, 3);
	if (parse(&L, 100))
		return 2;
	expect("emulated sqpoll of followed process counted", &L, READ, 2);
	expect("emulated sqpoll of unrelated process not counted", &L, WRITE, 0);

	/* Address reuse: the program frees its SQPOLL ring (no tracepoint
	 * says so) and an unrelated process's ring gets its address; the
	 * SQPOLL thread is named "io_uring-sq" (kernels before 5.12), so
	 * the address alone decides. */
	create_ev("prog", 100, RING_X, SQPOLL_FLAG);
	submit_ev("io_uring-sq", 101, RING_X, READ, 1, 1);
	exit_ev("io_uring-sq", 101);
	create_ev("other", 300, RING_X, SQPOLL_FLAG);
	submit_ev("io_uring-sq", 301, RING_X, WRITE, 1, 4);
	if (parse(&L, 100))
		return 2;
	expect("emulated address reuse by unrelated ring (old sqpoll name): own", &L, READ, 1);
	expect("emulated address reuse by unrelated ring (old sqpoll name): other", &L, WRITE, 0);

	/* The same with the thread's comm unknown ("<...>") and no /proc
	 * entry to ask (pid 4194303 is assumed not to run). */
	create_ev("prog", 100, RING_X, SQPOLL_FLAG);
	create_ev("other", 300, RING_X, SQPOLL_FLAG);
	submit_ev("<...>", 4194303, RING_X, WRITE, 1, 2);
	if (parse(&L, 100))
		return 2;
	expect("emulated address reuse by unrelated ring (comm unknown)", &L, WRITE, 0);

	/* Address and pid reuse: the program (pid 100) exits, an unrelated
	 * process gets pid 100 and an SQPOLL ring at the old address; its
	 * thread is "iou-sqp-100". */
	create_ev("prog", 100, RING_X, SQPOLL_FLAG);
	submit_ev("iou-sqp-100", 101, RING_X, READ, 1, 1);
	exit_ev("iou-sqp-100", 101);
	exit_ev("prog", 100);
	create_ev("other", 100, RING_X, SQPOLL_FLAG);
	submit_ev("iou-sqp-100", 102, RING_X, WRITE, 1, 5);
	submit_ev("other", 100, RING_X, NOP, 0, 1);
	if (parse(&L, 100))
		return 2;
	expect("emulated pid and address reuse after exit: own", &L, READ, 1);
	expect("emulated pid and address reuse after exit: other sqpoll", &L, WRITE, 0);
	expect("emulated pid and address reuse after exit: other task", &L, NOP, 0);

	/* Pid reuse of a followed child: 101 exits, an unrelated parent's
	 * child gets pid 101; then the program forks a new 102. */
	fork_ev("prog", 100, "prog", 101);
	create_ev("prog", 101, RING_X, 0);
	submit_ev("prog", 101, RING_X, READ, 0, 1);
	exit_ev("prog", 101);
	fork_ev("other", 300, "other", 101);
	create_ev("other", 101, RING_X, 0);
	submit_ev("other", 101, RING_X, WRITE, 0, 3);
	fork_ev("prog", 100, "prog", 102);
	submit_ev("prog", 102, RING_Y, NOP, 0, 2);
	if (parse(&L, 100))
		return 2;
	expect("emulated child pid reuse: own", &L, READ, 1);
	expect("emulated child pid reuse: unrelated", &L, WRITE, 0);
	expect("emulated child pid reuse: later child", &L, NOP, 2);

	/* Unrelated tasks: submissions, rings and forks of tasks never
	 * followed count for nothing; a followed ring created again after
	 * an unrelated one took its address counts again. */
	submit_ev("fio", 700, RING_Y, READ, 0, 7);
	fork_ev("fio", 700, "fio", 701);
	submit_ev("fio", 701, RING_Y, READ, 0, 7);
	create_ev("other", 300, RING_X, SQPOLL_FLAG);
	create_ev("prog", 100, RING_X, SQPOLL_FLAG);
	submit_ev("iou-sqp-100", 103, RING_X, WRITE, 1, 2);
	if (parse(&L, 100))
		return 2;
	expect("emulated unrelated tasks not counted", &L, READ, 0);
	expect("emulated ring recreated by followed task counted", &L, WRITE, 2);

	/* Every opcode a byte can hold, printable ones included. */
	for (int op = 0; op < NOPS; op++)
		submit_ev("prog", 100, RING_Y, op, 0, 1);
	if (parse(&L, 100))
		return 2;
	{
		int bad = 0;

		for (int op = 0; op < NOPS; op++)
			bad += L.op[op] != 1;
		if (!bad && !L.unreadable && L.nreq == NOPS) {
			passed++;
			printf("  ok   emulated every opcode 0..255 counted once (printable ones as "
			       "'C'(N))\n");
		} else {
			failed++;
			printf("  FAIL emulated every opcode 0..255: %d miscounted, %llu unreadable\n",
			       bad, (unsigned long long)L.unreadable);
		}
	}
	/* An opcode learn cannot read is counted as unreadable, not dropped. */
	ev("prog", 100,
	   "io_uring_submit_req: ctx=" RING_Y " req=0xffff888100001000 user_data=0x0 opcode=? "
	   "flags=0x0 (0) sq_thread=(0)");
	if (parse(&L, 100))
		return 2;
	if (L.unreadable == 1 && L.nreq == 0) {
		passed++;
		printf("  ok   emulated unreadable opcode counted as unreadable\n");
	} else {
		failed++;
		printf("  FAIL emulated unreadable opcode: %llu unreadable, %llu requests\n",
		       (unsigned long long)L.unreadable, (unsigned long long)L.nreq);
	}

	printf("tracer_emulated: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
