/* SPDX-License-Identifier: MIT */
/*
 * A FUSE file whose pages never arrive: a tiny server on /dev/fuse that
 * answers INIT, LOOKUP, GETATTR, OPEN, FLUSH and RELEASE, and never
 * answers READ.  A process that maps the file and passes a pointer into
 * the mapping to a system call makes every reader of that memory through
 * /proc/PID/mem wait (the ring broker's stall, doc/security.md 3a).
 *
 * Needs root (mount) and the fuse file system; the mount lives in a mount
 * namespace of its own, which fuse_stall_start() gives the calling process
 * (and so everything it forks afterwards).
 */
#ifndef IOUR_TESTS_FUSE_STALL_H
#define IOUR_TESTS_FUSE_STALL_H

#include <stddef.h>
#include <sys/types.h>

struct fuse_stall {
	pid_t server;  /* the serving process */
	char dir[64];  /* the mount point */
	char file[96]; /* dir/file: 4 pages, never readable */
};

/* Mounts and serves.  0, or -1 with `why` saying what is missing (a skip
 * reason). */
int fuse_stall_start(struct fuse_stall *fs, char *why, size_t why_len);

/* Stops the server (every READ still waiting then fails) and unmounts. */
void fuse_stall_stop(struct fuse_stall *fs);

#endif
