// inter_node.hpp - the transport of messages to processes on other nodes, as
// the Context sees it.
//
// Two implement it: the NetRouter (hybrid/net_router.hpp: the socket
// transports tcp and udp, and which of them carries each peer's messages)
// and, with rdma-core, the VerbsTransport (transport/verbs).  The Context
// holds one of them, chosen at llc_init (core/open_inter_node.hpp), and
// never names either.
#pragma once

#include "llc.h"
#include "wire/outgoing_message.hpp"

#include <cstdint>
#include <memory>
#include <string>

namespace llc {

class InterNodeTransport {
public:
    virtual ~InterNodeTransport() = default;

    // After the first init fence: what the node's leader created before it
    // (throws Error).  After the second: the names of node-shared objects go.
    virtual void attach() {}
    virtual void release_names() {}

    // Send msg to dest, a process on another node: LLC_OK (sent or copied),
    // LLC_INPROGRESS (the completion callback runs later), or throws Error.
    virtual int send(int dest, std::unique_ptr<OutgoingMessage> msg) = 0;
    // Move what can move without blocking; true if anything did.
    virtual bool progress() = 0;
    // Block up to `us` microseconds, or until something arrives (idle backoff).
    virtual void idle_wait(uint64_t us) = 0;
    virtual bool has_pending_sends() const = 0;
    // Nothing more can arrive: every peer has said goodbye (or failed).
    virtual bool incoming_quiet() const = 0;

    // Finalize: no new route changes; switching() is true while one still
    // under way needs progress before the goodbyes.
    virtual void freeze() {}
    virtual bool switching() const { return false; }
    // A Goodbye behind the data to every peer.
    virtual void say_goodbye() = 0;
    // "<transport>: <state of each peer>" for a finalize that gave up, or "".
    virtual std::string pending_report() const = 0;

    // Counters only the transport knows now, into st.
    virtual void add_stats(llc_stats_t &st) const { (void)st; }
};

} // namespace llc
