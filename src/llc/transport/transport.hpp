// transport.hpp - what every transport of libllc offers the Context: an
// interface object per transport, and a record of its capabilities that the
// policy above reads (in the manner of UCX's uct interfaces).
//
// The Context holds three, one per kind of destination, and never names a
// concrete one (core/open_transports.hpp creates them):
//   self    this process (transport/self);
//   node    the other processes of this node: shared-memory rings with
//           single-copy reads (transport/shm);
//   network processes on other nodes: the NetRouter over the socket
//           transports tcp and udp (hybrid/net_router.hpp), or verbs
//           (transport/verbs) where rdma-core and a device are present.
// tcp and udp implement this interface too; the router drives them through
// it, and through its events (net_events.hpp) for the switching protocol.
#pragma once

#include "llc.h"
#include "llc_fast.h"
#include "wire/am_protocol.hpp"
#include "wire/outgoing_message.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llc {

class MemRegistry;

// What a transport promises, as bit flags (TransportCaps::has).
enum CapFlag : uint32_t {
    // Messages to one peer arrive in the order they were sent.
    CapOrdered = 1u << 0,
    // Nothing sent is lost while both processes live (retransmitted where
    // the medium drops).
    CapReliable = 1u << 1,
    // The receiver of a request-to-send may copy the payload straight out
    // of the sender's memory (single copy, e.g. CMA).
    CapRemoteRead = 1u << 2,
    // idle_wait sleeps until something arrives (without it: for the time given).
    CapWakesOnArrival = 1u << 3,
    // Keyed zero-copy remote read (RDMA READ with an rkey): the sender
    // exposes payload pieces (Transport::expose), the receiver reads them
    // where they are (Transport::read_keyed).
    CapKeyedRead = 1u << 4,
};

// A piece of memory a transport exposed to peers (CapKeyedRead), as it is
// described on the wire: its address, its length and the key a peer's read
// must present (an rkey for verbs).
struct KeyedSpan {
    uint64_t addr;
    uint64_t len;
    uint32_t key;
    uint32_t spare;
};
static_assert(sizeof(KeyedSpan) == 24, "keyed span wire layout");

// What Transport::expose gives back: the pieces as peers may read them,
// exposed (pinned) until this object is destroyed.
class Exposure {
public:
    virtual ~Exposure() = default;
    std::vector<KeyedSpan> spans;
};

// How a keyed read ended: `data` (len bytes, valid during the callback
// only) when everything was read, else nullptr and `error` says why.
struct KeyedReadResult {
    const char *data = nullptr;
    size_t len = 0;
    std::string error;
};
using KeyedReadDone = std::function<void(const KeyedReadResult &)>;

// A transport's capabilities: its name, its flags, and the figures the
// layers above read.  Each transport spells its own out with the named
// setters, e.g.
//   constexpr TransportCaps kTcpCaps =
//       TransportCaps::named("tcp").with(CapOrdered | CapReliable | CapWakesOnArrival);
// Readers: Context (CapOrdered and CapReliable, which its per-peer sequence
// numbers rely on; CapWakesOnArrival for the idle wait; inline_max for the
// inline paths), Tagged (CapRemoteRead: rendezvous and offers read or write
// the peer's memory in place; CapKeyedRead: large active messages are read
// with the transport's keyed read), NetRouter (its own flags are those every
// socket transport it routes over has).
struct TransportCaps {
    const char *name = "";
    uint32_t flags = 0;
    // The largest payload try_send_tagged takes whole (0: no inline path);
    // try_send_inline takes an active message of up to that many bytes of
    // header and payload.
    size_t inline_max = 0;

    // Every flag of `f` is set.
    constexpr bool has(uint32_t f) const { return (flags & f) == f; }

    static constexpr TransportCaps named(const char *n)
    {
        TransportCaps c;
        c.name = n;
        return c;
    }
    constexpr TransportCaps with(uint32_t f) const
    {
        TransportCaps c = *this;
        c.flags |= f;
        return c;
    }
    constexpr TransportCaps inline_up_to(size_t bytes) const
    {
        TransportCaps c = *this;
        c.inline_max = bytes;
        return c;
    }
};

class Transport {
public:
    virtual ~Transport() = default;
    virtual const TransportCaps &caps() const = 0;

    // llc_init: after its first fence, attach what other processes of the
    // node created before it (throws Error); after the second, the names of
    // node-shared objects go.
    virtual void attach() {}
    virtual void release_names() {}

