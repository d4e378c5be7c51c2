/* SPDX-License-Identifier: MIT */
/*
 * sttrace.h - libsttrace, the only code that reads or writes .sttrace files.
 *
 * A .sttrace file is a file header, then a sequence of independent chunks
 * (metadata, schema, events, lost counts, index), then a footer and a fixed
 * trailer. spec/sttrace-format.md is the normative description of the bytes.
 *
 * Writing
 *   st_writer_open(&w, path, &opts)           create the file, write its header
 *   st_writer_add_type(w, &type)              declare the schema (before events)
 *   st_writer_set_meta(w, "kernel.release", v) metadata, any time (st_writer_meta_at reads it)
 *   st_writer_append(w, rec, rec->size)       one raw record, copied as is
 *   st_writer_flush(w)                        seal the open chunks now
 *   st_writer_set_lost(w, cpu, n)             kernel-side losses, any time
 *   st_writer_close(w)                        metadata, lost, index, trailer, fsync
 *
 * A writer fills an events chunk in memory; when the next record does not fit
 * it compresses the chunk (one zstd frame, checksummed) and hands the bytes to
 * its sink. The default sink pwrite()s to the file; a program with its own I/O
 * path (st-record and io_uring) passes a struct st_sink instead. Files grow by
 * whole chunks only, so a file cut at any byte still reads up to its last
 * complete chunk.
 *
 * Lanes: a writer may keep several events chunks open, one per lane, and puts
 * each record in lane rec->cpu % lanes. A recorder that receives per-CPU
 * batches (each CPU's records in time order, CPUs interleaved) then writes
 * every chunk in time order, which readers walk without sorting; one shared
 * chunk would hold the CPUs' records shuffled. A full lane is sealed alone, so
 * chunks of different lanes overlap in time; readers merge them (the cursor).
 * Memory: a buffer of chunk_size raw bytes (at least 64 KiB) for each lane
 * that received a record, so up to lanes x chunk_size.
 *
 * Reading
 *   st_reader_open(&r, path, 0)               header, footer (or a scan)
 *   st_reader_info(r)                         sizes, counts, time span, recovery
 *   st_meta_get(r, "kernel.release")          metadata
 *   st_type_by_id(r, id), st_field_find()     schema, generic field access
 *   st_cursor_open(r, from, to, 0, &c)        whole events in timestamp order
 *   st_cursor_open(r, from, to, ST_CURSOR_RAW, &c)   the stored records instead
 *   while ((ret = st_cursor_next(c, &ev)) > 0) ...
 *   st_chunk_decode(r, i, &buf)               one chunk, for parallel readers
 *
 * Errors: every call that can fail returns 0 (or a count) on success and a
 * negative ST_E* code on failure; st_writer_errmsg()/st_reader_errmsg() give a
 * one-line message naming what was wrong (and where, for bad files). The
 * library never prints, never exits and never aborts on bad input.
 *
 * Threads: a writer or reader is used by one thread at a time, except
 * st_chunk_decode(), which may run concurrently on one reader with one
 * st_chunk_buf per thread.
 */
#ifndef STTRACE_H
#define STTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sttrace_events.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The toolkit's release: every program's --version and the `tool` metadata. */
#define ST_VERSION "0.1.0"

/* The format version this library writes (spec/sttrace-format.md section 9). */
#define ST_FORMAT_MAJOR 1
#define ST_FORMAT_MINOR 8

/* Error codes (negative return values). */
enum st_error {
	ST_OK = 0,
	ST_EIO = -1,		/* the operating system failed a read/write; errno kept in message */
	ST_ENOMEM = -2,		/* allocation failed */
	ST_EINVAL = -3,		/* bad argument from the caller */
	ST_EFORMAT = -4,	/* not a .sttrace file, or a structure is malformed */
	ST_EVERSION = -5,	/* major version this library does not read */
	ST_ECHECKSUM = -6,	/* a chunk's checksum does not match */
	ST_ETRUNCATED = -7,	/* the file ends inside a structure */
	ST_ENOSPC = -8,		/* the output device is full */
	ST_ENOTFOUND = -9,	/* no such type, field, key or chunk */
	ST_ECOMPRESS = -10,	/* zstd failed to compress or decompress */
};

