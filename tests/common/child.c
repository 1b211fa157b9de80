/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"

int child_run(int (*fn)(void *arg, struct child_msg *m), void *arg, struct child_msg *out)
{
	struct child_msg *m;
	int st = 0, rc;
	pid_t pid;

	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	memset(m, 0, sizeof(*m));
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		munmap(m, sizeof(*m));
		return rc;
	}
	if (pid == 0)
		_exit(fn(arg, m));
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFSIGNALED(st))
		rc = 1000 + WTERMSIG(st);
	else
		rc = WEXITSTATUS(st);
	if (out)
		memcpy(out, m, sizeof(*out));
	munmap(m, sizeof(*m));
	return rc;
}

#if defined(__x86_64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define TEST_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

int fake_kernel_install(const struct fake_rule *rules, int n)
{
	struct sock_filter prog[256];
	struct sock_fprog fp;
	int len = 0, i;

#ifdef TEST_AUDIT_ARCH
	prog[len++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						   offsetof(struct seccomp_data, arch));
	prog[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, TEST_AUDIT_ARCH, 1, 0);
	prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
#endif
	for (i = 0; i < n; i++) {
		uint32_t action = rules[i].kill ? SECCOMP_RET_KILL_PROCESS
						: SECCOMP_RET_ERRNO | (uint32_t)(rules[i].errno_val & 0xffff);

		if (len + 6 > (int)(sizeof(prog) / sizeof(prog[0])))
			return -E2BIG;
		prog[len++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							   offsetof(struct seccomp_data, nr));
		if (rules[i].arg < 0) {
			prog[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								   (uint32_t)rules[i].nr, 0, 1);
		} else {
			prog[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								   (uint32_t)rules[i].nr, 0, 3);
			/* low word of the 64-bit argument (little-endian) */
			prog[len++] = (struct sock_filter)BPF_STMT(
				BPF_LD | BPF_W | BPF_ABS,
				offsetof(struct seccomp_data, args) + 8 * (uint32_t)rules[i].arg);
			prog[len++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								   rules[i].val, 0, 1);
		}
		prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
	}
	prog[len++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	fp.len = (unsigned short)len;
	fp.filter = prog;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp))
		return -errno;
	return 0;
}

int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1; /* the directory's own fd */
}

long status_value(const char *key)
{
	char line[256];
	size_t kl = strlen(key);
	long v = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

int fd_table_fill(struct fd_table_fill *s)
{
	struct rlimit low;
	int fd;

	s->first = s->last = -1;
	if (getrlimit(RLIMIT_NOFILE, &s->old))
		return -errno;
	low = s->old;
	low.rlim_cur = 64;
	if (setrlimit(RLIMIT_NOFILE, &low))
		return -errno;
	while ((fd = dup(0)) >= 0) {
		if (s->first < 0)
			s->first = fd;
		s->last = fd;
	}
	return errno == EMFILE ? 0 : -errno;
}

int fd_table_release(struct fd_table_fill *s)
{
	for (int fd = s->first; s->first >= 0 && fd <= s->last; fd++)
		close(fd);
	s->first = s->last = -1;
	return setrlimit(RLIMIT_NOFILE, &s->old) ? -errno : 0;
}

const char *test_tmpdir(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

int test_tmp_template(char *buf, size_t len, const char *prefix, const char *suffix)
{
	int n = snprintf(buf, len, "%s/%sXXXXXX%s", test_tmpdir(), prefix, suffix ? suffix : "");

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

const char *test_dir_exec_problem(const char *dir, int setuid)
{
	struct statvfs sv;

	if (statvfs(dir, &sv))
		return "its file system cannot be inspected (statvfs failed)";
	if (sv.f_flag & ST_RDONLY)
		return "it is on a read-only mount (set TMPDIR to a writable directory)";
	if (sv.f_flag & ST_NOEXEC)
		return "it is on a noexec mount (set TMPDIR to a directory that allows exec)";
	if (setuid && (sv.f_flag & ST_NOSUID))
		return "it is on a nosuid mount: set-user-ID bits are ignored there (set TMPDIR "
		       "to a directory on a mount without nosuid)";
	return NULL;
}
