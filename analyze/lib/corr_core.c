/* SPDX-License-Identifier: MIT */
/*
 * corr_core.c - the correlator's API (correlate.h): its state, each event
 * handed to the file of its family (corr_internal.h), stale entries swept,
 * the end of the input.
 */
#include <stdlib.h>

#include "analyze/lib/corr_internal.h"
#include "analyze/lib/names.h"

int an_corr_new(struct an_corr **cp, uint64_t stale_ns, an_emit_fn emit, void *ctx)
{
	struct an_corr *c = calloc(1, sizeof(*c));

	if (!c)
		return -1;
	an_pool_init(&c->ios, sizeof(struct an_io));
	an_pool_init(&c->bio.pool, sizeof(struct bio_ent));
	an_pool_init(&c->rq.pool, sizeof(struct rq_ent));
	an_pool_init(&c->aio.pool, sizeof(struct aio_ent));
	if (an_idmap_init(&c->bio.map, 1024) || an_idmap_init(&c->rq.map, 1024) ||
	    an_idmap_init(&c->sys.by_tid, 256) || an_idmap_init(&c->sys.by_sector, 256) ||
	    an_idmap_init(&c->uring.by_tid, 64) ||
	    an_idmap_init(&c->uring.by_req, 256) || an_idmap_init(&c->uring.enter_tid, 64) ||
	    an_idmap_init(&c->uring.reap_by_tid, 64) || an_idmap_init(&c->aio.by_tid, 64) ||
	    an_idmap_init(&c->aio.getevents_tid, 64) || an_idmap_init(&c->aio.reap_by_tid, 64) ||
	    an_idmap_init(&c->own.dev_by_tid, 256)) {
		an_corr_free(c);
		return -1;
	}
	c->stale_ns = stale_ns ? stale_ns : 60000000000ull;
	c->emit = emit;
	c->ctx = ctx;
	*cp = c;
	return 0;
}

void an_corr_set_names(struct an_corr *c, const struct an_names *names)
{
	c->names = names;
}

int an_corr_enable_causes(struct an_corr *c, unsigned measured)
{
	return c->cause ? 0 : an_cause_new(&c->cause, measured);
}

void an_corr_free(struct an_corr *c)
{
	if (!c)
		return;
	an_cause_free(c->cause);
	an_pool_free(&c->ios);
	an_pool_free(&c->bio.pool);
	an_pool_free(&c->rq.pool);
	an_pool_free(&c->aio.pool);
	an_idmap_free(&c->bio.map);
	an_idmap_free(&c->rq.map);
	an_idmap_free(&c->sys.by_tid);
	an_idmap_free(&c->sys.by_sector);
	an_idmap_free(&c->uring.by_tid);
	an_idmap_free(&c->uring.by_req);
	an_idmap_free(&c->uring.enter_tid);
	an_idmap_free(&c->uring.reap_by_tid);
	an_idmap_free(&c->aio.by_tid);
	an_idmap_free(&c->aio.getevents_tid);
	an_idmap_free(&c->aio.reap_by_tid);
	an_idmap_free(&c->own.dev_by_tid);
	free(c);
}

const struct an_corr_stats *an_corr_stats(struct an_corr *c)
{
	c->st.open_bios = c->bio.map.count;
	c->st.open_requests = c->rq.map.count;
	return &c->st;
}

int an_corr_failed(const struct an_corr *c)
{
	return c->failed || (c->cause && an_cause_failed(c->cause));
}

/* ---- causes ------------------------------------------------------------ */

/* The I/O of thread tid's open data syscall, NULL if none. */
static struct an_io *sys_io(struct an_corr *c, uint32_t tid)
{
	uint32_t i = an_idmap_get(&c->sys.by_tid, tid);

	return i == AN_NONE ? NULL : IO(c, i);
}

