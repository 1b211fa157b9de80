/* SPDX-License-Identifier: MIT */
/*
 * A plain main() for the fuzz targets: runs LLVMFuzzerTestOneInput() once on
 * each file named on the command line (directories are read one level deep,
 * in name order).  Built with gcc against the ordinary static library, it
 * replays the corpora without libFuzzer: `make fuzz-replay` (regressions) and
 * under valgrind memcheck in `make test-valgrind`.  IOUR_REPLAY_MAX=N reads
 * at most N files of each directory (the first N by name; libFuzzer names
 * its files by hash, so that is a random sample).
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static unsigned long n_inputs;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, len = 0, got;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap ? cap * 2 : 4096);

			if (!nb) {
				free(buf);
				fclose(f);
				return -1;
			}
			buf = nb;
			cap = cap ? cap * 2 : 4096;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	n_inputs++;
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int run_path(const char *path)
{
	const char *max_env = getenv("IOUR_REPLAY_MAX");
	long max = max_env ? strtol(max_env, NULL, 10) : -1;
	struct dirent **ents;
	struct stat st;
	int n, i, rc = 0;
	long done = 0;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	n = scandir(path, &ents, NULL, by_name);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		char sub[4096];

		if ((max < 0 || done < max) && ents[i]->d_name[0] != '.' &&
		    snprintf(sub, sizeof(sub), "%s/%s", path, ents[i]->d_name) < (int)sizeof(sub) &&
		    stat(sub, &st) == 0 && S_ISREG(st.st_mode)) {
			done++;
			if (run_file(sub) != 0)
				rc = -1;
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int main(int argc, char **argv)
{
	int i, rc = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
		if (run_path(argv[i]) != 0)
			rc = 1;
	fprintf(stderr, "replay: %s: %lu inputs\n", argv[0], n_inputs);
	return rc || n_inputs == 0;
}
