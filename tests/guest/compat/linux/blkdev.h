/* SPDX-License-Identifier: MIT */
/*
 * Building a newer liburing's headers (tests/guest/liburing_coexist.c,
 * scripts/guest-payloads/50-liburing.sh) against Debian 12's kernel
 * headers (6.1), which lack this uapi header.  liburing needs one constant
 * from it: the block device's discard command for URING_CMD, _IO(0x12, 0)
 * (Linux 6.12).  Used only when the system has no <linux/blkdev.h>.
 */
#ifndef IOUR_GUEST_COMPAT_LINUX_BLKDEV_H
#define IOUR_GUEST_COMPAT_LINUX_BLKDEV_H
#include <linux/ioctl.h>
#ifndef BLOCK_URING_CMD_DISCARD
#define BLOCK_URING_CMD_DISCARD _IO(0x12, 0)
#endif
#endif
