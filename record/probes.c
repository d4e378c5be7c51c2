/* SPDX-License-Identifier: MIT */
/*
 * probes.c - which probes to load, the filters they get, and their life cycle.
 *
 * Each BPF program is named after the event type it emits, so the selection
 * (a set of type ids) maps to programs by name. Programs not selected, or whose
 * tracepoint this kernel lacks, are never loaded.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/membarrier.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "record/record.h"
#include "sttrace.skel.h"

#define TRACEFS "/sys/kernel/tracing"

/* Syscalls of each preset (besides the tracepoints matched by prefix). */
static bool is_rw_syscall(const char *name)
{
	static const char *const rw[] = {
		"read", "write", "pread64", "pwrite64", "readv", "writev", "preadv", "pwritev",
		"preadv2", "pwritev2", "openat", "close", "dup2", "dup3", "io_uring_enter", "io_submit",
		"io_getevents",
	};
	const char *call = name + 4;	/* past "sys_" */

	call += rec_has_prefix(call, "enter_") ? 6 : 5;
	for (size_t i = 0; i < sizeof(rw) / sizeof(rw[0]); i++)
		if (!strcmp(call, rw[i]))
			return true;
	return false;
}

static bool is_sync_syscall(const char *name)
{
	return strstr(name, "_fsync") || strstr(name, "_fdatasync") ||
	       strstr(name, "_sync_file_range") || strstr(name, "_openat") || strstr(name, "_close") || strstr(name, "_dup2") ||
	       strstr(name, "_dup3");
}

/*
 * Block events of the `block` preset: two probe runs per unmerged request on
 * a request-based disk (issue, with the stage times the kernel stamped
 * before it, and completion); the others run only on splits, requeues and
 * the completions of bio-based devices. record/README.md has the table of
 * the block presets and what each loses.
 */
static bool in_block_preset(const char *name)
{
	static const char *const light[] = {
		"block_rq_issue_stamped", "block_rq_complete_compact", "block_split", "block_rq_requeue",
		"block_bio_complete", "block_rq_inode", "block_rq_cgroup",
	};

	for (size_t i = 0; i < sizeof(light) / sizeof(light[0]); i++)
		if (!strcmp(name, light[i]))
			return true;
	return false;
}

/*
 * The causes of an I/O's time (bpf/why.bpf.c): the `why` preset, and the
 * `sched` preset's context switches and wakeups, whose probes run at every
 * switch of the machine (scripts/bench/RESULTS.md): opt-in, for the culprits
 * of --why and the exact service chain; `why` takes the run-queue waits
 * from the kernel's accounting instead (the data calls' run_delay, svc_run_delay).
 */
static bool is_sched_event(uint16_t type)
{
	return st_event_kind(type) & ST_KIND_SCHED;
}

static bool is_why_event(uint16_t type)
{
	return st_event_kind(type) & ST_KIND_WHY;
}

/*
 * The data calls a thread is followed in by the `why` probes (bpf/why.bpf.c),
 * by their entry event and the architecture's syscall number: the kernel
 * side asks which syscall a thread is in, its numbers come from here.
 */
static const struct {
	uint16_t enter;
	long nr;
	uint8_t kind;	/* ST_CALL_* */
} traced_calls[] = {
	{ ST_EV_sys_enter_read, SYS_read, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_write, SYS_write, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_pread64, SYS_pread64, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_pwrite64, SYS_pwrite64, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_readv, SYS_readv, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_writev, SYS_writev, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_preadv, SYS_preadv, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_pwritev, SYS_pwritev, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_preadv2, SYS_preadv2, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_pwritev2, SYS_pwritev2, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_fsync, SYS_fsync, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_fdatasync, SYS_fdatasync, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_sync_file_range, SYS_sync_file_range, ST_CALL_ON_FD },
	{ ST_EV_sys_enter_io_submit, SYS_io_submit, ST_CALL_NO_FD },
	{ ST_EV_sys_enter_io_getevents, SYS_io_getevents, ST_CALL_NO_FD },
	{ ST_EV_sys_enter_io_uring_enter, SYS_io_uring_enter, ST_CALL_NO_FD },
};

static bool in_preset(const char *preset, uint16_t type, const char *name)
{
	bool sys = rec_has_prefix(name, "sys_");

	if (is_sched_event(type))
		return !strcmp(preset, "sched");
	if (is_why_event(type))
		return !strcmp(preset, "why") || !strcmp(preset, "all");

	if (!strcmp(preset, "block-all"))
		return rec_has_prefix(name, "block_") && strcmp(name, "block_rq_issue_stamped") &&
		       strcmp(name, "block_rq_complete_compact");
	if (!strcmp(preset, "block-queue") && !strcmp(name, "block_bio_queue"))
		return true;
	if (rec_has_prefix(name, "block_"))
		return strcmp(preset, "uring") && in_block_preset(name);
	if (!strcmp(preset, "all"))
		return true;
	if (!strcmp(preset, "dio"))
		return (sys && is_rw_syscall(name)) || rec_has_prefix(name, "iomap_");
	if (!strcmp(preset, "fsync"))
		return (sys && is_sync_syscall(name)) || rec_has_prefix(name, "ext4_sync") ||
		       rec_has_prefix(name, "xfs_");
	if (!strcmp(preset, "uring"))
		return rec_has_prefix(name, "io_uring_");
	return false;
}

