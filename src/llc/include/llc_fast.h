/*
 * llc_fast.h - the inline fast path of libllc: a small tagged message to a
 * process on the same node, written straight into that process's ring by
 * the caller's own code, with no call into the library.
 *
 * libllc's shared-memory transport gives every pair of processes on a node
 * a single-producer single-consumer ring of chunks (its layout below).  A
 * caller that sends many small messages (an MPI library's MPI_Isend) asks
 * once per destination for that destination's llc_fast_peer_t
 * (llc_fast_peer) and then sends with llc_fast_tsend, an inline function:
 * header, payload and seal go into the ring in one short sequence of
 * stores.  The message is the same one llc_tsend would have written (a
 * message chunk: matched by the receiver exactly like any other tagged
 * message, in order with everything else sent to that destination), and
 * it is complete when llc_fast_tsend returns 1: the bytes are in the ring.
 *
 * llc_fast_tsend returns 0 and writes nothing whenever the message cannot
 * take this path: larger than max_len, the ring too full or the chunk
 * would wrap, earlier sends to that peer still queued inside libllc, the
 * peer failed, or the peer has offered us receives (those may match this
 * message).  The caller then uses llc_tsend, which handles every case.
 *
 * The layout is an agreement between this header and the library: the
 * caller passes LLC_FAST_LAYOUT to llc_fast_peer, which returns NULL when
 * the library was built with another one (then llc_tsend is always used).
 *
 * The receiving side has an inline look too: llc_fast_poll_skip tells a
 * caller whose progress loop polls libllc (an MPI library's progress engine)
 * whether this llc_progress call can be left out because nothing has
 * arrived in this process's rings from the node's processes.  It reads the
 * seal word at each ring's tail (one load per local peer, the line the
 * sender's next chunk lands on) and never skips more than `period - 1`
 * calls in a row, so everything else llc_progress does (other transports,
 * queued sends, timers, liveness) still happens at least every period-th
 * poll.  The skipped polls count as idle llc_progress calls for the idle
 * backoff (spin, then yield, then sleep), so a waiting process still stops
 * spinning after the same number of polls, unless the caller sets `busy`:
 * it did work libllc does not see (copies into another process's shared
 * memory, say), so its polls since the last llc_progress call were not a
 * wait (as llc_note_activity, without a call).
 * Used under the context's one-thread-at-a-time rule (llc.h).
 */
#ifndef LLC_FAST_H_INCLUDED
#define LLC_FAST_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "llc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the ring and chunk layout below (3: chunks start on cache
 * lines; 4: llc_fast_poll_t's busy word).  llc_fast_peer and llc_fast_poll
 * accept only the library's own. */
#define LLC_FAST_LAYOUT 4

/* A chunk starts at a cache-line (64-byte) aligned position with {seal,
 * len} and takes whole cache lines: seal is the chunk's start position + 1,
 * stored last with release; len has LLC_RING_MESSAGE_FLAG set for a whole
 * message chunk, which holds an llc_ring_tag_header_t and the payload and
 * never wraps.  So a message of up to 32 bytes is one cache line, header,
 * tag and payload, and the consumer's wait for it is one line's transfer.
 * The word where the next chunk will start must read 0 (never an old
 * payload word that looks like a seal) once the chunk before it is sealed.
 * The producer zeroes the first words of the free lines a few lines ahead
 * of its position (LLC_RING_ZERO_AHEAD bytes) just after each seal, so that
 * the stores which take those lines from the consumer's cache are not in
 * front of the next seal; only a chunk that reaches beyond them zeroes its
 * successor's word itself, before its seal.  It always leaves one chunk
 * header's worth of room free for that word. */
#define LLC_RING_CHUNK_ALIGN 64u
#define LLC_RING_ZERO_AHEAD 256u
#define LLC_RING_CHUNK_HEADER 16u
#define LLC_RING_MESSAGE_FLAG (UINT64_C(1) << 63)

typedef struct llc_ring_tag_header {
    uint64_t tag;
    uint32_t source;            /* the sender's label */
    uint32_t seq;               /* low 32 bits of the stream's sequence number */
} llc_ring_tag_header_t;

