/*
 * llc.h - C API of libllc, the low-level communication library of mpich-llc.
 *
 * libllc moves tagged messages (MPI-style matching, llc_tsend / llc_trecv)
 * and active messages between the processes of a parallel job.
 * It knows nothing of MPI: the caller supplies the job's shape (rank, size,
 * node of every rank) and a small bootstrap service (put/get/fence, as a PMI
 * offers), and gets back a context on which it registers message handlers,
 * sends messages and drives progress.
 *
 * Version 1 offered active messages only; version 2 adds tagged
 * point-to-point with MPI's matching rules (llc_tsend, llc_trecv, probes,
 * cancel).  One-sided put/get (llc_put, llc_get, LLC_CAP_RMA) came later as
 * new functions without a version change (see "One-sided communication").
 *
 * Threading: a context is used by one thread at a time (the caller
 * serialises; llc_set_idle_hook lets it release its lock while an idle
 * llc_progress yields or sleeps).  Handlers and completion callbacks run inside llc_progress()
 * and may call llc_am_send(), but not llc_progress() or llc_finalize().
 */
#ifndef LLC_H_INCLUDED
#define LLC_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 2: tagged point-to-point (llc_tsend ...), llc_get_stats takes the caller's
 *    struct size (a macro keeps the call spelled as before). */
/* 3: llc_init_params_t.endpoint (appended): several contexts per process.
 *    llc_init still serves callers of version 2, as endpoint 0. */
#define LLC_API_VERSION 3

/* Return codes.  Negative values are errors; llc_strerror() names them and
 * llc_last_error() gives the context's most recent detailed message. */
enum llc_status {
    LLC_OK = 0,
    LLC_INPROGRESS = 1,   /* operation accepted; completion is reported later */
    LLC_ERR_INVALID = -1, /* bad argument (rank out of range, NULL, size too big) */
    LLC_ERR_NOMEM = -2,
    LLC_ERR_SYSTEM = -3,    /* an operating-system call failed (see llc_last_error) */
    LLC_ERR_PEER = -4,      /* a peer died or its connection broke */
    LLC_ERR_BOOTSTRAP = -5, /* a bootstrap callback failed */
    LLC_ERR_UNSUPPORTED = -6,
    LLC_ERR_TIMEOUT = -7,
    LLC_ERR_STATE = -8,     /* call not allowed in the current state */
    LLC_ERR_TRUNCATE = -9,  /* tagged receive: the message was longer than the buffer */
    LLC_ERR_CANCELED = -10, /* tagged receive: cancelled before it matched */
    LLC_ERR_RANGE = -11,    /* put/get: offset + length lies outside the target region */
    LLC_ERR_KEY = -12       /* put/get: the key names no live region of the target, or forbids the access */
};

/* Capability bits (llc_caps). */
#define LLC_CAP_AM          (1u << 0)   /* active messages (always set in v1) */
#define LLC_CAP_TAGGED      (1u << 1)   /* native tagged point-to-point (llc_tsend ...) */
#define LLC_CAP_REMOTE_WRITE (1u << 2)  /* receiver-initiated remote write: llc_trecv_from offers */
#define LLC_CAP_RMA (1u << 3)           /* one-sided put/get on registered regions (llc_put ...) */

typedef struct llc_context llc_context_t;

/* Bootstrap service supplied by the caller (for MPICH: its PMI).  Each
 * returns 0 on success, non-zero on failure.  Keys are NUL-terminated
 * strings of at most 64 bytes; values at most 1024 bytes. */
typedef struct llc_bootstrap_ops {
    void *arg;                  /* passed back as the first argument */
    int (*put)(void *arg, const char *key, const void *value, size_t len);
    /* Read a key published by process `src_rank`.  *len holds the buffer
     * size on entry and the value's length on return. */
    int (*get)(void *arg, int src_rank, const char *key, void *value, size_t *len);
    /* Collective: every put made before the fence is visible to every get
     * after it. */
    int (*fence)(void *arg);
    /* Optional (may be NULL): collective gather of `len` bytes from every
     * rank into out[size * len], in rank order. */
    int (*allgather)(void *arg, const void *in, size_t len, void *out);
} llc_bootstrap_ops_t;

