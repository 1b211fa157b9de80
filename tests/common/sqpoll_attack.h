/* SPDX-License-Identifier: MIT */
/*
 * The inherited-SQPOLL-ring attack (doc/security.md, "Rings that exist
 * already"): an owner creates a ring with IORING_SETUP_SQPOLL whose kernel
 * thread stays awake, leaks its fd (no close-on-exec) into a program it
 * executes, and that program maps the ring again and submits an FTRUNCATE
 * of the owner's file through shared memory alone, with no system call the
 * seccomp companion could deny.
 *
 * The attacking program is the test binary itself: when the environment
 * variable SQPOLL_ATTACK_ENV is set, a constructor runs the attack before
 * Criterion starts and exits with one of the SQPOLL_* codes below.
 */
#ifndef IOUR_TEST_SQPOLL_ATTACK_H
#define IOUR_TEST_SQPOLL_ATTACK_H

#include <stdbool.h>
#include <stddef.h>

#define SQPOLL_ATTACK_ENV "IOUR_TEST_SQPOLL_ATTACK"

/* Exit codes of the attacking program. */
#define SQPOLL_DONE 0    /* the FTRUNCATE completed (its result on stdout) */
#define SQPOLL_NO_RING 3 /* the inherited fd is no io_uring ring any more */
#define SQPOLL_NO_MAP 4  /* the ring could not be mapped */
#define SQPOLL_NO_CQE 5  /* submitted, but nothing completed in 3 s */
#define SQPOLL_BAD_ENV 6 /* the environment variable is malformed */

struct sqpoll_owner {
	int ring_fd;     /* the SQPOLL ring, close-on-exec cleared */
	int file_fd;     /* the owner's file (4096 bytes), close-on-exec cleared */
	char path[1024]; /* its name, removed already */
	char env[1024];  /* "IOUR_TEST_SQPOLL_ATTACK=..." for the attacker */
	char self[4096]; /* the test binary, to execute as the attacker */
};

/*
 * Creates the owner's side: the file, an SQPOLL ring whose thread stays
 * awake for 10 s (until sqpoll_owner_fini() closes the ring) (it has just completed a NOP), and the attacker's
 * environment.  0, or -errno (-EPERM etc. when SQPOLL is not allowed).
 */
int sqpoll_owner_init(struct sqpoll_owner *o);
/* The size of the owner's file now (4096 = untouched, 0 = truncated). */
long sqpoll_owner_file_size(const struct sqpoll_owner *o);
void sqpoll_owner_fini(struct sqpoll_owner *o);

#endif /* IOUR_TEST_SQPOLL_ATTACK_H */