static bool is_preset(const char *s)
{
	return !strcmp(s, "block") || !strcmp(s, "block-queue") || !strcmp(s, "block-all") ||
	       !strcmp(s, "dio") || !strcmp(s, "fsync") || !strcmp(s, "uring") ||
	       !strcmp(s, "why") || !strcmp(s, "sched") || !strcmp(s, "all");
}

static int select_one(const char *item, struct rec_selection *sel, char *err, size_t cap)
{
	char **patterns;

	if (is_preset(item)) {
		for (size_t i = 0; i < REC_NEVENTS; i++)
			if (in_preset(item, rec_events[i].type, rec_events[i].name))
				sel->on[rec_events[i].type] = true;
		return 0;
	}
	for (size_t i = 0; i < REC_NEVENTS; i++)
		if (!strcmp(item, rec_events[i].name)) {
			sel->on[rec_events[i].type] = true;
			sel->required[rec_events[i].type] = true;
			return 0;
		}
	/* any other tracepoint, resolved once tracefs is known to be there */
	patterns = realloc(sel->patterns, (sel->npatterns + 1) * sizeof(*patterns));
	if (!patterns || !(patterns[sel->npatterns] = strdup(item))) {
		if (patterns)
			sel->patterns = patterns;
		snprintf(err, cap, "--events: %s", strerror(ENOMEM));
		return -1;
	}
	sel->patterns = patterns;
	sel->npatterns++;
	return 0;
}

int rec_events_select(const char *spec, struct rec_selection *sel, char *err, size_t cap)
{
	char *copy = strdup(spec), *save = NULL;
	int ret = 0;

	memset(sel, 0, sizeof(*sel));
	for (char *item = strtok_r(copy, ",", &save); item && !ret; item = strtok_r(NULL, ",", &save))
		ret = select_one(item, sel, err, cap);
	free(copy);
	if (ret)
		return ret;
	if (!memchr(sel->on, true, sizeof(sel->on)) && !sel->npatterns) {
		snprintf(err, cap, "--events: no event named in '%s'", spec);
		return -1;
	}
	/* The whole completion supersedes the compact one: one completion event per request. */
	if (sel->on[ST_EV_block_rq_complete])
		sel->on[ST_EV_block_rq_complete_compact] = false;
	/* The full issue event supersedes the stamped one: one issue event per request. */
	if (sel->on[ST_EV_block_rq_issue])
		sel->on[ST_EV_block_rq_issue_stamped] = false;
	/* block_rq_inode and block_rq_cgroup come from an issue probe: they bring one */
	else if (sel->on[ST_EV_block_rq_inode] || sel->on[ST_EV_block_rq_cgroup])
		sel->on[ST_EV_block_rq_issue_stamped] = true;
	/*
	 * block_bio_held follows a queue record: named, it brings the queue
	 * probe; in a preset it waits for one that has it (a task filter,
	 * block-queue), sparing `all` a probe run per bio (scripts/bench/RESULTS.md)
	 */
	if (sel->required[ST_EV_block_bio_held])
		sel->on[ST_EV_block_bio_queue] = true;
	/* svc_run_delay follows a completion record: named alone, it brings the compact one */
	if (sel->required[ST_EV_svc_run_delay] && !sel->on[ST_EV_block_rq_complete])
		sel->on[ST_EV_block_rq_complete_compact] = true;
	/* Process events give pid -> command names and drive -p's child tracking. */
	for (size_t i = 0; i < REC_NEVENTS; i++)
		if (rec_has_prefix(rec_events[i].name, "sched_process_"))
			sel->on[rec_events[i].type] = true;
	return 0;
}

/* ---- filters ---------------------------------------------------------- */

static uint32_t kernel_devt(unsigned maj, unsigned min)
{
	return maj << 20 | min;
}

static int read_line(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, (int)cap, f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/*
 * The last component of a sysfs symlink's target, after dropping `up` trailing
 * components: the device's own name (up = 0) or its parent's (up = 1).
 */
static int link_name(const char *path, int up, char *out, size_t cap)
{
	char link[512];
	ssize_t n = readlink(path, link, sizeof(link) - 1);
	char *slash;

	if (n <= 0)
		return -1;
	link[n] = 0;
	for (; up > 0; up--) {
		slash = strrchr(link, '/');
		if (!slash)
			return -1;
		*slash = 0;
	}
	slash = strrchr(link, '/');
	snprintf(out, cap, "%.255s", slash ? slash + 1 : link);
	return 0;
}

/* The block device's sysfs name ("sda1") from "/dev/sda1", "sda1" or "8:1". */
static int device_sysfs_name(const char *device, char *name, size_t cap)
{
	char path[512];
	unsigned maj, min;
	struct stat st;

	if (sscanf(device, "%u:%u", &maj, &min) == 2) {
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", maj, min);
	} else if (!strchr(device, '/')) {
		snprintf(path, sizeof(path), "/sys/class/block/%.255s", device);
	} else {
		if (stat(device, &st) || !S_ISBLK(st.st_mode))
			return -1;
		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major(st.st_rdev),
			 minor(st.st_rdev));
	}
	return link_name(path, 0, name, cap);
}