typedef struct llc_init_params {
    int api_version;            /* LLC_API_VERSION */
    int rank;                   /* this process, 0 <= rank < size */
    int size;                   /* processes in the job */
    /* node index of every rank (size entries, from the launcher's mapping);
     * processes with equal values share memory.  Copied by llc_init. */
    const int *node_of_rank;
    /* a string unique to this job (e.g. the PMI KVS name), used to name
     * shared-memory segments; at most 64 bytes. */
    const char *job_id;
    llc_bootstrap_ops_t boot;
    /* (version 3) Which of this process's contexts this is, 0 for the first,
     * below LLC_MAX_ENDPOINTS.  Contexts of equal endpoint in the processes of
     * a job form one endpoint of the job: they talk only to each other (a
     * message sent on endpoint e is received by endpoint e of its
     * destination), each with its own rings, sockets, matching and progress,
     * so that threads may drive different endpoints of a process at once
     * without sharing a lock.  llc_init is collective per endpoint: every
     * process creates the same endpoints, in the same order. */
    int endpoint;
} llc_init_params_t;

#define LLC_MAX_ENDPOINTS 64

/* Create a context.  Collective over all `size` processes (it uses the
 * bootstrap's fence).  On failure returns an error and *ctx is NULL;
 * llc_last_error(NULL) then describes it. */
int llc_init(const llc_init_params_t *params, llc_context_t **ctx);

/* Flush every pending send, tell the peers we are leaving, release
 * everything.  Collective (uses the bootstrap's fence).  ctx is freed even on
 * error. */
int llc_finalize(llc_context_t *ctx);

/* Finalize several contexts of this process (its endpoints) together: one
 * drain for all of them (each one's pending sends flushed and goodbyes said,
 * their progress taken in turn), then each one's fence, in the order given.
 * Finalizing them one after another with llc_finalize would leave the others
 * unprogressed while one waits for its peers in its drain and its fence; a
 * send that still needs its context's progress (a message held while the
 * hybrid changes a route, a rendezvous) would then keep a peer waiting for it,
 * and that peer would never reach the fence.  Collective per context, like
 * llc_finalize; every context is freed even on error, and the first error is
 * returned (llc_last_error(NULL) describes it).  Inside a handler: LLC_ERR_STATE,
 * and none is finalized.  Added without changing LLC_API_VERSION: nothing else
 * changed meaning. */
int llc_finalize_all(llc_context_t *const *ctx, int count);

uint32_t llc_caps(const llc_context_t *ctx);
int llc_rank(const llc_context_t *ctx);
int llc_size(const llc_context_t *ctx);
/* Node index of `rank` (from the mapping given to llc_init), -1 if out of range. */
int llc_node_of(const llc_context_t *ctx, int rank);

/* ---------------------------------------------------------------------- */
/* Active messages                                                         */

#define LLC_AM_MAX_HANDLERS 64
/* Largest header accepted by llc_am_send (payload size is unlimited). */
#define LLC_AM_HDR_MAX 16384

typedef struct llc_iov {
    const void *base;
    size_t len;
} llc_iov_t;

/* Called inside llc_progress() when a message for handler `id` arrives.
 * `hdr` is 8-byte aligned; `hdr` and `data` are valid only during the call;
 * `data` is the whole payload, contiguous (fragments are reassembled). */
typedef void (*llc_am_handler_t)(llc_context_t *ctx, void *arg, int src,
                                 const void *hdr, size_t hdr_len,
                                 const void *data, size_t data_len);

/* Called inside llc_progress() when a send that returned LLC_INPROGRESS has
 * finished with its buffers (status LLC_OK), or failed (negative status). */
typedef void (*llc_completion_t)(void *cb_arg, int status);

int llc_am_register(llc_context_t *ctx, unsigned id, llc_am_handler_t handler, void *arg);