static void cause_event(struct an_corr *c, const struct st_event_header *h)
{
	uint32_t tid = h->tid;

	if (!c->cause)
		return;
	/* a kernel thread's sample, one per completion: no call's wait ends with it */
	if (h->type == ST_EV_svc_run_delay) {
		an_cause_event(c->cause, h, NULL);
		return;
	}
	if (h->type == ST_EV_sched_switch)
		tid = ((const struct st_ev_sched_switch *)h)->p.next_tid;
	an_cause_event(c->cause, h, sys_io(c, tid));
}

/* ---- stale entries and the end ----------------------------------------- */

static void sweep(struct an_corr *c, uint64_t older_than, int all)
{
	uint32_t k;

	for (k = 0; k < c->rq.pool.used; k++) {
		struct rq_ent *re = RQ(c, k);
		uint64_t t = re->insert_ts ? re->insert_ts : re->first_issue_ts;

		if (re->rq && (all || t < older_than))
			corr_rq_release(c, k, 0, 0);
	}
	for (k = 0; k < c->bio.pool.used; k++) {
		struct bio_ent *be = BIO(c, k);

		if (be->io != AN_NONE && be->rq == AN_NONE && (all || be->queue_ts < older_than))
			corr_bio_release(c, k, 0, 0);
	}
	for (k = 0; k < c->ios.used; k++) {
		struct an_io *io = IO(c, k);

		if ((io->flags & AN_IO_LIVE) && (all || io->start < older_than)) {
			/* a posted CQE whose reap is not in the trace is complete */
			if (!(io->flags & AN_IO_REAP_WAIT))
				io->flags |= AN_IO_INCOMPLETE;
			io_finish(c, k);
		}
	}
}

void an_corr_finish(struct an_corr *c)
{
	sweep(c, 0, 1);
}

/* ---- dispatch ---------------------------------------------------------- */