static int sysfs_devt(const char *name, uint32_t *devt)
{
	char path[512], line[64];
	unsigned maj, min;

	snprintf(path, sizeof(path), "/sys/class/block/%s/dev", name);
	if (read_line(path, line, sizeof(line)) || sscanf(line, "%u:%u", &maj, &min) != 2)
		return -1;
	*devt = kernel_devt(maj, min);
	return 0;
}

/* The disk a block device belongs to: itself, or a partition's parent. */
static int disk_of(const char *name, char *disk, size_t cap)
{
	char path[512];

	snprintf(path, sizeof(path), "/sys/class/block/%.255s/partition", name);
	if (access(path, F_OK)) {
		snprintf(disk, cap, "%.255s", name);
		return 0;
	}
	snprintf(path, sizeof(path), "/sys/class/block/%.255s", name);
	return link_name(path, 1, disk, cap);
}

int rec_filters_set_device(struct rec_filters *f, const char *device, char *err, size_t cap)
{
	char name[256], disk[256], path[512];
	struct dirent *de;
	DIR *d;

	if (device_sysfs_name(device, name, sizeof(name)) || disk_of(name, disk, sizeof(disk)) ||
	    sysfs_devt(disk, &f->devs[0])) {
		snprintf(err, cap, "%s: not a block device", device);
		return -1;
	}
	f->ndevs = 1;
	snprintf(path, sizeof(path), "/sys/class/block/%s", disk);
	d = opendir(path);
	while (d && (de = readdir(d)) && f->ndevs < ST_MAX_FILTER_DEVS)
		if (rec_has_prefix(de->d_name, disk) && !sysfs_devt(de->d_name, &f->devs[f->ndevs]))
			f->ndevs++;
	if (d)
		closedir(d);
	return 0;
}

int rec_filters_set_cgroup(struct rec_filters *f, const char *path, char *err, size_t cap)
{
	char full[4096], blkio[4200];
	struct statfs fs;
	struct stat st;

	snprintf(full, sizeof(full), "%s%s", path[0] == '/' ? "" : "/sys/fs/cgroup/", path);
	/* A cgroup's id is its directory's inode number, in v2 and in v1's blkio hierarchy. */
	if (stat(full, &st) || !S_ISDIR(st.st_mode) || statfs(full, &fs)) {
		snprintf(err, cap, "--cgroup: %s: not a cgroup v2 or v1 blkio directory", full);
		return -1;
	}
	if (fs.f_type == CGROUP2_SUPER_MAGIC) {
		f->cgroup_id = st.st_ino;
		return 0;
	}
	/* a v1 hierarchy with the blkio controller: its groups have blkio.* files */
	snprintf(blkio, sizeof(blkio), "%s/blkio.reset_stats", full);
	if (fs.f_type != CGROUP_SUPER_MAGIC || access(blkio, F_OK)) {
		snprintf(err, cap, "--cgroup: %s: not a cgroup v2 or v1 blkio directory", full);
		return -1;
	}
	f->blkcg_id = st.st_ino;
	return 0;
}

bool rec_filters_disk_traced(const struct rec_filters *f, dev_t output_dev)
{
	char dev[32], name[256], disk[256];
	uint32_t devt;

	if (major(output_dev) == 0)	/* tmpfs, overlay...: no block I/O of ours */
		return false;
	snprintf(dev, sizeof(dev), "%u:%u", major(output_dev), minor(output_dev));
	if (device_sysfs_name(dev, name, sizeof(name)) || disk_of(name, disk, sizeof(disk)) ||
	    sysfs_devt(disk, &devt))
		return true;	/* unknown: assume traced, marking is only a cost */
	return !f->ndevs || devt == f->devs[0];
}

/* ---- environment ------------------------------------------------------ */

static int env_error(char *err, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, cap, fmt, ap);
	va_end(ap);
	return -1;
}

/* Root can still be denied BPF (no bpf system call, or a seccomp, LSM or lockdown policy). */
static int check_bpf(char *err, size_t cap)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(int), sizeof(int), 1, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ENOSYS)
		return env_error(err, cap, "this kernel has no BPF (no bpf system call: it needs "
				 "CONFIG_BPF_SYSCALL=y)");
	return env_error(err, cap, "BPF is not available: the kernel refused a BPF map (%s; a "
			 "seccomp, LSM or lockdown policy may forbid BPF)", strerror(errno));
}

static int check_environment(char *err, size_t cap)
{
	if (geteuid() != 0)
		return env_error(err, cap, "must run as root (loading BPF programs needs "
				 "CAP_BPF and CAP_PERFMON)");
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return env_error(err, cap, "no kernel BTF at /sys/kernel/btf/vmlinux (the kernel "
				 "needs CONFIG_DEBUG_INFO_BTF=y)");
	if (check_bpf(err, cap))
		return -1;
	if (access(TRACEFS "/events", F_OK) &&
	    mount("nodev", TRACEFS, "tracefs", 0, NULL) && access(TRACEFS "/events", F_OK))
		return env_error(err, cap, "tracefs is not mounted and could not be mounted (%s); "
				 "run: mount -t tracefs nodev " TRACEFS, strerror(errno));
	return 0;
}

static bool tracepoint_exists(uint16_t type)
{
	char tp[128], path[256];

	if (!rec_event_tracepoint(type, tp, sizeof(tp)))
		return false;
	snprintf(path, sizeof(path), TRACEFS "/events/%s", tp);
	return access(path, F_OK) == 0;
}