/* Static description of an error code. */
const char *st_strerror(int err);

/* ---- Schema ----------------------------------------------------------- */

struct st_field {
	const char *name;
	uint16_t offset;	/* from the start of the record (header included) */
	uint16_t size;		/* total bytes; an array when size > elem_size */
	uint8_t elem_size;	/* 1, 2, 4 or 8 */
	uint8_t type;		/* enum st_field_type */
	const char *doc;	/* one line: meaning and unit */
};

struct st_type {
	uint16_t id;		/* st_event_header.type */
	uint16_t size;		/* record size in bytes, header included */
	const char *name;	/* kernel tracepoint name, e.g. "block_rq_issue" */
	uint16_t nfields;	/* header fields come first: type size cpu ts pid tid */
	const struct st_field *fields;
};

/* The event types of this build (format/lib/sttrace_events.h), header fields included. */
const struct st_type *st_builtin_types(size_t *count);
const struct st_type *st_builtin_type(uint16_t id);

/*
 * What a built-in type is: its ST_KIND_* value (& ST_KIND_MASK) and flags,
 * the kind column of ST_EVENT_TYPES (sttrace_events.h); 0 for an id this
 * build does not know (a newer recorder's, a generic tracepoint's).
 */
unsigned st_event_kind(uint16_t id);

/* Field of a type by name; NULL if absent. */
const struct st_field *st_field_find(const struct st_type *t, const char *name);

/*
 * Field values of a record, whatever its width. Element `i` of an array
 * (0 for scalars). Unsigned/hex/dev/ns fields read through st_field_u64,
 * signed ones through st_field_i64 (sign-extended); strings through
 * st_field_str, which copies at most cap-1 bytes and NUL-terminates.
 */
uint64_t st_field_u64(const void *rec, const struct st_field *f, unsigned i);
int64_t st_field_i64(const void *rec, const struct st_field *f, unsigned i);
size_t st_field_str(const void *rec, const struct st_field *f, char *dst, size_t cap);

/* ---- Writer ----------------------------------------------------------- */

struct st_writer;

/*
 * Where a writer's bytes go. write() receives consecutive pieces of the file
 * (header, chunks, footer) with their file offset; it may keep the pointer
 * only until it returns (copy to keep it longer). sync() makes everything
 * written durable; it is called once, by st_writer_close(). Both return 0 or
 * a negative errno (-ENOSPC, -EIO, ...), which the writer turns into an
 * ST_E* code and a message, and after which it writes nothing more.
 *
 * congested(), optional (NULL: never), says whether the sink would have to
 * wait to take an events chunk now (an output slower than the events). The
 * writer asks before it seals one; while the answer is yes it drops the
 * chunk whole instead, counts its events lost under ST_LOST_DROPPED, and
 * writes no metadata or lost chunk either until an events chunk goes out
 * again or the writer closes, which writes them whatever the answer.
 */
struct st_sink {
	int (*write)(void *ctx, const void *buf, size_t len, uint64_t offset);
	int (*sync)(void *ctx);
	void *ctx;
	int (*congested)(void *ctx);
};

/*
 * Write all `len` bytes of buf at `offset` of fd, retrying short writes and
 * EINTR: 0, or a negative errno (-ENOSPC when the device accepts no more).
 * The default sink is built on it; a sink of a program's own may use it too.
 */
int st_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset);

/*
 * Create or reuse an output file the safe way for a program run as root:
 * a new file is made 0600; an existing one is truncated only when it is a
 * regular file of the caller. Refused: a symbolic link at `path` (the link is
 * not followed) and anything but a regular file, unless ST_OUTPUT_FORCE;
 * a file of another user, always. Returns the fd (O_WRONLY, O_CLOEXEC), or a
 * negative ST_E* code with a one-line reason in msg.
 * st_output_dir() does the same for a directory of outputs (made 0700).
 */
#define ST_OUTPUT_FORCE	1u	/* follow a symlink, write to a non-regular file */
int st_output_open(const char *path, unsigned flags, char *msg, size_t cap);
int st_output_dir(const char *path, unsigned flags, char *msg, size_t cap);

/* Far above any CPU count a recorder sees; each lane may hold a chunk_size buffer. */
#define ST_MAX_LANES	4096u