/* Send header + payload (the concatenation of iov[0..iovcnt)) to handler `id`
 * at rank `dest` (dest may be this process).  The header is copied before
 * return.  Returns LLC_OK when the payload has already been copied out (the
 * callback is NOT called), LLC_INPROGRESS when the payload buffers are still
 * in use (the callback will be called exactly once from llc_progress), or
 * an error (the callback is not called).  Messages between one pair of
 * processes are delivered in the order they were sent. */
int llc_am_send(llc_context_t *ctx, int dest, unsigned id,
                const void *hdr, size_t hdr_len,
                const llc_iov_t *iov, int iovcnt,
                llc_completion_t cb, void *cb_arg);

/* Drive all transports once: deliver arrived messages, advance pending
 * sends, run callbacks.  *progressed (may be NULL) is set non-zero when
 * anything happened.  When called repeatedly without anything happening it
 * backs off (spins, then yields the core, then sleeps briefly), so that a job
 * with more processes than cores still makes progress.  Returns LLC_OK or an
 * error such as LLC_ERR_PEER (a peer's connection broke before it finalized). */
int llc_progress(llc_context_t *ctx, int *progressed);

/* Idle waits outside the caller's lock (added without changing
 * LLC_API_VERSION: nothing above changed meaning).  A caller that lets
 * several threads use one context under its own lock (an MPI library at
 * MPI_THREAD_MULTIPLE) installs a hook: when an idle llc_progress call has
 * come to yield the core or sleep, it first leaves the context and then calls
 * hook(arg, sleep_us) -- sleep_us 0 to yield, else the time to sleep
 * (LLC_SLEEP_US).  The hook releases the caller's lock, yields or sleeps,
 * takes the lock back and returns non-zero; meanwhile other threads may use
 * the context.  A hook that returns 0 did nothing: llc_progress then waits
 * itself, inside the context (a sleep that may wake early on arrivals).
 * NULL removes the hook.  The hook is called from llc_progress only. */
#define LLC_HAVE_IDLE_HOOK 1
typedef int (*llc_idle_hook_t)(void *arg, unsigned sleep_us);
int llc_set_idle_hook(llc_context_t *ctx, llc_idle_hook_t hook, void *arg);

/* The caller made progress of its own since its last llc_progress call,
 * which libllc cannot see (e.g. it copied into a window of shared memory):
 * the next idle llc_progress call starts a new wait, spinning, rather than
 * going on with the yields and sleeps of a wait that has lasted.  Cheap: a
 * reset of the idle counter. */
#define LLC_HAVE_NOTE_ACTIVITY 1
int llc_note_activity(llc_context_t *ctx);

/* ---------------------------------------------------------------------- */
/* Tagged point-to-point (LLC_CAP_TAGGED)                                   */
/*
 * MPI's matching, done inside libllc.  A message carries a 64-bit tag and a
 * 32-bit source label chosen by the sender (MPI: its rank in the
 * communicator).  A receive matches the first message, in arrival order,
 * whose label equals `source` (or any, LLC_ANY_SOURCE) and whose tag equals
 * `tag` on every bit not set in `ignore`.  Messages from one sender match in
 * the order they were sent.
 *
 * Protocol (doc/libllc-tagged.md): messages up to
 * LLC_TAG_EAGER_BYTES travel whole and are copied into the posted buffer
 * (or held as unexpected until a receive matches); larger ones send a
 * request-to-send and the receiver pulls the payload into its buffer once
 * matched: with one copy (process_vm_readv) on the same node, else the
 * sender streams it after a clear-to-send.
 *
 * The caller owns every llc_treq_t and keeps it in place until it
 * completes.  A call that returns LLC_OK has completed at once (the
 * callback is NOT called); LLC_INPROGRESS means the callback will be called
 * once, from llc_progress; a negative status is an error (no callback).
 */
#define LLC_ANY_SOURCE (-1)
#define LLC_TSEND_SYNC (1u << 0) /* complete only once a receive has matched */

typedef struct llc_treq llc_treq_t;
typedef void (*llc_treq_cb_t)(llc_treq_t *req);