/* The producer's side of one ring: where it is, where the consumer was last
 * seen.  head and tail count bytes ever written / consumed. */
typedef struct llc_ring_tx {
    char *data;                 /* the ring's bytes (capacity, a power of two) */
    uint64_t capacity;
    uint64_t mask;              /* capacity - 1 */
    uint64_t head;              /* next chunk's position (the producer's own copy) */
    uint64_t tail_seen;         /* the consumer's tail when last read (never ahead of it) */
    uint64_t zeroed;            /* the first word of every line in [head, zeroed) is 0 */
    uint64_t *shared_head;      /* in shared memory: head, for the consumer's finalize checks */
    uint64_t *shared_tail;      /* in shared memory: stored by the consumer with release */
} llc_ring_tx_t;

/* One destination on this node.  Owned by the library; the fields the
 * inline path reads besides the ring are kept current by it. */
typedef struct llc_fast_peer {
    llc_ring_tx_t *ring;
    uint64_t *send_seq;         /* the stream's next sequence number */
    size_t max_len;             /* largest payload of this path */
    uint32_t closed;            /* non-zero: sends queued inside the library, or the peer failed */
    uint32_t offers;            /* receives this peer has offered us and we hold */
    uint64_t msgs;              /* messages sent by llc_fast_tsend (added to llc_get_stats) */
    uint64_t bytes;
} llc_fast_peer_t;

/* Bytes of the ring a chunk with n bytes after its header occupies. */
static inline uint64_t llc_ring_chunk_size(uint64_t n)
{
    return (LLC_RING_CHUNK_HEADER + n + LLC_RING_CHUNK_ALIGN - 1) & ~(uint64_t) (LLC_RING_CHUNK_ALIGN - 1);
}

/* Free bytes a chunk of n bytes needs: itself and the next chunk's zeroed
 * seal word. */
static inline uint64_t llc_ring_footprint(uint64_t n)
{
    return llc_ring_chunk_size(n) + LLC_RING_CHUNK_HEADER;
}

/* Free bytes, from tail_seen when that shows `want` fit, else from a fresh
 * read of the consumer's tail. */
static inline uint64_t llc_ring_tx_space(llc_ring_tx_t *r, uint64_t want)
{
    uint64_t space = r->capacity - (r->head - r->tail_seen);
    if (space >= want)
        return space;
    r->tail_seen = __atomic_load_n(r->shared_tail, __ATOMIC_ACQUIRE);
    return r->capacity - (r->head - r->tail_seen);
}

/* Zero the first word of each free line up to LLC_RING_ZERO_AHEAD bytes
 * past the producer's position (free: the consumer is past it). */
static inline void llc_ring_tx_zero_ahead(llc_ring_tx_t *r)
{
    uint64_t limit = r->head + LLC_RING_ZERO_AHEAD;
    uint64_t free_end = r->tail_seen + r->capacity;
    if (limit > free_end)
        limit = free_end;
    for (; r->zeroed < limit; r->zeroed += LLC_RING_CHUNK_ALIGN)
        __atomic_store_n((uint64_t *) (void *) (r->data + (r->zeroed & r->mask)), 0, __ATOMIC_RELAXED);
}

/* Seal the chunk of len bytes (flags: LLC_RING_MESSAGE_FLAG or 0) written
 * after r->head's header: the next seal word zeroed unless it already is,
 * len, the seal, then the lines ahead zeroed. */
static inline void llc_ring_tx_publish(llc_ring_tx_t *r, uint64_t len, uint64_t flags)
{
    uint64_t head = r->head;
    uint64_t next = head + llc_ring_chunk_size(len);
    uint64_t len_word = len | flags;
    char *chunk = r->data + (head & r->mask);
    if (next >= r->zeroed) {
        __atomic_store_n((uint64_t *) (void *) (r->data + (next & r->mask)), 0, __ATOMIC_RELAXED);
        r->zeroed = next + LLC_RING_CHUNK_ALIGN;
    }
    memcpy(chunk + 8, &len_word, sizeof(len_word));
    __atomic_store_n((uint64_t *) (void *) chunk, head + 1, __ATOMIC_RELEASE);
    r->head = next;
    __atomic_store_n(r->shared_head, next, __ATOMIC_RELAXED);
    llc_ring_tx_zero_ahead(r);
}

