/* SPDX-License-Identifier: MIT */
/* A FUSE file that never answers READ: tests/common/fuse_stall.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuse_stall.h"

#define FILE_NODE 2
#define FILE_SIZE (4 * 4096)

static void attr_of(uint64_t node, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = node;
	a->blksize = 4096;
	if (node == FILE_NODE) {
		a->mode = S_IFREG | 0644;
		a->nlink = 1;
		a->size = FILE_SIZE;
		a->blocks = FILE_SIZE / 512;
	} else {
		a->mode = S_IFDIR | 0755;
		a->nlink = 2;
	}
}

static void reply(int fd, uint64_t unique, int err, const void *body, size_t len)
{
	char out[sizeof(struct fuse_out_header) + 256];
	struct fuse_out_header *h = (struct fuse_out_header *)out;

	if (len > 256)
		len = 256;
	h->len = (uint32_t)(sizeof(*h) + (err ? 0 : len));
	h->error = -err;
	h->unique = unique;
	if (!err && len)
		memcpy(out + sizeof(*h), body, len);
	if (write(fd, out, h->len) < 0) {
		/* the request was interrupted meanwhile: nothing to do */
	}
}

/* The server: every request but READ is answered; READ never is. */
static void serve(int fd)
{
	static char buf[FUSE_MIN_READ_BUFFER + 65536];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		struct fuse_in_header *in = (struct fuse_in_header *)buf;
		const char *arg = buf + sizeof(*in);

		if (n < 0 && (errno == EINTR || errno == ENOENT || errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(*in))
			_exit(0); /* unmounted (ENODEV) */
		switch (in->opcode) {
		case FUSE_INIT: {
			const struct fuse_init_in *ii = (const void *)arg;
			struct fuse_init_out o;

			memset(&o, 0, sizeof(o));
			o.major = FUSE_KERNEL_VERSION;
			o.minor = 31; /* what every kernel since 5.10 knows */
			o.max_readahead = ii->max_readahead;
			o.max_background = 16;
			o.congestion_threshold = 12;
			o.max_write = 4096;
			o.time_gran = 1;
			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			struct fuse_entry_out o;

			if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "file")) {
				reply(fd, in->unique, ENOENT, NULL, 0);
				break;
			}
			memset(&o, 0, sizeof(o));
			o.nodeid = FILE_NODE;
			o.generation = 1;
			o.entry_valid = o.attr_valid = 3600;
			attr_of(FILE_NODE, &o.attr);
			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o;

			memset(&o, 0, sizeof(o));
			o.attr_valid = 3600;
			attr_of(in->nodeid, &o.attr);
			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN:
		case FUSE_OPENDIR: {
			struct fuse_open_out o;

			memset(&o, 0, sizeof(o));
			o.fh = 1;
			reply(fd, in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_FLUSH:
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
		case FUSE_ACCESS:
			reply(fd, in->unique, 0, NULL, 0);
			break;
		case FUSE_READ:   /* never: the point of this server */
		case FUSE_FORGET: /* no answer expected */
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;
		case FUSE_DESTROY:
			_exit(0);
		default:
			reply(fd, in->unique, ENOSYS, NULL, 0);
			break;
		}
	}
}

int fuse_stall_start(struct fuse_stall *fs, char *why, size_t why_len)
{
	char opts[128];
	struct stat st;
	int fd;

	memset(fs, 0, sizeof(*fs));
	fs->server = -1;
	if (geteuid() != 0) {
		snprintf(why, why_len, "not root (mounting a FUSE file system needs it)");
		return -1;
	}
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, why_len, "/dev/fuse cannot be opened (%s; no CONFIG_FUSE_FS?)",
			 strerror(errno));
		return -1;
	}
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		snprintf(why, why_len, "no mount namespace of its own (%s)", strerror(errno));
		close(fd);
		return -1;
	}
	snprintf(fs->dir, sizeof(fs->dir), "/tmp/iour-fuse.XXXXXX");
	if (!mkdtemp(fs->dir)) {
		snprintf(why, why_len, "mkdtemp: %s", strerror(errno));
		close(fd);
		return -1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
	if (mount("iour-fuse-stall", fs->dir, "fuse", MS_NOSUID | MS_NODEV, opts)) {
		snprintf(why, why_len, "mounting a FUSE file system failed (%s)", strerror(errno));
		rmdir(fs->dir);
		close(fd);
		return -1;
	}
	fflush(NULL);
	fs->server = fork();
	if (fs->server == 0) {
		/* a test that dies must not leave its stalls behind */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		serve(fd);
		_exit(0);
	}
	close(fd);
	snprintf(fs->file, sizeof(fs->file), "%s/file", fs->dir);
	if (fs->server < 0 || stat(fs->file, &st) || st.st_size != FILE_SIZE) {
		snprintf(why, why_len, "the FUSE server does not answer (%s)", strerror(errno));
		fuse_stall_stop(fs);
		return -1;
	}
	return 0;
}

void fuse_stall_stop(struct fuse_stall *fs)
{
	if (fs->server > 0) {
		kill(fs->server, SIGKILL);
		waitpid(fs->server, NULL, 0);
	}
	fs->server = -1;
	if (fs->dir[0]) {
		umount2(fs->dir, MNT_DETACH);
		rmdir(fs->dir);
		fs->dir[0] = '\0';
	}
}
