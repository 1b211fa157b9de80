/* SPDX-License-Identifier: MIT */
/*
 * The enforcement check's channel (verify.c, the calling side;
 * verify_serve.c, the serving side): its layout and the requests the check
 * knows.  Not installed.  See include/iouring_restrict/verify.h.
 */
#ifndef IOUR_LIB_VERIFY_CHANNEL_H
#define IOUR_LIB_VERIFY_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/internal.h"
#include "iouring_restrict/names.h"
#include "probe/probe_answers.h"
#include "iouring_restrict/verify.h"

#define MSG_DATA 0U /* IORING_MSG_DATA: a completion, no file */

/* The SQE flags the check can submit. */
#define SQE_FLAGS_OK                                                             \
	((uint32_t)(IOUR_SQE_FIXED_FILE | IOUR_SQE_IO_DRAIN | IOUR_SQE_IO_LINK | \
		    IOUR_SQE_IO_HARDLINK | IOUR_SQE_ASYNC))
#define FLAG_FIXED_FILE ((uint32_t)IOUR_SQE_FIXED_FILE)
#define COVERAGE_MAX_SZ 4096U
#define CHILD_RING_ENTRIES 8
#define DEFAULT_TIMEOUT_MS 30000U
#define MAX_STRIDE 4096U

#define VCHAN_MAGIC 0x46525649U /* "IVRF" */
#define VCHAN_VERSION 1U
#define VCHAN_DONE 0x454e4f44U /* "DONE" */
#define VCHAN_MAX_SIZE (8U << 20)

enum { PHASE_NONE, PHASE_STARTED, PHASE_RING, PHASE_RUN, PHASE_DONE };

/* Written by the caller, except the fields after `results_off`. */
struct vchan_hdr {
	uint32_t magic;
	uint32_t version;
	uint32_t size;
	uint32_t nr;
	uint32_t flags;
	int32_t ring_fd;
	uint32_t ring_flags;
	uint32_t reqs_off;
	uint32_t results_off;
	uint32_t phase;   /* PHASE_* the serving process reached */
	int32_t ring_err; /* -errno: the ring could not be created or used */
	int32_t exec_err; /* -errno of a failed execve in the child */
	uint32_t done;    /* VCHAN_DONE once every result is written */
	uint32_t pad;
};

struct vchan_req {
	uint32_t opcode;
	uint32_t expect;
	uint32_t sqe_flags;
	int32_t family;
	int32_t type;
	int32_t protocol;
	uint64_t open_flags;
	uint64_t open_mode;
	uint64_t open_resolve;
	uint32_t path_off; /* 0: no path */
	uint32_t path_len; /* without the NUL */
	uint32_t addr_off;
	uint32_t addrlen;
};

_Static_assert(sizeof(struct iour_verify_result) == 16, "result layout is fixed");
_Static_assert(sizeof(struct vchan_hdr) % 8 == 0, "channel header alignment");
_Static_assert(sizeof(struct vchan_req) % 8 == 0, "channel request alignment");

static inline size_t align8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

static inline void set_phase(struct vchan_hdr *h, uint32_t phase)
{
	__atomic_store_n(&h->phase, phase, __ATOMIC_RELEASE);
}

static inline bool opcode_supported(uint32_t op)
{
	switch (op) {
	case IOUR_OP_NOP:
	case IOUR_OP_READV:
	case IOUR_OP_WRITEV:
	case IOUR_OP_CONNECT:
	case IOUR_OP_OPENAT:
	case IOUR_OP_READ:
	case IOUR_OP_WRITE:
	case IOUR_OP_OPENAT2:
	case IOUR_OP_SOCKET:
	case IOUR_OP_MSG_RING:
		return true;
	default:
		return false;
	}
}

/* Run the check from the channel h of size bytes, write the results and
 * the "done" marker (verify_serve.c).  Allocates nothing and takes no lock:
 * it runs in a forked child of a possibly threaded caller. */
IOUR_INTERNAL int iour__verify_serve(struct vchan_hdr *h, size_t size);

#endif /* IOUR_LIB_VERIFY_CHANNEL_H */
