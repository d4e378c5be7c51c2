/* SPDX-License-Identifier: MIT */
/*
 * corr_uring.c - io_uring: submissions, completions, io_uring_enter's reaps.
 * A part of the correlator (corr_internal.h).
 */
#include "analyze/lib/corr_internal.h"
#include "analyze/lib/names.h"

static uint8_t op_of_uring(uint32_t opcode)
{
	switch (opcode) {
	case 1: case 4: case 22:	/* IORING_OP_READV, READ_FIXED, READ */
		return AN_OP_READ;
	case 2: case 5: case 23:	/* IORING_OP_WRITEV, WRITE_FIXED, WRITE */
		return AN_OP_WRITE;
	case 3: case 8:			/* IORING_OP_FSYNC, SYNC_FILE_RANGE */
		return AN_OP_FSYNC;
	default:
		return AN_OP_OTHER;
	}
}

void corr_uring_submit(struct an_corr *c, const struct st_ev_uring *e)
{
	uint32_t old = an_idmap_get(&c->uring.by_req, e->p.req), i;
	struct an_io *io;

	if (old != AN_NONE) {
		IO(c, old)->flags |= AN_IO_INCOMPLETE | AN_IO_DONE;
		an_idmap_del(&c->uring.by_req, e->p.req);
		io_maybe_finish(c, old);
	}
	i = io_new(c, &e->h, AN_IO_URING);
	if (i == AN_NONE)
		return;
	io = IO(c, i);
	io->ts[AN_TS_SYS_ENTER] = e->h.ts;
	io->op = op_of_uring(e->p.opcode);
	io->fd = e->p.fd;
	if (c->names)
		io->file = an_names_fd_file(c->names, e->h.pid, e->p.fd);
	io->uring_req = e->p.req;
	io->cgroup = e->p.cgroup;
	put_map(c, &c->uring.by_req, e->p.req, i);
	put_map(c, &c->uring.by_tid, e->h.tid, i);
}

void corr_uring_complete(struct an_corr *c, const struct st_ev_uring *e)
{
	uint32_t i = an_idmap_get(&c->uring.by_req, e->p.req);
	struct an_io *io;

	if (i == AN_NONE) {
		c->st.orphan_exits++;
		return;
	}
	an_idmap_del(&c->uring.by_req, e->p.req);
	io = IO(c, i);
	io->ts[AN_TS_SYS_EXIT] = e->h.ts;
	io->ret = e->p.res;
	io->flags |= AN_IO_DONE;
	if (e->p.res < 0)
		io->flags |= AN_IO_ERROR;
	io->bytes = io->op == AN_OP_FSYNC ? io->blk_bytes : e->p.res > 0 ? (uint64_t)e->p.res : 0;
	/* a thread that reaps through io_uring_enter: held until its reap is seen */
	if (an_idmap_get(&c->uring.enter_tid, io->tid) != AN_NONE) {
		corr_reap_wait(c, i);
		return;
	}
	io_maybe_finish(c, i);
}

#define IORING_ENTER_GETEVENTS 1u

/*
 * An io_uring_enter entry or exit of a thread; the CQEs posted for the
 * requests it submitted are reaped by:
 * - the return of a call that only waited for completions (to_submit 0,
 *   GETEVENTS): it hands over every CQE posted by then;
 * - an entry, for the CQEs before the ring's CQ head as it begins: the
 *   application read them in user space, without a syscall the kernel could
 *   see, since its previous call (the entry bounds that read from above).
 *   The CQEs from head to tail are still unread. A file without the ring's
 *   head and tail (0 and 0) reaps them all at the entry.
 * The return of a call that submitted reaps nothing: the application looks
 * at the ring after it.
 */
void corr_uring_enter(struct an_corr *c, const struct st_event_header *h)
{
	uint32_t unread = 0;

	if (h->type == ST_EV_sys_enter_io_uring_enter) {
		const struct st_ev_sys_enter_io_uring_enter *e =
			(const struct st_ev_sys_enter_io_uring_enter *)h;

		put_map(c, &c->uring.enter_tid, h->tid,
			!e->p.count && (e->p.flags & IORING_ENTER_GETEVENTS));
		unread = e->p.cq_tail - e->p.cq_head;
	} else if (an_idmap_get(&c->uring.enter_tid, h->tid) == 1) {
		put_map(c, &c->uring.enter_tid, h->tid, 0);
	} else {
		return;
	}
	corr_reap_all_but(c, &c->uring.reap_by_tid, h->tid, h->ts, unread);
}