struct st_writer_opts {
	size_t chunk_size;	/* raw bytes per events chunk; 0 = 1 MiB */
	int zstd_level;		/* 0 = 1 (as good as 3 on traces, faster); up to 19; negative = faster */
	const struct st_sink *sink;	/* NULL = write to the path given to open */
	unsigned lanes;		/* open events chunks, up to ST_MAX_LANES; a record goes to lane
				   rec->cpu % lanes; 0 = 1 (see "Lanes" above) */
	unsigned output_flags;	/* ST_OUTPUT_* for the file the writer creates (st_output_open) */
};

/*
 * Create `path` through st_output_open(). With opts->sink set, path may be NULL.
 * On failure *w is still set (NULL only when out of memory), so
 * st_writer_errmsg(*w) says why; free it with st_writer_close().
 */
int st_writer_open(struct st_writer **w, const char *path, const struct st_writer_opts *opts);

/* Declare an event type; copies it. Only before the first append. */
int st_writer_add_type(struct st_writer *w, const struct st_type *t);
/* Declare every built-in type at once. */
int st_writer_add_builtin_types(struct st_writer *w);

/*
 * Set a metadata key (UTF-8, no NUL). Setting a key again replaces it.
 * Keys set before the first chunk is sealed go into the first metadata chunk;
 * later ones go into a metadata chunk written after the next sealed events
 * chunk (so also at st_writer_flush()) and at close.
 * Key names: spec/sttrace-format.md, "Metadata".
 */
int st_writer_set_meta(struct st_writer *w, const char *key, const char *value);

/*
 * Metadata set so far, key i of the writer (as st_meta_at() of a reader):
 * 0, or ST_ENOTFOUND past the last. For a program that starts a new file
 * with what an earlier one knew (rotation).
 */
int st_writer_meta_at(const struct st_writer *w, size_t i, const char **key, const char **value);

/*
 * Append one record: `len` bytes starting with a struct st_event_header whose
 * size equals len and whose type was declared. Copied as is (memcpy), no
 * re-encoding, into the open chunk of lane rec->cpu % lanes, which is sealed
 * first when the record does not fit.
 */
int st_writer_append(struct st_writer *w, const void *rec, size_t len);

/* Seal every open events chunk that is not empty, and pending metadata, now. */
int st_writer_flush(struct st_writer *w);

/*
 * Set the count of events lost on `cpu` so far (cumulative, not a delta).
 * When counts changed, a lost chunk with every CPU's count goes out after
 * the next sealed events chunk, so call it as the counts grow (a recorder:
 * each second), not only before close: a file cut before close reports the
 * losses of its last lost chunk (spec section 5.4).
 */
int st_writer_set_lost(struct st_writer *w, uint32_t cpu, uint64_t lost);
/*
 * The `cpu` of events lost on no known CPU: probe runs the kernel skipped
 * because the same probe was already running on that CPU (an interrupt came
 * in while it ran); the kernel counts them per probe, not per CPU.
 */
#define ST_LOST_ANY_CPU	0xffffffffu
/*
 * The `cpu` of events the writer dropped in whole events chunks because its
 * sink was congested (st_sink.congested): records the probes delivered that
 * the output did not take in time. Counted by the writer itself.
 */
#define ST_LOST_DROPPED	0xfffffffeu

/*
 * Totals so far: events appended, raw bytes, bytes handed to the sink; of the
 * events appended, those dropped in whole chunks (ST_LOST_DROPPED).
 */
struct st_writer_stats {
	uint64_t events;
	uint64_t raw_bytes;
	uint64_t file_bytes;
	uint64_t chunks;
	uint64_t dropped_events;
	uint64_t dropped_chunks;
};
void st_writer_stats(const struct st_writer *w, struct st_writer_stats *st);

/*
 * Flush, write the lost counts, the index footer and the trailer, sync, free.
 * Returns the first error the writer met (also one from an earlier call),
 * so a caller can ignore intermediate returns and check this one.
 * `w` is freed in every case. errmsg, if not NULL, receives the message
 * (up to cap bytes) before the writer is freed.
 */
int st_writer_close(struct st_writer *w, char *errmsg, size_t cap);

/* Message of the last error, "" if none. */
const char *st_writer_errmsg(const struct st_writer *w);

