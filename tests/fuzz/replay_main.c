/* SPDX-License-Identifier: MIT */
/*
 * replay_main.c - runs the fuzz harness over files without libFuzzer, so
 * `make test` replays the committed corpus with any compiler (plain and
 * under ASan+UBSan). Arguments: files; none = every file of FUZZ_CORPUS.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long len;

	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(data = malloc((size_t)len + 1)) || fread(data, 1, (size_t)len, f) != (size_t)len) {
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(data, (size_t)len);
	free(data);
	return 0;
}

static int replay_dir(const char *dir, size_t *count)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	char path[4096];

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (replay_file(path)) {
			closedir(d);
			printf("FAIL: fuzz_corpus_replay: cannot read %s\n", path);
			return -1;
		}
		(*count)++;
	}
	closedir(d);
	return 0;
}

int main(int argc, char **argv)
{
	size_t count = 0;

	for (int i = 1; i < argc; i++) {
		if (replay_file(argv[i])) {
			printf("FAIL: fuzz_corpus_replay: cannot read %s\n", argv[i]);
			return 1;
		}
		count++;
	}
	if (argc == 1 && replay_dir(FUZZ_CORPUS, &count))
		return 1;
	if (!count) {
		printf("FAIL: fuzz_corpus_replay: no inputs in %s\n", FUZZ_CORPUS);
		return 1;
	}
	printf("PASS: fuzz_corpus_replay: %zu inputs\n", count);
	return 0;
}