struct llc_treq {
    llc_treq_cb_t cb;           /* set by the caller before the call */
    void *user;                 /* the caller's */
    /* results, valid at completion */
    int status;                 /* LLC_OK, LLC_ERR_TRUNCATE, LLC_ERR_CANCELED, LLC_ERR_PEER */
    int src_rank;               /* receive: the sender's rank in the job */
    uint32_t source;            /* receive: the sender's label */
    uint32_t reserved_;
    uint64_t tag;               /* receive: the message's tag */
    size_t length;              /* receive: bytes the sender sent */
    size_t received;            /* receive: bytes placed in the buffer (<= its size) */
    uint64_t internal_[12];     /* libllc's */
};

/* An unexpected message taken out of matching by llc_tmprobe. */
typedef struct llc_tmsg llc_tmsg_t;

int llc_tsend(llc_context_t *ctx, int dest, uint32_t source, uint64_t tag,
              const void *buf, size_t len, unsigned flags, llc_treq_t *req);
int llc_trecv(llc_context_t *ctx, int source, uint64_t tag, uint64_t ignore,
              void *buf, size_t len, llc_treq_t *req);
/* *found is set non-zero when a message matches; then info's results
 * (src_rank, source, tag, length) describe it.  The message stays queued. */
int llc_tprobe(llc_context_t *ctx, int source, uint64_t tag, uint64_t ignore,
               int *found, llc_treq_t *info);
/* As llc_tprobe, but the matched message leaves matching: only
 * llc_tmrecv(*msg) receives it. */
int llc_tmprobe(llc_context_t *ctx, int source, uint64_t tag, uint64_t ignore,
                int *found, llc_tmsg_t **msg, llc_treq_t *info);
int llc_tmrecv(llc_context_t *ctx, llc_tmsg_t *msg, void *buf, size_t len, llc_treq_t *req);
/* Cancel a posted receive that has not matched yet: *cancelled = 1, req's
 * status is LLC_ERR_CANCELED and its callback is not called.  Otherwise
 * *cancelled = 0 and the receive completes normally; or, for a receive of
 * llc_trecv_from that was offered to its sender, LLC_INPROGRESS is
 * returned: the sender is asked to give the offer back, and the callback
 * later reports either LLC_ERR_CANCELED or the message the sender had
 * already written. */
int llc_tcancel(llc_context_t *ctx, llc_treq_t *req, int *cancelled);

/* llc_trecv for a receive whose source label (>= 0) stands for job rank
 * src_rank: when LLC_TAG_OFFER is on and the receive is larger than
 * LLC_TAG_EAGER_BYTES and posted before its message, it is offered to
 * src_rank, which writes the message straight into buf (offers; see
 * llc_tcancel for the one difference it makes).  src_rank -1: as llc_trecv.
 * Added without changing LLC_API_VERSION: nothing else changed meaning. */
#define LLC_HAVE_TRECV_FROM 1
int llc_trecv_from(llc_context_t *ctx, int source, int src_rank, uint64_t tag, uint64_t ignore,
                   void *buf, size_t len, llc_treq_t *req);

/* ---------------------------------------------------------------------- */
/* One-sided communication (LLC_CAP_RMA; doc/libllc-rma.md)                */
/*
 * A process registers a region of its memory and packs a key for it: a
 * fixed-size blob of LLC_REGION_KEY_BYTES it hands to other processes by any
 * means (e.g. an all-gather).  Any process of the job may then put bytes into
 * the region or get bytes out of it with the key, without the owner calling
 * anything but llc_progress (on the record path, the owner's progress serves
 * the request; within a node, where the kernel permits it, the origin copies
 * with process_vm_writev / process_vm_readv and the owner does nothing).
 *
 * Requests are llc_treq_t, with the same contract as the tagged calls: LLC_OK
 * means complete at once (the callback is NOT called); LLC_INPROGRESS means
 * the callback runs once, from llc_progress, with req->status set; a negative
 * return is an error found at the call (no callback).  Completion of a put
 * means the bytes are in the target's memory (remote completion); of a get,
 * the bytes are in dst.  Statuses: LLC_OK, LLC_ERR_RANGE (outside the
 * region), LLC_ERR_KEY (no such region, e.g. deregistered), LLC_ERR_PEER (the
 * target died or could not be reached).  llc_last_error names the rank and
 * offset of a failed request.  The source of a put and the destination of a
 * get stay the caller's business until completion.
 *
 * Added without changing LLC_API_VERSION: nothing above changed meaning.
 */
