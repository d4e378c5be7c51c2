/* SPDX-License-Identifier: MIT */
/*
 * ring.c - the BPF ring buffer, read in batches.
 *
 * libbpf's reader publishes the consumer position after every record; the
 * BPF side reads that position in every bpf_ringbuf_reserve(), so each
 * record would move a cache line between the reading CPU and the tracing
 * ones. This reader hands over every committed record, then publishes the
 * position once per drain. The map fd is polled edge-triggered: it wakes the
 * loop only when the BPF side forces a wakeup (the fill threshold), not each
 * time data is waiting, which the drain timer takes care of.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "record/record.h"

int rec_ring_open(struct rec_ring *ring, int map_fd, rec_event_fn fn, void *ctx)
{
	struct bpf_map_info info = { 0 };
	uint32_t len = sizeof(info);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	void *prod;

	memset(ring, 0, sizeof(*ring));
	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return -errno;
	ring->consumer_pos = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	if (ring->consumer_pos == MAP_FAILED) {
		ring->consumer_pos = NULL;
		return -errno;
	}
	/* the data pages are mapped twice in a row: a record never wraps */
	ring->map_size = page + 2 * (size_t)info.max_entries;
	prod = mmap(NULL, ring->map_size, PROT_READ, MAP_SHARED, map_fd, (off_t)page);
	if (prod == MAP_FAILED) {
		rec_ring_close(ring);
		return -errno;
	}
	ring->producer_pos = prod;
	ring->data = (char *)prod + page;
	ring->mask = info.max_entries - 1;
	ring->page = page;
	ring->fd = map_fd;
	ring->fn = fn;
	ring->ctx = ctx;
	return 0;
}

int rec_ring_drain(struct rec_ring *ring)
{
	uint64_t cons = *ring->consumer_pos;
	uint64_t prod = __atomic_load_n(ring->producer_pos, __ATOMIC_ACQUIRE);
	uint64_t now = rec_now_ns();
	int ret = 0;

	/* once per drain, not per record: the fill the BPF side saw before this drain */
	if (prod - cons > ring->fill_max)
		ring->fill_max = prod - cons;
	if (ring->last_drain_ns && now - ring->last_drain_ns > ring->gap_max_ns)
		ring->gap_max_ns = now - ring->last_drain_ns;
	ring->last_drain_ns = now;
	while (cons < prod && !ret) {
		const uint32_t *hdr = (const uint32_t *)(ring->data + (cons & ring->mask));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);

		if (len & BPF_RINGBUF_BUSY_BIT)
			break;	/* reserved, not yet submitted: the next drain takes it */
		cons += ((len & ~BPF_RINGBUF_DISCARD_BIT) + BPF_RINGBUF_HDR_SZ + 7) & ~7ull;
		if (!(len & BPF_RINGBUF_DISCARD_BIT))
			ret = ring->fn(ring->ctx, (char *)hdr + BPF_RINGBUF_HDR_SZ,
				       len & ~BPF_RINGBUF_DISCARD_BIT);
	}
	__atomic_store_n(ring->consumer_pos, cons, __ATOMIC_RELEASE);
	return ret;
}

void rec_ring_close(struct rec_ring *ring)
{
	if (ring->producer_pos)
		munmap((void *)ring->producer_pos, ring->map_size);
	if (ring->consumer_pos)
		munmap(ring->consumer_pos, ring->page);
	memset(ring, 0, sizeof(*ring));
}