/* ---- Reader ----------------------------------------------------------- */

struct st_reader;

enum st_chunk_kind {
	ST_CHUNK_META = 1,
	ST_CHUNK_SCHEMA = 2,
	ST_CHUNK_EVENTS = 3,
	ST_CHUNK_LOST = 4,
	ST_CHUNK_INDEX = 5,
};

/* Reader open flags. */
#define ST_READ_SCAN	1u	/* ignore the footer and scan every chunk (verify, recover);
				   footer_present is then 1 when the scan ends at a valid trailer */
#define ST_READ_LIVE	2u	/* the file is being written: read its intact chunks, and more
				   with st_reader_refresh() (files only) */

/*
 * Open a file. A file whose footer is missing or bad is scanned chunk by
 * chunk; damaged bytes are skipped up to the next intact chunk (a cut ends
 * the scan). That is not an error: the reader opens, st_reader_info() says
 * what was recovered and lost, st_damage_at() where.
 * Fails only when not even the file header and schema can be read; then *r
 * is still set (NULL only when out of memory) for st_reader_errmsg(), and
 * st_reader_close() frees it.
 */
int st_reader_open(struct st_reader **r, const char *path, unsigned flags);
/* The same over a caller's buffer (kept, not copied, until close). */
int st_reader_open_mem(struct st_reader **r, const void *buf, size_t len, unsigned flags);
void st_reader_close(struct st_reader *r);
const char *st_reader_errmsg(const struct st_reader *r);
/*
 * ST_READ_LIVE: take in the chunks written since. The file ends, for now, at
 * its first chunk that is not intact (not written yet: no damage is noted)
 * until it ends with a trailer, or `done` says its writer has stopped; then
 * the rest is scanned as a cut file would be, and the reader is no longer
 * live. Returns the chunks added (0 or more), or <0. st_cursor_extend()
 * hands their events to a cursor.
 */
int st_reader_refresh(struct st_reader *r, int done);
/* 1 while more of the file may come (ST_READ_LIVE, neither trailer nor done yet). */
int st_reader_live(const struct st_reader *r);

struct st_file_info {
	uint16_t major, minor;
	int footer_present;	/* 1: index footer found and valid */
	int recovered;		/* 1: the file was scanned because the footer was missing/bad */
	uint64_t file_size;
	uint64_t valid_size;	/* bytes up to the end of the last intact chunk */
	uint64_t lost_tail_bytes;	/* file_size - valid_size when damaged or cut */
	char damage[160];	/* "" or the first problem a scan met: "chunk 12 at offset 1234: ..." */
	uint64_t chunks;	/* intact chunks of any kind */
	uint64_t event_chunks;
	uint64_t events;
	uint64_t raw_bytes;	/* decompressed event bytes */
	uint64_t stored_bytes;	/* compressed event chunk bytes, headers included */
	uint64_t first_ts, last_ts;	/* event clock, ns; 0 when no events */
	uint64_t lost_events;	/* sum over CPUs; ST_COUNT_SATURATED when it would pass it */
	/*
	 * Events chunks whose header's time range is ST_PLAUSIBLE_SPAN_NS or
	 * wider: first_ts and last_ts take their records' times instead.
	 */
	uint64_t wide_chunks;
	/* A scan skips damaged bytes up to the next intact chunk: st_damage_at(). */
	uint64_t damaged_ranges;	/* byte ranges skipped */
	uint64_t skipped_bytes;	/* bytes in them, lost_tail_bytes included */
	uint64_t missing_chunks;	/* sequence numbers absent between intact chunks */
};
const struct st_file_info *st_reader_info(const struct st_reader *r);

/*
 * Byte ranges a scan skipped, in file order (none when the footer was read).
 * A range starts at a chunk that is not intact and ends where the next
 * intact chunk starts, or at the end of the file; it is never empty. Whole
 * chunks cut out of the file skip no bytes and make no range: the intact
 * chunk after the cut follows the one before it directly, with a sequence
 * gap (st_chunk_at()), counted in missing_chunks.
 */
