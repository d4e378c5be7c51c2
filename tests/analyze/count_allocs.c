/*
 * count-allocs.so - preloaded into a program (LD_PRELOAD), counts its calls
 * to malloc, calloc, realloc, posix_memalign and aligned_alloc, and writes
 * the count to the file ST_COUNT_ALLOCS names when the program exits. For
 * t_alloc.sh: st-analyze allocates nothing per event, so its count grows
 * with the tables' doublings, not with the trace.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

/* glibc's own allocator under the names a program calls */
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static atomic_ulong calls;

static void counted(void)
{
	atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
}

void *malloc(size_t size)
{
	counted();
	return __libc_malloc(size);
}

void *calloc(size_t n, size_t size)
{
	counted();
	return __libc_calloc(n, size);
}

void *realloc(void *p, size_t size)
{
	counted();
	return __libc_realloc(p, size);
}

int posix_memalign(void **p, size_t align, size_t size)
{
	void *q;

	counted();
	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	if (!(q = __libc_memalign(align, size)))
		return ENOMEM;
	*p = q;
	return 0;
}

void *aligned_alloc(size_t align, size_t size)
{
	counted();
	return __libc_memalign(align, size);
}

__attribute__((destructor)) static void write_count(void)
{
	unsigned long n = atomic_load(&calls);
	const char *path = getenv("ST_COUNT_ALLOCS");
	FILE *f;

	if (path && (f = fopen(path, "w"))) {
		fprintf(f, "%lu\n", n);
		fclose(f);
	}
}