#define LLC_HAVE_RMA 1
#define LLC_REGION_KEY_BYTES 64

/* llc_mem_register flags: what remote processes may do (0: both). */
#define LLC_REGION_REMOTE_READ (1u << 0)
#define LLC_REGION_REMOTE_WRITE (1u << 1)

typedef struct llc_region llc_region_t;

/* Expose [addr, addr + len) to the job's puts and gets.  len may be 0. */
int llc_mem_register(llc_context_t *ctx, void *addr, size_t len, unsigned flags, llc_region_t **out);
/* Pack region's key into buf (cap >= LLC_REGION_KEY_BYTES); *len (may be
 * NULL) receives LLC_REGION_KEY_BYTES. */
int llc_region_key(const llc_region_t *region, void *buf, size_t cap, size_t *len);
/* Withdraw the region: its keys never name anything again (puts and gets
 * that arrive later fail with LLC_ERR_KEY).  Operations on it that are in
 * flight must have completed first (the caller's synchronisation). */
int llc_mem_deregister(llc_context_t *ctx, llc_region_t *region);

/* Copy len bytes from src to offset `offset` of the region that `key` (from
 * llc_region_key at rank dest) names; complete when they are there. */
int llc_put(llc_context_t *ctx, int dest, const void *src, size_t len, const void *key, uint64_t offset,
            llc_treq_t *req);
/* Copy len bytes from offset `offset` of dest's region into dst. */
int llc_get(llc_context_t *ctx, int dest, void *dst, size_t len, const void *key, uint64_t offset, llc_treq_t *req);

/* ---------------------------------------------------------------------- */
/* Errors and information                                                  */

const char *llc_strerror(int status);
/* Detailed text of the most recent error on ctx (or of the last failed
 * llc_init when ctx is NULL). Never NULL. */
const char *llc_last_error(const llc_context_t *ctx);

