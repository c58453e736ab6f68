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
#include <memory>
#include <string>

namespace llc {

struct TransportCaps {
    const char *name = "";
    // What reaching one more peer costs: nothing (mapped at llc_init), a
    // connection on first use (the paper's RC), no connection at all (its
    // DC), or either, per peer, as a router decides.
    enum class Connection { None, OnDemand, Connectionless, Routed };
    Connection connection = Connection::None;
    // Messages to one peer arrive in the order they were sent.
    bool ordered = true;
    // Nothing sent is lost while both processes live (retransmitted where
    // the medium drops).
    bool reliable = true;
    // The largest payload try_send_tagged takes whole (0: no inline path);
    // try_send_inline takes an active message of up to that many bytes of
    // header and payload.
    size_t inline_max = 0;
    // The receiver of a request-to-send may copy the payload straight out
    // of the sender's memory (single copy, e.g. CMA).
    bool remote_read = false;
    // idle_wait sleeps until something arrives (false: for the time given).
    bool wakes_on_arrival = false;
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
    // Move what can move without blocking; true if anything did.
    virtual bool progress() = 0;
    // Block up to `us` microseconds (or until something arrives, if
    // caps().wakes_on_arrival): the idle backoff.
    virtual void idle_wait(uint64_t us);
    virtual bool has_pending_sends() const = 0;
    // Nothing more can arrive: every peer has said goodbye (or failed).
    virtual bool incoming_quiet() const { return true; }

    // llc_finalize, in this order: freeze (no new route changes; progress
    // while switching()), say_goodbye (behind the data), then progress until
    // nothing is pending, calling after_finalize_progress after each round.
    virtual void freeze() {}
    virtual bool switching() const { return false; }
    virtual void say_goodbye() {}
    virtual void after_finalize_progress() {}
    // A peer this transport still waits for is alive and has not begun to
    // finalize: waiting for it is not a timeout.
    virtual bool waits_for_a_running_peer() const { return false; }
    // "<transport>: <state of each peer>" for a finalize that gave up, or "".
    virtual std::string pending_report() const { return std::string(); }

    // Counters only the transport knows now, into st.
    virtual void add_stats(llc_stats_t &st) const { (void)st; }
};

} // namespace llc