struct st_damage {
	uint64_t offset;	/* first byte skipped */
	uint64_t size;		/* bytes skipped */
	uint32_t first_seq;	/* sequence number the first skipped chunk should have had */
	uint32_t chunks;	/* sequence numbers missing there; 0 at the end of the file (unknown) */
	char why[160];		/* what was wrong at offset: "chunk 12 at offset 1234: ..." */
};
size_t st_damage_count(const struct st_reader *r);
const struct st_damage *st_damage_at(const struct st_reader *r, size_t i);

/* Metadata (all metadata chunks merged, later ones override). */
const char *st_meta_get(const struct st_reader *r, const char *key);
size_t st_meta_count(const struct st_reader *r);
int st_meta_at(const struct st_reader *r, size_t i, const char **key, const char **value);

/* Schema as stored in the file (not the built-in one). */
size_t st_type_count(const struct st_reader *r);
const struct st_type *st_type_at(const struct st_reader *r, size_t i);
const struct st_type *st_type_by_id(const struct st_reader *r, uint16_t id);
const struct st_type *st_type_by_name(const struct st_reader *r, const char *name);
/* Events of a type in the file (footer counts, or counted while scanning). */
uint64_t st_type_events(const struct st_reader *r, uint16_t id);

/*
 * Lost events per CPU: count of CPUs with an entry, then entry i, in CPU
 * order (ST_LOST_ANY_CPU last). Each CPU's count is its last entry in file
 * order over the lost chunks and the index.
 */
size_t st_lost_count(const struct st_reader *r);
int st_lost_at(const struct st_reader *r, size_t i, uint32_t *cpu, uint64_t *lost);

/* Chunks, in file order, the index chunk included; unknown kinds are listed too. */
struct st_chunk_info {
	uint64_t offset;	/* of the chunk header in the file */
	uint32_t kind;		/* enum st_chunk_kind, or a kind this library does not know */
	uint32_t seq;		/* chunk sequence number, 0, 1, 2, ...; gaps where a scan skipped damage */
	uint32_t stored_size;	/* header + compressed payload */
	uint32_t raw_size;	/* payload after decompression */
	uint32_t events;	/* events chunks: records */
	uint64_t first_ts, last_ts;	/* events chunks: min and max timestamp */
};
size_t st_chunk_count(const struct st_reader *r);
const struct st_chunk_info *st_chunk_at(const struct st_reader *r, size_t i);
/*
 * The header of the chunk whose encoded bytes start at buf (a sink's write()
 * receives whole chunks): *ci without its offset. 0, or ST_EFORMAT when buf
 * does not start with an intact chunk header (the file header, the trailer).
 * For sinks that keep chunks apart, such as a flight recorder's ring.
 */
int st_chunk_peek(const void *buf, size_t len, struct st_chunk_info *ci);

/*
 * Decompress and check chunk i into buf (grown as needed), for readers that
 * process chunks in parallel or verify them. Records are in file order.
 * The caller zero-initializes buf and frees it with st_chunk_buf_free();
 * data is the library's to grow and free (a large buffer is a mapping of
 * its own, asked for huge pages: not for realloc or free). Events chunks
 * are checked record by record: every size is a multiple of 8
 * and matches the schema's type, every timestamp lies in the chunk's range.
 * On failure st_reader_errmsg() names the chunk and its offset.
 */
struct st_chunk_buf {
	void *data;
	size_t len;		/* valid bytes in data */
	size_t cap;
	void *dctx;		/* decompression context, owned */
};
int st_chunk_decode(struct st_reader *r, size_t i, struct st_chunk_buf *buf);
void st_chunk_buf_free(struct st_chunk_buf *buf);

/*
 * Walk the records of a decoded events chunk: returns 1 and sets *rec to the
 * next record, 0 at the end, ST_EFORMAT for a record whose size is bad.
 * *pos starts at 0.
 */
int st_chunk_next(const struct st_chunk_buf *buf, size_t *pos, const struct st_event_header **rec);