/* Counters, for tests and tools. */
typedef struct llc_stats {
    uint64_t msgs_sent, msgs_received;
    uint64_t bytes_sent, bytes_received;
    uint64_t shm_msgs, tcp_msgs, self_msgs, cma_msgs;
    uint64_t idle_yields, idle_sleeps;
    /* udp (DC-class) transport and hybrid switching; appended in 1.1 */
    uint64_t udp_msgs;            /* sends that went (or were queued) on udp */
    uint64_t udp_packets_sent;    /* data datagrams, first transmissions only */
    uint64_t udp_retransmits;     /* data datagrams sent again (timeout or selective ack) */
    uint64_t udp_duplicates;      /* data datagrams received twice and dropped */
    uint64_t udp_acks_sent;       /* stand-alone acknowledgement datagrams */
    uint64_t udp_injected_drops;  /* datagrams dropped by LLC_UDP_DROP_PERMILLE */
    uint64_t udp_peers;           /* peers with udp reliability state now */
    uint64_t rc_promotions;       /* hybrid: destinations moved from udp to tcp */
    uint64_t rc_demotions;        /* hybrid: destinations moved from tcp back to udp */
    uint64_t rc_active;           /* hybrid: destinations currently on tcp */
    /* receiver-driven hybrid (LLC_HYBRID_DRIVER=receiver); appended in 1.2 */
    uint64_t rc_requests_sent;     /* switch asks this process (as a receiver) sent to sources (first sends) */
    uint64_t rc_requests_received; /* switch asks this process (as a sender) received, repeats included */
    uint64_t rc_requests_refused;  /* received ones it did not act on (cap full, switching, finalizing) */
    /* udp peer cap (LLC_MAX_CONTEXTS); appended in 1.2 */
    uint64_t udp_evictions;       /* udp peer states dropped to stay under the cap */
    uint64_t udp_cap_overflows;   /* peers created above the cap because no state could be dropped */
    uint64_t udp_peer_restarts;   /* psn streams restarted because a peer re-created its state */
    /* the node's RC-class slots (LLC_MAX_RC_PER_NODE); appended in 1.3 */
    uint64_t rc_sources;          /* receiver-driven: sources on tcp (or asked to move there) this process holds a slot for */
    uint64_t rc_slots_cap;        /* per direction, the cap this process sees: the node's when shared, its share otherwise */
    uint64_t rc_out_slots_in_use; /* destinations on tcp now: node-wide when shared, this process's otherwise */
    uint64_t rc_in_slots_in_use;  /* receiver-driven: sources on tcp (or asked to move there) now, same scope */
    uint64_t rc_out_slots_high_water; /* most outgoing slots in use at once (same scope) */
    uint64_t rc_in_slots_high_water;  /* most incoming slots in use at once (same scope) */
    uint64_t rc_slots_full;       /* promotions not made because no slot was free */
    /* tcp connection cap (LLC_MAX_CONTEXTS); appended in 1.3, after the RC slots */
    uint64_t tcp_conns;           /* outgoing tcp connections open (connecting or connected) now */
    uint64_t tcp_evictions;       /* idle outgoing connections closed (Close record) to stay under the cap */
    uint64_t tcp_cap_overflows;   /* connections opened above the cap because none was idle */
    uint64_t tcp_closes_received; /* accepted connections the sender closed with a Close record */
    /* one udp socket per node (LLC_UDP_SHARED_RECV=1); appended in 1.3, after the tcp cap */
    uint64_t udp_handed_over;     /* datagrams this process read for another process of its node and passed on */
    uint64_t udp_handover_waits;  /* ... found its buffers full: held, and the node's socket left to the others meanwhile */
    uint64_t udp_handover_drops;  /* ... dropped because that process had left (the sender is told: Gone) */
    /* hybrid per-peer state capped at LLC_MAX_CONTEXTS; appended in 1.3, after the shared socket */
    uint64_t hybrid_routes;        /* destinations with a hybrid route (path, send history) now */
    uint64_t hybrid_sources;       /* receiver-driven: sources with a receive history now */
    uint64_t hybrid_evictions;     /* routes and sources dropped to make room under the cap */
    uint64_t hybrid_cap_overflows; /* routes and sources created above the cap because none could be dropped */
    /* the node's ring pool (LLC_RING_POOL); appended in 1.3, after the hybrid cap */
    uint64_t ring_pool_rings;      /* rings in the pool this process uses: the node's when shared, its private share otherwise */
    uint64_t ring_pool_in_use;     /* rings leased now: node-wide when shared, this process's otherwise */
    uint64_t ring_pool_high_water; /* most rings leased at once (same scope) */
    uint64_t ring_pool_held;       /* rings this process holds now (one per source on tcp or asked to move there, or ring-addressed on udp: DC RDMA) */
    uint64_t ring_leases;          /* rings this process has leased so far */
    uint64_t ring_pool_empty;      /* promotions and DC RDMA asks not made because the pool had no free ring (per period) */
    uint64_t ring_bytes_landed;    /* tcp stream bytes read into a leased ring (the rest: the staging buffer or direct reads) */
    /* the hybrid's switching channel (asks and answers outside the udp stream); appended in 1.3, after the ring pool */
    uint64_t rc_asks_refused;      /* receiver-driven: answers from sources that refused one of our asks */
    uint64_t rc_ask_resends;       /* asks sent again because no answer came in time */
    uint64_t rc_asks_unanswered;   /* asks given up after the resends (the policy's patience takes over) */
    /* LLC_NET=verbs keyed reads of large active messages (LLC_VERBS_RNDV_BYTES) and the registration cache
       (LLC_REG_CACHE_MAX) it uses; appended after the switching channel; 0 on other paths */
    uint64_t verbs_rndv_sends;         /* messages whose payload was exposed for the receiver's RDMA READ */
    uint64_t verbs_rndv_send_errors;   /* keyed reads of this process that failed (the message answered Fail) */
    uint64_t verbs_rndv_recvs;         /* keyed reads of this process that read every byte */
    uint64_t verbs_rndv_bytes_read;    /* payload bytes this process read with RDMA READ */
    uint64_t verbs_rndv_fallbacks;     /* at or above the threshold but copied: registration failed, or too many iovs */
    uint64_t verbs_rndv_held_records;  /* always 0 since wire version 4 (kept for the layout) */
    uint64_t reg_cache_hits;           /* acquires served by a cached registration */
    uint64_t reg_cache_misses;         /* acquires that registered */
    uint64_t reg_cache_evictions;      /* unpinned registrations dropped (the bound, a failed registration) */
    uint64_t reg_cache_overflows;      /* registrations kept above the bound because every one was pinned */
    uint64_t reg_cache_entries;        /* registrations held now */
    uint64_t reg_cache_pinned;         /* of those, pinned now (a send or a read in progress) */
    /* DC RDMA: udp datagrams addressed to a ring leased for their source (SwitchWant::UdpRing); appended in 1.3, after the switching channel */
    uint64_t dc_rdma_requests_sent;     /* receiver: asks for ring addressing sent (each with a ring leased for the source) */
    uint64_t dc_rdma_switches;          /* receiver: sources that accepted ring addressing */
    uint64_t dc_rdma_exits;             /* receiver: ring-addressed sources that accepted to stop (plain udp, or tcp) */
    uint64_t dc_rdma_sources;           /* receiver: sources ring-addressed now */
    uint64_t dc_rdma_bytes_landed;      /* receiver: udp stream bytes landed in ring slots */
    uint64_t dc_rdma_requests_accepted; /* sender: destinations that made us ring-address our datagrams to them */
    uint64_t dc_rdma_packets_sent;      /* sender: ring-addressed datagrams built (retransmissions not counted) */
    /* tagged point-to-point (LLC_API_VERSION 2) */
    uint64_t tag_eager_sends;           /* tagged sends that travelled whole */
    uint64_t tag_rndv_sends;            /* tagged sends by request-to-send */
    uint64_t tag_unexpected;            /* messages that arrived before a matching receive */
    uint64_t tag_cma_reads;             /* rendezvous payloads pulled with process_vm_readv */
    uint64_t tag_truncated;             /* receives completed with LLC_ERR_TRUNCATE */
    uint64_t tag_cancelled;             /* receives cancelled */
    /* strangers (doc/reliability.md): never an error, the job carries on */
    uint64_t auth_rejected;    /* tcp connections closed before proving they belong to the job (garbage, wrong secret, timeout) */
    uint64_t udp_auth_dropped; /* udp datagrams dropped: malformed, another job's, or without this job's pair token */
    /* tagged records from job members that do not fit (doc/reliability.md); appended after the strangers */
    uint64_t tag_rejected;     /* tagged records dropped: an unknown or stale request token, a record the request does not wait for, a malformed header */
    uint64_t tag_read_failed;  /* rendezvous receives completed with LLC_ERR_PEER: the sender's buffer could not be read (process_vm_readv) */
    /* appended after the tagged records (doc/reliability.md) */
    uint64_t kvs_auth_rejected; /* node leaders (LLC_KVS=dist): KVS connections closed before proving they belong to the job (garbage, wrong secret, timeout) */
    uint64_t cma_read_failed;   /* large active messages from the node not delivered: their spans could not be read */
    /* udp loss recovery: which path resent (appended after the KVS and CMA counters) */
    uint64_t udp_timeout_retransmits; /* part of udp_retransmits sent by the retransmission timer (the rest: selective acks, recovery after a timeout) */
    uint64_t udp_timeout_wait_us;     /* sum, over those, of the time since the datagram's previous transmission (the time the timer made the stream wait) */
    /* appended after the udp counters */
    uint64_t tag_data_in_place; /* rendezvous payloads read from a tcp socket straight into the posted receive buffer (no staging copy) */
    /* LLC_NET=tcp: one connection per pair carries both directions; appended after tag_data_in_place */
    uint64_t tcp_adopted;       /* accepted tcp connections this process also sends on (it had no connection of its own to that peer) */
    /* offers (the receive posted first, llc_trecv_from); appended after tcp_adopted */
    uint64_t tag_offers_sent;     /* receiver: receives offered to their sender */
    uint64_t tag_offers_used;     /* receiver: offered receives the sender wrote the message into */
    uint64_t tag_offers_declined; /* receiver: offers the sender refused or gave back (a message crossed the offer, or the receive was cancelled) */
    uint64_t tag_cma_writes;      /* sender: messages written into an offered receive with process_vm_writev */
    /* one-sided put/get (llc_put, llc_get); appended after the offers */
    uint64_t rma_puts;       /* origin: puts started (the arguments and the key passed the checks at the call) */
    uint64_t rma_gets;       /* origin: gets started (as rma_puts) */
    uint64_t rma_bytes_put;  /* origin: bytes of puts that completed without error */
    uint64_t rma_bytes_got;  /* origin: bytes of gets that completed without error */
    uint64_t rma_cma_ops;    /* origin: puts and gets done with process_vm_writev / process_vm_readv */
    uint64_t rma_self_ops;   /* origin: puts and gets to its own regions (memcpy) */
    uint64_t rma_record_ops; /* origin: puts and gets sent as records for the target to serve */
    uint64_t rma_failed;     /* origin: puts and gets that failed (range, key, peer), at the call or at completion */
    uint64_t rma_served;     /* target: put and get records served (copied into or out of a region) */
    uint64_t rma_refused;    /* target: put and get records answered with an error (range, key) */
    uint64_t rma_rejected;   /* records dropped: malformed, or naming no request of ours */
    uint64_t rma_regions;    /* regions registered now */
    uint64_t rma_in_place;   /* put records and get replies read by tcp straight into place (no staging copy) */
    /* udp loss probe (LLC_UDP_PROBE_US); appended after the one-sided counters */
    uint64_t udp_probe_retransmits; /* part of udp_retransmits: first resends by the loss probe */
} llc_stats_t;
/* Copy min(size, sizeof(llc_stats_t)) bytes of counters to out: a caller
 * built against an older header (a shorter struct) gets its own prefix. */
