/*
 * without-bpf ERRNO CMD ARGS... - runs CMD where the bpf system call fails
 * with ERRNO (ENOSYS: a kernel without BPF; EPERM: a policy forbidding it),
 * as a seccomp filter makes it. For tests of st-record's "no BPF" errors on
 * a machine that has BPF.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#error "without-bpf: add this architecture's AUDIT_ARCH_* value"
#endif

static int deny_bpf(unsigned int err)
{
	struct sock_filter filter[] = {
		/* another ABI's system call numbers mean other calls: leave them alone */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NATIVE_ARCH, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	unsigned int err;

	if (argc < 3 || (strcmp(argv[1], "ENOSYS") && strcmp(argv[1], "EPERM"))) {
		fprintf(stderr, "usage: without-bpf ENOSYS|EPERM CMD ARGS...\n");
		return 2;
	}
	err = strcmp(argv[1], "ENOSYS") ? EPERM : ENOSYS;
	if (deny_bpf(err)) {
		perror("without-bpf: seccomp");
		return 1;
	}
	execvp(argv[2], argv + 2);
	perror(argv[2]);
	return 127;
}