/*
 * Events whose tracepoint changed its name or arguments between kernels:
 * a program per form (EVENT___FORM after the first), the one whose
 * tracepoint this kernel's BTF has with that many arguments (the first
 * pointing to that struct, where one is named) is loaded.
 */
static const struct {
	uint16_t type;
	const char *program;
	const char *tracepoint;
	int nargs;
	const char *first;	/* struct the first argument points to, NULL: any */
} forms[] = {
	{ ST_EV_balance_dirty_pages, "balance_dirty_pages", "balance_dirty_pages", 8, NULL },
	{ ST_EV_balance_dirty_pages, "balance_dirty_pages___thresh", "balance_dirty_pages", 12, NULL },
	{ ST_EV_io_uring_submit_req, "io_uring_submit_req", "io_uring_submit_req", 1, NULL },
	{ ST_EV_io_uring_submit_req, "io_uring_submit_req___sqe", "io_uring_submit_sqe", 2, NULL },
	{ ST_EV_io_uring_submit_req, "io_uring_submit_req___ctx", "io_uring_submit_sqe", 7, NULL },
	{ ST_EV_block_bio_queue, "block_bio_queue", "block_bio_queue", 1, NULL },
	{ ST_EV_block_bio_queue, "block_bio_queue___q", "block_bio_queue", 2, NULL },
	{ ST_EV_block_bio_backmerge, "block_bio_backmerge", "block_bio_backmerge", 1, NULL },
	{ ST_EV_block_bio_backmerge, "block_bio_backmerge___q", "block_bio_backmerge", 3, NULL },
	{ ST_EV_block_bio_frontmerge, "block_bio_frontmerge", "block_bio_frontmerge", 1, NULL },
	{ ST_EV_block_bio_frontmerge, "block_bio_frontmerge___q", "block_bio_frontmerge", 3, NULL },
	{ ST_EV_block_getrq, "block_getrq", "block_getrq", 1, NULL },
	{ ST_EV_block_getrq, "block_getrq___q", "block_getrq", 3, NULL },
	{ ST_EV_block_split, "block_split", "block_split", 2, NULL },
	{ ST_EV_block_split, "block_split___q", "block_split", 3, NULL },
	{ ST_EV_sched_switch, "sched_switch", "sched_switch", 4, NULL },
	{ ST_EV_sched_switch, "sched_switch___state", "sched_switch", 3, NULL },
	{ ST_EV_mm_filemap_add_to_page_cache, "mm_filemap_add_to_page_cache",
	  "mm_filemap_add_to_page_cache", 1, "folio" },
	{ ST_EV_mm_filemap_add_to_page_cache, "mm_filemap_add_to_page_cache___page",
	  "mm_filemap_add_to_page_cache", 1, "page" },
};

/* The event's program for this kernel, into sel->form; false when it has forms and none fits. */
static bool choose_form(const struct btf *btf, struct rec_selection *sel, uint16_t type)
{
	bool has_forms = false;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		if (forms[i].type != type)
			continue;
		has_forms = true;
		if (rec_kernel_tp_args(btf, forms[i].tracepoint) == forms[i].nargs &&
		    (!forms[i].first || rec_kernel_tp_arg_is(btf, forms[i].tracepoint, 0, forms[i].first))) {
			sel->form[type] = forms[i].program;
			return true;
		}
	}
	return !has_forms;
}

/* An event this kernel cannot give: dropped from the selection, its reason kept. */
static void set_missing(struct rec_selection *sel, uint16_t type, const char *why)
{
	fprintf(stderr, "%s: %s, skipped\n", REC_NAME, why);
	sel->on[type] = false;
	free(sel->missing[type]);
	sel->missing[type] = strdup(why);
}

/* Drop selected tracepoints this kernel lacks; fatal for ones named explicitly. */
static int check_tracepoints(struct rec_selection *sel, char *err, size_t cap)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char tp[128], why[192];

	for (size_t i = 0; i < REC_NEVENTS; i++) {
		uint16_t t = rec_events[i].type;

		/* every event's form, for the events added later too (rec_probes_resolve_stamps) */
		bool fits = choose_form(btf, sel, t);

		if (!sel->on[t] || (fits && (sel->form[t] || tracepoint_exists(t))))
			continue;
		rec_event_tracepoint(t, tp, sizeof(tp));
		if (tracepoint_exists(t))
			snprintf(why, sizeof(why), "tracepoint %s has arguments st-record does not know", tp);
		else
			snprintf(why, sizeof(why), "tracepoint %s not on this kernel", tp);
		if (sel->required[t]) {
			btf__free(btf);
			return env_error(err, cap, "tracepoint %s %s", tp, tracepoint_exists(t) ?
					 "has arguments st-record does not know" :
					 "does not exist on this kernel");
		}
		set_missing(sel, t, why);
	}
	btf__free(btf);
	return 0;
}

int rec_probes_check(struct rec_selection *sel, char *err, size_t cap)
{
	return check_environment(err, cap) || check_tracepoints(sel, err, cap) ? -1 : 0;
}