int llc_get_stats_sized(const llc_context_t *ctx, llc_stats_t *out, size_t size);
#define llc_get_stats(ctx, out) llc_get_stats_sized((ctx), (out), sizeof(llc_stats_t))

/* ---------------------------------------------------------------------- */
/* Memory accounting (doc/memory.md)                                       */

/* Defined when llc_mem_report() is available (added without changing
 * LLC_API_VERSION: nothing above changed meaning). */
#define LLC_HAVE_MEM_REPORT 1

/* llc_mem_entry flags */
#define LLC_MEM_SHARED  (1u << 0)  /* pages owned (and counted) by another process
                                      of the node: not part of this process's total */
#define LLC_MEM_N_SIZED (1u << 1)  /* has a term proportional to the job size */

/* One component of libllc's memory, counted from the real allocations
 * (sizeof of the structures times their count, vector capacities, mapped
 * segment sizes) at the time of the call. */
typedef struct llc_mem_entry {
    const char *name;       /* component, e.g. "tcp_conn_state" (static string) */
    const char *paper;      /* the component of the paper's memory model it maps to */
    uint64_t bytes;         /* bytes held now */
    uint64_t items;         /* objects counted (peers, rings, table entries...) */
    uint32_t flags;         /* LLC_MEM_* */
} llc_mem_entry_t;

/* Fill out[0 .. min(max, count)) with the context's memory by component and
 * return count, the number of components (call with max = 0 to size the
 * array).  Entries flagged LLC_MEM_SHARED are not part of the process total.
 * With LLC_MEM_REPORT=1 in the environment, llc_finalize prints the same
 * table to stderr. */
int llc_mem_report(const llc_context_t *ctx, llc_mem_entry_t *out, int max);

#ifdef __cplusplus
}
#endif
#endif /* LLC_H_INCLUDED */