/* Where a whole message chunk of total bytes goes, or NULL when it does not
 * fit now without wrapping. */
static inline char *llc_ring_tx_message_slot(llc_ring_tx_t *r, uint64_t total)
{
    uint64_t pos = (r->head + LLC_RING_CHUNK_HEADER) & r->mask;
    uint64_t want = llc_ring_footprint(total);
    if (total == 0 || pos + total > r->capacity || llc_ring_tx_space(r, want) < want)
        return NULL;
    return r->data + pos;
}

/* Send len bytes at buf with (tag, source) as one message chunk.  1: sent
 * and complete; 0: nothing written, use llc_tsend. */
static inline int llc_fast_tsend(llc_fast_peer_t *p, uint32_t source, uint64_t tag, const void *buf,
                                 size_t len)
{
    llc_ring_tag_header_t h;
    uint64_t total = sizeof(h) + len;
    char *slot;
    if ((p->closed | p->offers) != 0 || len > p->max_len)
        return 0;
    slot = llc_ring_tx_message_slot(p->ring, total);
    if (slot == NULL)
        return 0;
    h.tag = tag;
    h.source = source;
    h.seq = (uint32_t) *p->send_seq;
    memcpy(slot, &h, sizeof(h));
    memcpy(slot + sizeof(h), buf, len);
    llc_ring_tx_publish(p->ring, total, LLC_RING_MESSAGE_FLAG);
    ++*p->send_seq;
    p->msgs++;
    p->bytes += len;
    return 1;
}

/* The consumer's side of one ring, as far as an inline look needs it: the
 * ring's bytes and the consumer's position (stored by the library). */
typedef struct llc_ring_rx {
    const char *data;
    uint64_t mask;                /* capacity - 1 */
    const uint64_t *shared_tail;  /* in shared memory: bytes consumed so far */
} llc_ring_rx_t;

/* A sealed chunk waits at the consumer's position. */
static inline int llc_ring_rx_ready(const llc_ring_rx_t *r)
{
    uint64_t tail = __atomic_load_n(r->shared_tail, __ATOMIC_RELAXED);
    return __atomic_load_n((const uint64_t *) (const void *) (r->data + (tail & r->mask)), __ATOMIC_ACQUIRE) ==
           tail + 1;
}

/* The rings into this process from the other processes of its node.
 * Owned by the library (llc_fast_poll); `skipped` is the caller's to count
 * and the library's to reset. */
typedef struct llc_fast_poll {
    const llc_ring_rx_t *rings;
    uint32_t nrings;
    uint32_t period;              /* llc_progress at least every period-th poll (LLC_FAST_POLL_PERIOD) */
    uint32_t skipped;             /* polls left out since the last llc_progress call */
    uint32_t busy;                /* the caller's: not idle since the last llc_progress call */
} llc_fast_poll_t;

/* 1: nothing has arrived in the node's rings and llc_progress was called
 * within the last period - 1 polls, so the caller may leave this poll out
 * (counted in skipped); 0: call llc_progress now. */
static inline int llc_fast_poll_skip(llc_fast_poll_t *p)
{
    uint32_t i;
    if (p->skipped + 1 >= p->period)
        return 0;
    for (i = 0; i < p->nrings; i++)
        if (llc_ring_rx_ready(&p->rings[i]))
            return 0;
    p->skipped++;
    return 1;
}

/* The fast path to job rank dest, or NULL when there is none (dest is not
 * on this node, is this process, or the node's transport is not shared
 * memory) or the library's layout is not `layout` (pass LLC_FAST_LAYOUT).
 * Valid until llc_finalize. */
llc_fast_peer_t *llc_fast_peer(llc_context_t *ctx, int dest, int layout);

/* This process's inline look at its rings, or NULL when it has none (no
 * other process on this node, LLC_FAST_POLL_PERIOD=1, or the library's
 * layout is not `layout`).  Valid until llc_finalize. */
llc_fast_poll_t *llc_fast_poll(llc_context_t *ctx, int layout);

#ifdef __cplusplus
}
#endif

#endif /* LLC_FAST_H_INCLUDED */