int rec_probes_check_generic(const struct rec_selection *sel, char *err, size_t cap)
{
	struct btf *btf;
	bool cookies;

	if (!sel->ntps)
		return 0;
	btf = btf__load_vmlinux_btf();
	cookies = rec_kernel_has_enumerator(btf, "BPF_FUNC_get_attach_cookie");
	btf__free(btf);
	/* the probe of -e SUBSYS:NAME finds each tracepoint's layout by its BPF cookie */
	if (!cookies)
		return env_error(err, cap, "tracepoints named as SUBSYS:NAME need BPF cookies "
				 "(bpf_get_attach_cookie, Linux 5.15), which this kernel lacks: "
				 "record them with a preset or a typed event");
	return 0;
}

void rec_probes_store_missing(const struct rec_selection *sel, struct st_writer *w)
{
	char key[96];

	for (size_t i = 0; i < REC_NEVENTS; i++)
		if (sel->missing[rec_events[i].type]) {
			snprintf(key, sizeof(key), "missing.%s", rec_events[i].name);
			st_writer_set_meta(w, key, sel->missing[rec_events[i].type]);
		}
}

/* ---- the kernel's stage stamps ----------------------------------------- */

static bool struct_has_member(const struct btf *btf, const char *type, const char *member)
{
	int id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, id) : NULL;
	const struct btf_member *m = t ? btf_members(t) : NULL;

	for (int i = 0; t && i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, m[i].name_off), member))
			return true;
	return false;
}

/* A disk without a request layer (zram, device mapper): its bios complete without requests. */
static bool disk_is_bio_based(uint32_t devt)
{
	char path[96];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", devt >> 20, devt & 0xfffff);
	if (stat(path, &st))
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/mq", devt >> 20, devt & 0xfffff);
	return stat(path, &st) != 0;
}

static void add_probe(struct rec_selection *sel, uint16_t type, const char *why)
{
	char tp[128];

	if (sel->on[type])
		return;
	sel->on[type] = true;
	rec_event_tracepoint(type, tp, sizeof(tp));
	fprintf(stderr, "%s: %s: recording %s too\n", REC_NAME, why, tp);
}

void rec_probes_resolve_stamps(struct rec_selection *sel, const struct rec_filters *f, bool no_stamps)
{
	struct btf *btf;
	bool rq_stamp, bio_stamp, bio_stamp_gated;

	if (!sel->on[ST_EV_block_rq_issue_stamped])
		return;
	btf = btf__load_vmlinux_btf();
	rq_stamp = btf && struct_has_member(btf, "request", "start_time_ns");
	bio_stamp_gated = btf && struct_has_member(btf, "bio", "issue_time_ns");
	bio_stamp = btf && (bio_stamp_gated || struct_has_member(btf, "bio", "bi_issue"));
	btf__free(btf);
	if (no_stamps) {
		add_probe(sel, ST_EV_block_getrq, "--no-stamps: G from its probe");
		add_probe(sel, ST_EV_block_bio_queue, "--no-stamps: Q from its probe");
		return;
	}
	if (!rq_stamp)
		add_probe(sel, ST_EV_block_getrq, "this kernel keeps no request allocation time "
			  "(struct request has no start_time_ns)");
	if (!bio_stamp)
		add_probe(sel, ST_EV_block_bio_queue, "this kernel keeps no bio queue time "
			  "(struct bio has neither issue_time_ns nor bi_issue)");
	else if (f->pid || f->comm || f->cgroup_id || f->blkcg_id)
		add_probe(sel, ST_EV_block_bio_queue, "-p, -c, --cgroup and -- CMD select bios "
			  "as their task queues them");
	else if (f->ndevs && disk_is_bio_based(f->devs[0]))
		add_probe(sel, ST_EV_block_bio_queue, "-d names a bio-based disk (no requests, "
			  "so no request stamps)");
	else if (bio_stamp_gated && !sel->on[ST_EV_block_bio_queue])
		fprintf(stderr, "%s: this kernel stamps bios with their queue time only for disks "
			"under blk-iolatency (bio->issue_time_ns, 6.18+): elsewhere Q is the "
			"request's allocation (G); -e block-queue records Q exactly\n", REC_NAME);
}

/* ---- loading ---------------------------------------------------------- */

static bool verbose_libbpf;
static char load_error[256];	/* the line of libbpf's messages that says why the load failed */

/*
 * From libbpf's warnings, the line that says why: in a verifier log the last
 * before its statistics ("processed N insns"), libbpf's own explanation of a
 * CO-RE relocation it could not resolve included, the program's name first;
 * else libbpf's first warning (a map it could not create, a kfunc not found).
 */
static void note_load_error(const char *msg)
{
	const char *end = strstr(msg, "\nprocessed "), *start, *prog = strstr(msg, "prog '");
	char name[64] = "";

	if (prog)
		sscanf(prog, "prog '%63[^']'", name);
	if (end) {
		for (start = end; start > msg && start[-1] != '\n'; start--)
			;
		snprintf(load_error, sizeof(load_error), "%s%s%.*s", name, name[0] ? ": " : "",
			 (int)(end - start), start);
	} else if (!load_error[0]) {
		snprintf(load_error, sizeof(load_error), "%.*s", (int)strcspn(msg, "\n"), msg);
	}
}

