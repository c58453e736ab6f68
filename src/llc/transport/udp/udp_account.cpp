// udp_account.cpp - what the udp transport holds, for the memory accounting
// (mem/mem_accounting.hpp).
#include "transport/udp/udp_transport.hpp"

#include "mem/mem_accounting.hpp"

namespace llc {

void UdpTransport::account(MemRegistry &r) const
{
    using M = MemComponent;
    // Every datagram buffer comes from get_buffer(): header + a full MTU.
    const uint64_t datagram = sizeof(UdpHeader) + mtu_;

    r.add(M::Context, sizeof(UdpTransport) + heap_bytes(my_addr_));
    if (node_) {
        r.add(M::Context, sizeof(UdpNodeSocket) + node_->heap_bytes());
        // The node's receive buffers: counted by the leader that created them.
        const HandoverQueues &q = node_->queues();
        if (q.created_here())
            r.add(M::UdpBuffers, q.mapped_bytes(), uint64_t(q.slots()) * node_->processes());
        r.add_note(node_->describe());
    }
    // The capped table's fixed arrays (slots, bucket heads, predictor ghosts:
    // sized by LLC_MAX_CONTEXTS, more slots only after an overflow), the
    // iteration list, the failed ranks, the Forgets not yet answered and the
    // switch asks not yet answered.
    r.add(M::UdpPeerTable, peers_.memory_bytes() - sizeof(peers_) + heap_bytes(live_) + heap_bytes(forgets_) +
                               heap_bytes(ghosts_) + asks_.capacity_bytes(),
          peers_.size());
    r.add(M::UdpPeerTable, heap_bytes(failures_), failures_.size());
    for (const auto &f : failures_)
        r.add(M::UdpPeerTable, heap_bytes(f.second.message));
    r.add(M::UdpBuffers, (rxbuf_ ? kRxBufBytes : 0) + heap_bytes(free_bufs_) + held_.capacity());
    r.add(M::UdpBuffers, free_bufs_.size() * datagram, free_bufs_.size());

    for (const Peer *p : live_) {
        r.add(M::UdpPeerState, sizeof(*p), 1);
        if (const Tx *t = p->tx.get()) {
            r.add(M::UdpPeerState, sizeof(*t) + heap_bytes(t->unacked) + heap_bytes(t->queue));
            for (const TxPacket &pkt : t->unacked)
                if (pkt.buf)
                    r.add(M::UdpUnacked, datagram, 1);
            account_queue(r, t->queue);
        }
        if (p->decoder) {
            r.add(M::UdpPeerState, sizeof(StreamDecoder));
            r.add(M::UdpBuffers, p->decoder->buffer_bytes());
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

void UdpTransport::struct_sizes(StructSizes &s)
{
    s.udp_transport = sizeof(UdpTransport);
    s.udp_peer = sizeof(Peer);
    s.udp_peer_entry = table_slot_bytes();
    s.udp_tx = sizeof(Tx) + heap_bytes(decltype(Tx::unacked)()) + heap_bytes(decltype(Tx::queue)());
    s.udp_tx_packet = sizeof(TxPacket);
    s.udp_header = sizeof(UdpHeader);
    s.udp_rx_buffer = kRxBufBytes;
    s.udp_free_buffers = kKeepFreeBuffers;
}

} // namespace llc