/* One event into the correlator: an_corr_events()' step, inline there alone. */
static inline __attribute__((always_inline)) void corr_event(struct an_corr *c,
							     const struct st_event_header *h)
{
	c->st.events++;
	c->cur_tid = h->tid;
	if (h->ts < c->last_ts) {
		c->st.out_of_order++;
	} else {
		c->last_ts = h->ts;
		if (h->ts >= c->next_sweep) {
			if (c->next_sweep && h->ts > c->stale_ns) {
				c->sweeping = 1;
				sweep(c, h->ts - c->stale_ns, 0);
				c->sweeping = 0;
			}
			c->next_sweep = h->ts + c->stale_ns / 2;
		}
	}
	switch (h->type) {
	case ST_EV_block_bio_queue:
		corr_bio_queue(c, (const struct st_ev_block_bio *)h);
		break;
	case ST_EV_block_bio_backmerge:
	case ST_EV_block_bio_frontmerge:
		bio_merge(c, ((const struct st_ev_block_bio *)h)->p.bio, h->ts);
		break;
	case ST_EV_block_bio_complete:
		corr_bio_complete(c, (const struct st_ev_block_bio *)h);
		break;
	case ST_EV_block_split:
		corr_bio_split(c, (const struct st_ev_block_split *)h);
		break;
	case ST_EV_block_getrq:
		bio_getrq(c, ((const struct st_ev_block_bio *)h)->p.bio, h->ts);
		break;
	case ST_EV_block_rq_insert:
		corr_rq_insert(c, (const struct st_ev_block_rq *)h);
		break;
	case ST_EV_block_rq_issue:
		corr_rq_issue(c, (const struct st_ev_block_rq_issue *)h);
		break;
	case ST_EV_block_rq_issue_stamped:
		corr_rq_issue_stamped(c, (const struct st_ev_block_rq_issue_stamped *)h);
		break;
	case ST_EV_block_rq_requeue:
		corr_rq_requeue(c, (const struct st_ev_block_rq *)h);
		break;
	case ST_EV_block_rq_merge:
		corr_rq_merge(c, (const struct st_ev_block_rq *)h);
		break;
	case ST_EV_block_rq_inode:
		corr_rq_inode(c, (const struct st_ev_block_rq_inode *)h);
		break;
	case ST_EV_block_rq_cgroup:
		corr_rq_cgroup(c, (const struct st_ev_block_rq_cgroup *)h);
		break;
	case ST_EV_block_rq_complete:
		corr_rq_complete(c, (const struct st_ev_block_rq_complete *)h);
		break;
	case ST_EV_iomap_dio_rw_begin:
	case ST_EV_ext4_sync_file_enter:
	case ST_EV_xfs_file_fsync:
		corr_fs_event(c, (const struct st_ev_fs_io *)h, 0);
		break;
	case ST_EV_iomap_dio_complete:
	case ST_EV_ext4_sync_file_exit:
		corr_fs_event(c, (const struct st_ev_fs_io *)h, 1);
		break;
	case ST_EV_io_uring_submit_req:
		corr_uring_submit(c, (const struct st_ev_uring *)h);
		break;
	case ST_EV_io_uring_complete:
		corr_uring_complete(c, (const struct st_ev_uring *)h);
		break;
	case ST_EV_sys_enter_io_uring_enter:
	case ST_EV_sys_exit_io_uring_enter:
		corr_uring_enter(c, h);
		break;
	case ST_EV_sys_enter_io_submit:
	case ST_EV_sys_exit_io_submit:
		corr_aio_submit(c, h, h->type == ST_EV_sys_exit_io_submit);
		break;
	case ST_EV_sys_enter_io_getevents:
	case ST_EV_sys_exit_io_getevents:
		corr_aio_getevents(c, h);
		break;
	case ST_EV_sched_switch:
	case ST_EV_sched_wakeup:
	case ST_EV_contention_begin:
	case ST_EV_contention_end:
	case ST_EV_balance_dirty_pages:
	case ST_EV_mm_vmscan_direct_reclaim_begin:
	case ST_EV_mm_vmscan_direct_reclaim_end:
	case ST_EV_mm_vmscan_memcg_reclaim_begin:
	case ST_EV_mm_vmscan_memcg_reclaim_end:
	case ST_EV_mm_filemap_add_to_page_cache:
	case ST_EV_svc_run_delay:
		cause_event(c, h);
		break;
	case ST_EV_block_bio_held:
		corr_bio_held(c, (const struct st_ev_block_bio_held *)h);
		break;
	default:
		switch (st_event_kind(h->type) & (ST_KIND_MASK | ST_KIND_DATA)) {
		case ST_KIND_SYS_ENTER | ST_KIND_DATA:
			corr_sys_enter(c, (const struct st_ev_sys_enter *)h);
			break;
		case ST_KIND_SYS_EXIT | ST_KIND_DATA:
			corr_sys_exit(c, (const struct st_ev_sys_exit *)h);
			break;
		}
		break;
	}
}

void an_corr_event(struct an_corr *c, const struct st_event_header *h)
{
	/* a block of 1 byte: the loop takes h, whatever its size, and no other */
	an_corr_events(c, h, 1, NULL);
}

void an_corr_events(struct an_corr *c, const void *buf, size_t len, struct an_names *names)
{
	const uint8_t *p = buf, *end = p + len;

	/* one frame for the block: the registers its handlers need are saved once, not per event */
	while (p < end) {
		const struct st_event_header *h = (const void *)p;

		if (names && an_names_wants(h->type))
			an_names_event(names, h);
		corr_event(c, h);
		p += st_record_span(h);
	}
}

int an_corr_begins_io(uint16_t type)
{
	/* The events io_new() is called for, once per event at most. */
	return type == ST_EV_block_bio_queue || type == ST_EV_block_rq_issue ||
	       type == ST_EV_io_uring_submit_req ||
	       (st_event_kind(type) & (ST_KIND_MASK | ST_KIND_DATA)) ==
	       (ST_KIND_SYS_ENTER | ST_KIND_DATA);
}

/* ---- names --------------------------------------------------------------- */

static const char *const op_names[AN_OP_COUNT] = {
	"read", "write", "flush", "discard", "fsync", "other", "span",
};

const char *an_op_name(enum an_op op)
{
	return op_names[op];
}