    // Send msg to dest: LLC_OK (sent or copied), LLC_INPROGRESS (the
    // completion callback runs later), or throws Error.
    virtual int send(int dest, std::unique_ptr<OutgoingMessage> msg) = 0;
    // The inline paths (caps().inline_max > 0): write the record whole now
    // when it fits and nothing waits before it; true when sent.  False: send
    // it through send().  The caller has assigned the sequence number.
    virtual bool try_send_inline(int dest, const WireHeader &wire, const void *hdr, const llc_iov_t *iov,
                                 int iovcnt)
    {
        (void)dest, (void)wire, (void)hdr, (void)iov, (void)iovcnt;
        return false;
    }
    virtual bool try_send_tagged(int dest, const TagChunkHeader &h, const void *buf, size_t len)
    {
        (void)dest, (void)h, (void)buf, (void)len;
        return false;
    }
    // The caller's inline path to dest (llc_fast.h), or nullptr (the default:
    // a transport without one).
    virtual llc_fast_peer_t *fast_peer(int dest)
    {
        (void)dest;
        return nullptr;
    }
    // The process of rank (a peer whose memory this transport reaches with
    // CMA, CapRemoteRead), or -1 (the default: unknown).
    virtual int32_t peer_pid(int rank)
    {
        (void)rank;
        return -1;
    }
    // Keyed remote read (caps().has(CapKeyedRead)); the defaults refuse.
    // Sender: expose the pieces iov[0..iovcnt) to dest, or nullptr (why
    // says what failed: registration, too many pieces): send the payload
    // another way.
    virtual std::unique_ptr<Exposure> expose(int dest, const llc_iov_t *iov, int iovcnt, std::string *why)
    {
        (void)dest, (void)iov, (void)iovcnt;
        *why = "this transport exposes no memory";
        return nullptr;
    }
    // Receiver: start reading spans[0..n) of src (len bytes in all) into a
    // buffer of the transport's.  True: started, and done runs exactly once,
    // from progress(), with the bytes or an error.  False: nothing started
    // (why says what failed), done never runs.
    virtual bool read_keyed(int src, const KeyedSpan *spans, size_t n, uint64_t len, KeyedReadDone done,
                            std::string *why)
    {
        (void)src, (void)spans, (void)n, (void)len, (void)done;
        *why = "this transport reads no remote memory";
        return false;
    }
    // The caller's inline look at this transport's receive rings (llc_fast.h),
    // or nullptr (the default: a transport without rings).
    virtual llc_fast_poll_t *fast_poll() { return nullptr; }
    // Move what can move without blocking; true if anything did.
    virtual bool progress() = 0;
    // Block up to `us` microseconds (or until something arrives, if
    // caps().has(CapWakesOnArrival)): the idle backoff.
    virtual void idle_wait(uint64_t us);
    virtual bool has_pending_sends() const = 0;

    // llc_finalize (core/finalize_drain.cpp) calls flush() once before its
    // first round of progress and again after every round, until the time
    // limit.  The first call stops new route changes; once no route change
    // is in flight, the transport queues its goodbye to each peer behind the
    // data still pending (once).  Later calls may note what the round
    // finished (shm: the rings whose queues emptied are marked drained).
    // True once the goodbye is queued: everything the transport sends before
    // close is in its queues (has_pending_sends says when they are empty).
    // Finalize ends only after a round that began with every transport's
    // flush() true, so that the goodbye is among that round's pending sends.
    virtual bool flush() { return true; }
    // What it still waits for before close.  Quiet is asked for after every
    // round in which nothing was pending; Full, which may cost a system call
    // per peer or build a string, less often, and when finalize gives up.
    enum class CloseDetail { Quiet, Full };
    struct CloseState {
        // Nothing more can arrive: every peer has said goodbye (or failed).
        bool quiet = true;
        // Full only.  A peer it still waits for is alive and has not begun
        // to finalize: waiting for it is not a timeout.
        bool peer_running = false;
        // Full only.  "<transport>: <state of each peer>" for a finalize that
        // gave up, or "".
        std::string report;
    };
    virtual CloseState close_state(CloseDetail detail) const
    {
        (void)detail;
        return CloseState();
    }

    // Counters only the transport knows now, into st.
    virtual void add_stats(llc_stats_t &st) const { (void)st; }
    // The memory it holds now, into r (mem/mem_accounting.hpp): its object,
    // tables, per-peer state, buffers and queued records.  Nothing by
    // default (verbs is not accounted yet).
    virtual void account(MemRegistry &r) const { (void)r; }
};

} // namespace llc
