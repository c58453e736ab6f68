// mem_walk_udp.cpp - the walk over the udp transport (DC-class) and the
// hybrid routes of a context (see mem_accounting.hpp).
#include "mem/mem_accounting.hpp"

#include "core/context.hpp"
#include "hybrid/net_router.hpp"
#include "wire/stream_decoder.hpp"
#include "transport/udp/udp_transport.hpp"

namespace llc {

void MemWalk::measure_udp(MemRegistry &r, const UdpTransport &u)
{
    using M = MemComponent;
    // Every datagram buffer comes from get_buffer(): header + a full MTU.
    const uint64_t datagram = sizeof(UdpHeader) + u.mtu_;

    r.add(M::Context, sizeof(UdpTransport) + heap_bytes(u.my_addr_));
    if (u.node_) {
        r.add(M::Context, sizeof(UdpNodeSocket) + u.node_->heap_bytes());
        // The node's receive buffers: counted by the leader that created them.
        const HandoverQueues &q = u.node_->queues();
        if (q.created_here())
            r.add(M::UdpBuffers, q.mapped_bytes(), uint64_t(q.slots()) * u.node_->processes());
        r.add_note(u.node_->describe());
    }
    // The capped table's fixed arrays (slots, bucket heads, predictor ghosts:
    // sized by LLC_MAX_CONTEXTS, more slots only after an overflow), the
    // iteration list, the failed ranks, the Forgets not yet answered and the
    // switch asks not yet answered.
    r.add(M::UdpPeerTable, u.peers_.memory_bytes() - sizeof(u.peers_) + heap_bytes(u.live_) +
                               heap_bytes(u.forgets_) + heap_bytes(u.ghosts_) + u.asks_.capacity_bytes(),
          u.peers_.size());
    r.add(M::UdpPeerTable, heap_bytes(u.failures_), u.failures_.size());
    for (const auto &f : u.failures_)
        r.add(M::UdpPeerTable, heap_bytes(f.second.message));
    r.add(M::UdpBuffers, (u.rxbuf_ ? UdpTransport::kRxBufBytes : 0) + heap_bytes(u.free_bufs_) + u.held_.capacity());
    r.add(M::UdpBuffers, u.free_bufs_.size() * datagram, u.free_bufs_.size());

    for (const UdpTransport::Peer *p : u.live_) {
        r.add(M::UdpPeerState, sizeof(*p), 1);
        if (const UdpTransport::Tx *t = p->tx.get()) {
            r.add(M::UdpPeerState, sizeof(*t) + heap_bytes(t->unacked) + heap_bytes(t->queue));
            for (const UdpTransport::TxPacket &pkt : t->unacked)
                if (pkt.buf)
                    r.add(M::UdpUnacked, datagram, 1);
            add_queue(r, t->queue);
        }
        if (p->decoder) {
            r.add(M::UdpPeerState, sizeof(StreamDecoder));
            r.add(M::UdpBuffers, decoder_bytes(*p->decoder));
        }
        // Ring landing: the addressing and landing state (the ring itself is the pool's).
        if (p->ring) {
            r.add(M::UdpPeerState, sizeof(*p->ring));
            if (p->ring->landing)
                r.add(M::UdpPeerState, sizeof(UdpRingLanding) + p->ring->landing->state_bytes());
        }
        // Early datagrams: a map node and a vector of exactly the datagram's stream bytes each.
        r.add(M::UdpBuffers, heap_bytes(p->ooo), p->ooo.size());
        for (const auto &early : p->ooo)
            r.add(M::UdpBuffers, heap_bytes(early.second));
    }
}

void MemWalk::measure_hybrid(MemRegistry &r, const NetRouter *router)
{
    using M = MemComponent;
    r.add(M::Context, sizeof(NetRouter));
    // The capped tables (LLC_MAX_CONTEXTS): bucket heads and predictor ghosts
    // sized by the cap, slots made on demand (at most the cap, more only after
    // an overflow).  Only where they are used: hybrid with remote peers; the
    // sources with the receiver driver.
    const bool hybrid = router->hybrid_;
    if (hybrid)
        r.add(M::HybridRoutes, router->routes_.memory_bytes() - sizeof(router->routes_), router->routes_.size());
    // receiver-driven: per recently heard source, its receive history; the policy object
    if (hybrid && router->switch_policy_) {
        r.add(M::HybridRoutes, router->sources_.memory_bytes() - sizeof(router->sources_), router->sources_.size());
        router->sources_.for_each([&](int, const NetRouter::Source &s) {
            r.add(M::ReceiveHistory, s.history.heap_bytes(), 1);
        });
    }
    if (router->switch_policy_)
        r.add(M::HybridRoutes, sizeof(*router->switch_policy_));
    // The node's connected (tcp) slot count (ConnectedSlots): one page per node, counted by the leader that
    // created it (the others' mappings of it are not in their totals).
    const ConnectedSlots &slots = router->connected_slots_;
    if (slots.created_here())
        r.add(M::HybridRoutes, slots.mapped_bytes(), 1);
    r.add(M::Context, heap_bytes(slots.name()));
    if (slots.cap() > 0)
        r.add_note(slots.describe());
    // The ring pool: the rings held here (their pages are this process's
    // doing while it holds them) and the header, counted by its creator.
    const RingPool &pool = router->ring_pool_;
    if (pool.rings() > 0) {
        r.add(M::RingPool, uint64_t(router->rings_.size()) * pool.ring_bytes(), router->rings_.size());
        if (pool.created_here() || !pool.shared())
            r.add(M::RingPool, pool.header_bytes());
        r.add(M::Context, heap_bytes(pool.name()) + heap_bytes(router->rings_) + heap_bytes(router->rings_retiring_));
        r.add_note(pool.describe());
    }
    router->routes_.for_each([&](int, const NetRouter::Route &route) {
        if (const auto *held = route.held.get()) {
            r.add(M::HybridRoutes, sizeof(*held) + heap_bytes(*held));
            add_queue(r, *held);
        }
    });
}

} // namespace llc