/* libbpf's own messages (the verifier log among them) only with -v: errors get one line of ours. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	va_list copy;

	if (level == LIBBPF_WARN) {
		va_copy(copy, ap);
		if (vasprintf(&msg, fmt, copy) >= 0)
			note_load_error(msg);
		free(msg);
		va_end(copy);
	}
	if (!verbose_libbpf || level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static void set_rodata(struct sttrace_bpf *skel, const struct rec_filters *f, uint64_t ringbuf_size)
{
	struct sttrace_bpf__rodata *ro = skel->rodata;

	ro->self_tgid = f->self_tgid;
	/* Wake the reader early only when a quarter of the buffer is waiting. */
	ro->wakeup_bytes = ringbuf_size / 4;
	ro->filter_pid = f->pid != 0;
	ro->filter_comm = f->comm != NULL;
	if (f->comm)
		strncpy((char *)ro->target_comm, f->comm, sizeof(ro->target_comm) - 1);
	ro->filter_cgroup = f->cgroup_id;
	ro->filter_blkcg = f->blkcg_id;
	ro->filter_ndevs = f->ndevs;
	memcpy((void *)ro->filter_devs, f->devs, sizeof(f->devs));
	ro->mark_self_bios = f->mark_self_bios;
	ro->self_ino = f->self_ino;
	ro->self_sdev = f->self_sdev;
}

static int select_programs(struct sttrace_bpf *skel, const struct rec_selection *sel)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, skel->obj) {
		const char *name = bpf_program__name(prog);
		/* a program of another form of its event's tracepoint: EVENT___FORM (forms[]) */
		const char *form = strstr(name, "___");
		size_t len = form ? (size_t)(form - name) : strlen(name);
		bool on = prog == skel->progs.flush_stage ||
			  (prog == skel->progs.generic_tracepoint && sel->ntps) ||
			  (prog == skel->progs.softirq_raise && sel->on[ST_EV_svc_run_delay]);

		for (size_t i = 0; i < REC_NEVENTS; i++) {
			uint16_t t = rec_events[i].type;

			if (strlen(rec_events[i].name) == len && !strncmp(name, rec_events[i].name, len))
				on = sel->on[t] && (sel->form[t] ? !strcmp(sel->form[t], name) : !form);
		}
		if (bpf_program__set_autoload(prog, on))
			return -1;
	}
	return 0;
}

/* -p: the process and its descendants alive now; later ones are added at fork. */
/*
 * The regular files process pid has open for writing, into the map of files
 * whose writeback is the traced tasks': it may have dirtied their pages
 * before the recording (or through a shared mapping, with no call to see).
 */
static void track_written_files(int map_fd, pid_t pid)
{
	char dir[64], path[96], line[128];
	struct dirent *de;
	uint8_t one = 1;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", pid);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		struct st_file_key k = { 0 };
		unsigned long flags = 0;
		struct stat st;
		FILE *f;

		snprintf(path, sizeof(path), "%s/%.20s", dir, de->d_name);
		if (de->d_name[0] == '.' || stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%.20s", pid, de->d_name);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "flags: %lo", &flags) == 1)
				break;
		if (f)
			fclose(f);
		if ((flags & O_ACCMODE) == O_RDONLY)
			continue;
		k.ino = st.st_ino;
		k.sdev = major(st.st_dev) << 20 | minor(st.st_dev);
		bpf_map_update_elem(map_fd, &k, &one, BPF_ANY);
	}
	if (d)
		closedir(d);
}

static void track_descendants(int map_fd, int files_fd, pid_t root)
{
	pid_t pids[ST_MAX_TRACKED_TGIDS / 16];
	size_t n = 0, done = 0;
	uint8_t one = 1;

	pids[n++] = root;
	while (done < n) {
		char path[64], line[4096];
		pid_t parent = pids[done++];
		FILE *f;

		bpf_map_update_elem(map_fd, &parent, &one, BPF_ANY);
		track_written_files(files_fd, parent);
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", parent, parent);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f))
			for (char *s = strtok(line, " \n"); s && n < sizeof(pids) / sizeof(pids[0]);
			     s = strtok(NULL, " \n"))
				pids[n++] = atoi(s);
		fclose(f);
	}
}

static int attach_all(struct rec_probes *p, const struct rec_selection *sel, char *err, size_t cap)
{
	struct bpf_program *prog;

	p->links = calloc(REC_MAX_TYPE + sel->ntps, sizeof(*p->links));
	if (!p->links)
		return env_error(err, cap, "%s", strerror(ENOMEM));
	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_link *link;

		if (!bpf_program__autoload(prog) || prog == p->skel->progs.flush_stage ||
		    prog == p->skel->progs.generic_tracepoint)
			continue;
		link = bpf_program__attach(prog);
		if (!link)
			return env_error(err, cap, "cannot attach %s: %s", bpf_program__name(prog),
					 strerror(errno));
		p->links[p->nlinks++] = link;
		/* attaching takes milliseconds a probe: the first ones' events flow already */
		rec_ring_drain(&p->ring);
	}
	return rec_tracepoints_attach(p, sel, err, cap);
}

static int map_stage_ages(struct rec_probes *p)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *ages;

	p->ages_size = ((size_t)p->ncpus * sizeof(*p->ages) + page - 1) / page * page;
	ages = mmap(NULL, p->ages_size, PROT_READ, MAP_SHARED, bpf_map__fd(p->skel->maps.stage_ages), 0);
	if (ages == MAP_FAILED)
		return -errno;
	p->ages = ages;
	return 0;
}