/*
 * Events of every events chunk in timestamp order (stable for equal
 * timestamps), restricted to [from, to] (0, UINT64_MAX for all). Chunks whose
 * time ranges overlap are merged, so records slightly out of order across CPUs
 * and chunks come out sorted. Seeks with the chunk index: chunks wholly before
 * `from` are never decompressed. Memory: the chunks that overlap in time.
 *
 * Whole events (flags 0), for programs that read what happened: a record
 * whose stored type this build knows comes in the built-in layout
 * (sttrace_events.h; st_builtin_type() describes it), copied field by field,
 * by name, when the file stores another layout (another recorder version;
 * fields the file lacks are 0); a type this build does not know comes as
 * stored (st_type_by_id() describes it), unless its id is one this build
 * uses for another type (it would read as that type: left out). And two
 * records of st-record's `block` preset stand for others
 * (spec/sttrace-format.md, "Whole events"):
 *   - a block_rq_complete_compact comes as the block_rq_complete it stands
 *     for, its sector, op and first bio from the request's last issue
 *     (sector 0 when the file lacks it: issued before the recording);
 *   - a block_rq_issue_stamped comes as the block_bio_queue, block_getrq and
 *     block_bio_backmerge / block_bio_frontmerge events its stamps stand for
 *     (those of types the file holds no record of), each dated by its stamp,
 *     then as a block_rq_issue; all in time order, which a window of 100 ms
 *     of event time read ahead keeps. In a file that also holds
 *     block_rq_issue records the stamped ones are left out.
 * The events made carry the header (cpu, pid, tid) of the record they come
 * from, and the built-in type ids, which the file's schema may lack.
 *
 * ST_CURSOR_RAW: the records as stored, for programs that print or check
 * the bytes a file holds (st-format cat; verify, slice and anonymize work on
 * decoded chunks, st_chunk_decode(), which are the stored records too).
 * Memory, whole events: a stamped file's 100 ms window of events besides
 * the chunks, and a table of the requests issued and not yet completed.
 *
 * ST_CURSOR_AHEAD: a thread of the cursor's own decompresses and checks the
 * chunks (st_chunk_decode) ahead of it, at most 4 chunks beyond those in
 * use, while the caller takes the events: on a machine with a CPU to spare,
 * the events come sooner. The events, their order and the errors (at the
 * same event, with the same message) are those of a cursor without it.
 * Not for a live reader (ST_READ_LIVE, still live at open): its cursor
 * decodes the chunks itself, as it does when no thread can be started.
 */
#define ST_CURSOR_RAW	1u
#define ST_CURSOR_AHEAD	2u
/*
 * ST_CURSOR_STAMPED: a block_rq_issue_stamped comes as itself, in time
 * order, instead of as the block_getrq and the merges of its stored bios it
 * stands for and a block_rq_issue (it extends one), for a reader that
 * matches those events to their I/O by bio and request and needs no other
 * order for them. Its `stamped` word then says what it stands for, dated
 * as whole events are: ST_STAMPED_GETRQ, a block_getrq at ts - getrq_ago
 * for bios[ST_STAMPED_FIRST(stamped)]; ST_STAMPED_MERGED(i), a merge of
 * bios[i] at ts - queue_ago[i]; the other queue bits and times as stored.
 * None of them comes late, where a whole event dated more than the window
 * before the issue does. In a file that holds block_bio_queue records
 * nothing is then dated before its record: no window is read ahead. In
 * one without them, the stamped issues stand for the bios' queueing too,
 * which is read in time order: those block_bio_queue events (and the
 * merges of the bios past the stored ones) are made as in whole events,
 * through the window, the issue after them. On a live reader the flag
 * changes nothing.
 */
#define ST_CURSOR_STAMPED	4u
struct st_cursor;
int st_cursor_open(struct st_reader *r, uint64_t from, uint64_t to, unsigned flags,
		   struct st_cursor **c);
/*
 * 1 and *ev (valid until the next call) for an event; 0 at the end; <0 for
 * an error. An events chunk that turns out damaged when the cursor decodes
 * it (the index listed it) gives its error once, st_reader_errmsg() naming
 * the chunk and its offset; the cursor has then skipped that chunk, and
 * calling again goes on with the events of the others, as a scan would
 * (spec section 7.1). After ST_ENOMEM, stop.
 */
int st_cursor_next(struct st_cursor *c, const struct st_event_header **ev);
/*
 * The next events, those st_cursor_next() would hand out, copied into buf
 * one after the other, each at an 8-byte boundary (its size rounded up to
 * 8), as many as fit in cap bytes (at least ST_CURSOR_FILL_MIN, room for
 * the largest record): the bytes filled; 0 at the end; <0 for an error,
 * as st_cursor_next() (an error after some events comes at the next call,
 * and an event that did not fit first at the next call of either). For a
 * caller that keeps events past the next call (another thread takes them):
 * the copy it would make, without a call per event.
 */
