// shm_account.cpp - what the shm transport holds, for the memory accounting
// (mem/mem_accounting.hpp).
#include "transport/shm/shm_transport.hpp"

#include "mem/mem_accounting.hpp"

namespace llc {

void ShmTransport::account(MemRegistry &r) const
{
    using M = MemComponent;
    r.add(M::Context, sizeof(ShmTransport) + heap_bytes(job_id_));
    r.add(M::Context, heap_bytes(own_.name()));
    r.add(M::ShmSegment, own_.mapped_bytes(), local_ranks_.size());
    r.add(M::ShmRankTable, heap_bytes(peers_) + heap_bytes(local_ranks_), local_ranks_.size());
    for (const auto &p : peers_) {
        r.add(M::ShmPeerMappings, p->segment.mapped_bytes(), 1);
        r.add(M::ShmPeerState,
              sizeof(*p) + heap_bytes(p->segment.name()) + heap_bytes(p->failure) + heap_bytes(p->queue), 1);
        if (p->decoder) {
            r.add(M::ShmPeerState, sizeof(StreamDecoder));
            r.add(M::ShmBuffers, p->decoder->buffer_bytes());
        }
        account_queue(r, p->queue);
    }
}

void ShmTransport::struct_sizes(StructSizes &s)
{
    s.shm_transport = sizeof(ShmTransport);
    s.shm_peer = sizeof(Peer);
    s.ring_control = sizeof(RingControl);
    s.segment_header = (sizeof(SegmentHeader) + kCacheLine - 1) / kCacheLine * kCacheLine;
}

} // namespace llc