int rec_probes_start(struct rec_probes *p, const struct rec_selection *sel, const struct rec_filters *f,
		 uint64_t ringbuf_size, rec_event_fn fn, void *ctx, char *err, size_t cap)
{
	struct btf *btf;
	int ret;

	memset(p, 0, sizeof(*p));
	libbpf_set_print(libbpf_print);
	p->ncpus = libbpf_num_possible_cpus();
	p->lost = calloc((size_t)(p->ncpus > 0 ? p->ncpus : 1), sizeof(*p->lost));
	p->skel = sttrace_bpf__open();
	if (!p->skel)
		return env_error(err, cap, "cannot open the BPF object: %s", strerror(errno));
	set_rodata(p->skel, f, ringbuf_size);
	btf = btf__load_vmlinux_btf();
	p->skel->rodata->rqf_flush_seq = rec_kernel_rqf_flush_seq(btf);
	p->skel->rodata->have_rdonly_cast = rec_kernel_has_func(btf, "bpf_rdonly_cast");
	btf__free(btf);
	p->skel->rodata->record_rq_inode = sel->on[ST_EV_block_rq_inode];
	p->skel->rodata->record_rq_cgroup = sel->on[ST_EV_block_rq_cgroup];
	p->skel->rodata->record_bio_held = sel->on[ST_EV_block_bio_held];
	p->skel->rodata->record_svc_run_delay = sel->on[ST_EV_svc_run_delay];
	for (size_t i = 0; i < REC_NEVENTS; i++)
		if (sel->on[rec_events[i].type] && is_why_event(rec_events[i].type))
			p->skel->rodata->follow_threads = true;
	p->skel->rodata->follow_service_threads = sel->on[ST_EV_sched_switch] || sel->on[ST_EV_sched_wakeup];
	for (size_t i = 0; i < sizeof(traced_calls) / sizeof(traced_calls[0]); i++)
		if (p->skel->rodata->follow_threads && sel->on[traced_calls[i].enter]) {
			if (traced_calls[i].nr >= ST_SYSCALL_NRS)
				return env_error(err, cap, "syscall %ld is past the BPF side's table",
						 traced_calls[i].nr);
			p->skel->rodata->traced_calls[traced_calls[i].nr] = traced_calls[i].kind;
		}
	if (bpf_map__set_max_entries(p->skel->maps.events, (uint32_t)ringbuf_size) ||
	    bpf_map__set_max_entries(p->skel->maps.stage_ages, (uint32_t)p->ncpus) ||
	    select_programs(p->skel, sel))
		return env_error(err, cap, "cannot configure the BPF object: %s", strerror(errno));
	load_error[0] = 0;
	ret = sttrace_bpf__load(p->skel);
	if (ret)
		return env_error(err, cap, "cannot load the BPF programs: %s%s%s (st-record -v shows "
				 "libbpf's whole log)", strerror(-ret), load_error[0] ? ": " : "", load_error);
	if (f->pid)
		track_descendants(bpf_map__fd(p->skel->maps.tracked_tgids),
				  bpf_map__fd(p->skel->maps.dirtied_files), f->pid);
	p->flush_fd = bpf_program__fd(p->skel->progs.flush_stage);
	ret = map_stage_ages(p);
	if (ret)
		return env_error(err, cap, "cannot map the stage ages: %s", strerror(-ret));
	ret = rec_ring_open(&p->ring, bpf_map__fd(p->skel->maps.events), fn, ctx);
	if (ret)
		return env_error(err, cap, "cannot map the ring buffer: %s", strerror(-ret));
	return attach_all(p, sel, err, cap);
}

void rec_probes_set_verbose(bool on)
{
	verbose_libbpf = on;
}

/* Each selected program's runs and run time so far, in object order; 0 when stats are off. */
static void read_runs(struct rec_probes *p, struct rec_runs *runs)
{
	struct bpf_program *prog;
	size_t i = 0;

	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);

		if (i == REC_MAX_TYPE)
			break;
		runs[i].runs = runs[i].ns = 0;
		if (bpf_program__autoload(prog) &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len)) {
			runs[i].runs = info.run_cnt;
			runs[i].ns = info.run_time_ns;
		}
		i++;
	}
}

/*
 * Moves the window's edge: *before is each program's runs just before, *after
 * once every run under way at the switch has ended. The kernel counts a run
 * when it ends, and a run reads record_until in its middle, so a run counted
 * between the two may have seen either side; every other run saw one side.
 * The probes run in RCU read-side sections (bpf_trace_run); a global
 * membarrier waits for a grace period. -errno when it is refused (nohz_full).
 */
static int move_edge(struct rec_probes *p, uint64_t until_ns, struct rec_runs *before,
		     struct rec_runs *after)
{
	read_runs(p, before);
	__atomic_store_n(&p->skel->bss->record_until, until_ns, __ATOMIC_RELEASE);
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0))
		return -errno;
	read_runs(p, after);
	return 0;
}

/*
 * Opens the window, or closes it (until_ns 0). Runs are counted over the
 * window: the programs keep running until they are detached, but record
 * nothing after it closes. The runs counted while an edge moved are apart.
 */