#define ST_CURSOR_FILL_MIN	65536u
int st_cursor_fill(struct st_cursor *c, void *buf, size_t cap);
/* Bytes an event takes in st_cursor_fill()'s buffer: the next one follows it there. */
static inline size_t st_record_span(const struct st_event_header *ev)
{
	return (ev->size + 7u) & ~(size_t)7;
}
void st_cursor_close(struct st_cursor *c);
/*
 * Events of built-in type id a whole-event cursor over r hands out (footer
 * counts, or scan counts): exact for stored types, an upper bound for the
 * events the stamped issues stand for (each stored bio queued, and one more
 * for the rest of a chain longer than ST_RQ_BIOS, whose number is in each
 * issue only).
 */
uint64_t st_whole_events(const struct st_reader *r, uint16_t id);
/*
 * A live reader (ST_READ_LIVE): take in the chunks st_reader_refresh()
 * added, and hand out events up to `until` only (st_cursor_next() returns 0
 * at the first one after it, for now). Events come in the order a cursor
 * opened on the whole file gives them as long as no chunk added later
 * begins at or before `until`: the caller holds `until` back by the longest
 * a writer keeps a record in an open chunk. Whole events a stamped issue
 * stands for are handed out once the events read past them cover the read
 * ahead window, or the file has ended. 0 or ST_ENOMEM.
 */
int st_cursor_extend(struct st_cursor *c, uint64_t until);

/* ---- Times on the command line --------------------------------------- */

/*
 * Every program reads times one way (spec: "Times"):
 *   duration   a decimal number with an optional unit: ns, us, ms, s (the
 *              default), m, h; "1.5", "200ms", "2m". Rounded to the ns.
 *   time       in a trace: a duration after the trace start ("2" is 2 s in),
 *              or "@NS", an absolute event-clock timestamp as `st-format cat`
 *              prints it.
 * The trace start is the record.start_ts metadata (when the recorder began),
 * else the first event's timestamp. Both return 0 or ST_EINVAL.
 */
int st_parse_duration(const char *s, uint64_t *ns);
/*
 * The decimal number a duration (and every number on the programs' command
 * lines) begins with: digits with an optional fraction and an optional
 * exponent ("99.9", ".5", "1e3"). No sign, blank, hexadecimal ("0x10",
 * "0x1p-3"), "inf" or "nan", which strtod alone would take. *v the value,
 * *end past it; 0, or ST_EINVAL when s does not begin with a finite one.
 */
int st_parse_decimal(const char *s, double *v, const char **end);
int st_parse_time(const char *s, uint64_t start, uint64_t *ns);

uint64_t st_trace_start(const struct st_reader *r);

/*
 * No recording spans 2^62 ns (146 years), and no clock offset is larger:
 * a chunk header's time range or a clock offset past it is a hostile
 * file's, which readers do not compute with.
 */
#define ST_PLAUSIBLE_SPAN_NS	(1ull << 62)
/*
 * The offset from the event clock to the wall clock under key
 * ("clock.realtime_offset_ns", "clock.realtime_offset_end_ns"): wall = ts +
 * offset. 0 with *off set, or ST_ENOTFOUND when the key is absent, not a
 * decimal, or past ST_PLAUSIBLE_SPAN_NS either way.
 */
int st_clock_offset(const struct st_reader *r, const char *key, int64_t *off);
/*
 * Event time ts on the wall clock, ns since the epoch: 0 with *wall set, or
 * ST_EINVAL when ts + off is not in 0..INT64_MAX. Every program's one way
 * to it.
 */
int st_wall_time(uint64_t ts, int64_t off, int64_t *wall);

/*
 * Counts read from a file add up without wrapping: a + b, or
 * ST_COUNT_SATURATED when the sum would pass it (per-CPU lost counts a
 * hostile file makes sum past 2^64 - 1); shown as "or more".
 */
#define ST_COUNT_SATURATED	UINT64_MAX
uint64_t st_add_count(uint64_t a, uint64_t b);

#ifdef __cplusplus
}
#endif

#endif /* STTRACE_H */