void rec_probes_set_window(struct rec_probes *p, uint64_t until_ns)
{
	struct rec_runs before[REC_MAX_TYPE] = { 0 }, after[REC_MAX_TYPE] = { 0 };

	if (!p->skel)
		return;
	if (until_ns) {
		p->runs_known = !move_edge(p, until_ns, p->runs_opening, p->runs_opened);
		return;
	}
	p->runs_known = !move_edge(p, 0, before, after) && p->runs_known;
	for (size_t i = 0; i < REC_MAX_TYPE; i++) {
		p->runs_in_window[i].runs = before[i].runs - p->runs_opened[i].runs;
		p->runs_in_window[i].ns = before[i].ns - p->runs_opened[i].ns;
		p->runs_at_edges[i] = p->runs_opened[i].runs - p->runs_opening[i].runs +
				      after[i].runs - before[i].runs;
	}
}

void rec_probes_flush(struct rec_probes *p, uint64_t staged_before)
{
	for (int cpu = 0; p->ages && cpu < p->ncpus; cpu++) {
		LIBBPF_OPTS(bpf_test_run_opts, run, .cpu = (uint32_t)cpu, .flags = BPF_F_TEST_RUN_ON_CPU);
		uint64_t since = __atomic_load_n(&p->ages[cpu].since, __ATOMIC_RELAXED);

		/* fails for an offline CPU: its records wait until it is back */
		if (since && since < staged_before)
			bpf_prog_test_run_opts(p->flush_fd, &run);
	}
}

#define DETACH_THREADS	8	/* destroying links at the end (rec_probes_detach) */

/* Links to destroy, shared by the detaching threads. */
struct detach_work {
	struct bpf_link **links;
	size_t n;
	size_t next;		/* atomic: the next link to take */
	unsigned running;	/* atomic: threads not done yet */
};

static void destroy_links(struct detach_work *d)
{
	size_t i;

	while ((i = __atomic_fetch_add(&d->next, 1, __ATOMIC_RELAXED)) < d->n)
		bpf_link__destroy(d->links[i]);
}

static void *detach_thread(void *arg)
{
	struct detach_work *d = arg;

	destroy_links(d);
	__atomic_fetch_sub(&d->running, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Detaching a classic tracepoint waits for RCU grace periods, tens of ms
 * each; one after the other, -e all took 2.1 s to detach. Threads destroy
 * the links at once, so their waits overlap as far as the kernel lets them
 * (1.0 s). The probes still attached keep firing meanwhile, so this thread
 * drains the ring buffer until they are all gone, or a busy ring would
 * overflow.
 */
void rec_probes_detach(struct rec_probes *p)
{
	struct detach_work d = { .links = p->links, .n = p->nlinks };
	pthread_t threads[DETACH_THREADS];
	unsigned started = 0;

	if (!p->nlinks)
		return;
	for (; started < DETACH_THREADS && started < p->nlinks; started++) {
		__atomic_fetch_add(&d.running, 1, __ATOMIC_RELAXED);
		if (pthread_create(&threads[started], NULL, detach_thread, &d)) {
			__atomic_fetch_sub(&d.running, 1, __ATOMIC_RELAXED);
			break;
		}
	}
	if (!started)	/* no thread: all here, the ring drained after */
		destroy_links(&d);
	while (__atomic_load_n(&d.running, __ATOMIC_ACQUIRE) > 0) {
		rec_ring_drain(&p->ring);
		usleep(1000);
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	rec_ring_drain(&p->ring);
	p->nlinks = 0;
}

uint64_t rec_probes_read_lost(struct rec_probes *p)
{
	uint32_t zero = 0;
	uint64_t sum = 0;

	if (!p->skel || p->ncpus <= 0 ||
	    bpf_map_lookup_elem(bpf_map__fd(p->skel->maps.lost), &zero, p->lost))
		return 0;
	for (int i = 0; i < p->ncpus; i++)
		sum += p->lost[i];
	return sum;
}

void rec_probes_store_runs(struct rec_probes *p, struct st_writer *w)
{
	struct bpf_program *prog;
	size_t i = 0;

	if (!p->skel || !p->runs_known)
		return;
	bpf_object__for_each_program(prog, p->skel->obj) {
		const struct rec_runs *r;
		uint64_t edges;
		char key[96], val[96];

		if (i == REC_MAX_TYPE)
			break;
		edges = p->runs_at_edges[i];
		r = &p->runs_in_window[i++];
		if (!(r->runs || edges) || prog == p->skel->progs.flush_stage)
			continue;
		snprintf(key, sizeof(key), "probe.%s", bpf_program__name(prog));
		snprintf(val, sizeof(val), "runs=%llu;run_ns=%llu;edge_runs=%llu",
			 (unsigned long long)r->runs, (unsigned long long)r->ns,
			 (unsigned long long)edges);
		st_writer_set_meta(w, key, val);
	}
}

uint64_t rec_probes_read_skipped(struct rec_probes *p)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	if (!p->skel)
		return 0;
	bpf_object__for_each_program(prog, p->skel->obj) {
		struct bpf_prog_info info = { 0 };
		uint32_t len = sizeof(info);

		if (bpf_program__autoload(prog) &&
		    !bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}

void rec_probes_stop(struct rec_probes *p)
{
	rec_probes_detach(p);
	rec_ring_close(&p->ring);
	if (p->ages)
		munmap((void *)p->ages, p->ages_size);
	sttrace_bpf__destroy(p->skel);
	free(p->links);
	free(p->lost);
	memset(p, 0, sizeof(*p));
}
