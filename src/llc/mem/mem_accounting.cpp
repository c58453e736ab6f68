// mem_accounting.cpp - the walk over a context's structures (see mem_accounting.hpp).
#include "mem/mem_accounting.hpp"

#include "core/context.hpp"
#include "hybrid/net_router.hpp"
#include "kvs/kvs.hpp"
#include "transport/self/self_transport.hpp"
#include "transport/shm/shm_transport.hpp"
#include "wire/stream_decoder.hpp"
#include "transport/tcp/tcp_transport.hpp"
#include "transport/udp/udp_transport.hpp"

#include <poll.h>

#include <cinttypes>
#include <cstdio>

namespace llc {

namespace {

constexpr uint32_t N = LLC_MEM_N_SIZED;

// Indexed by MemComponent.
const MemComponentInfo kInfo[size_t(MemComponent::Count)] = {
    {"context", "other", 0, "Context and transport objects, error text, completion list"},
    {"handler_table", "other", 0, "active-message handler slots (LLC_AM_MAX_HANDLERS of the caller, 8 of libllc's tagged protocol)"},
    {"rank_table", "communicator tables (rank translation)", N,
     "rank -> node, n entries: the node-shared table if created here (node leader), else a private copy; 0 if mapped"},
    {"rank_table_mapped", "communicator tables (rank translation)", N | LLC_MEM_SHARED,
     "the node leader's rank -> node table mapped read-only here (the leader counts it)"},
    {"seq_numbers", "high-level contexts (VC/BoC)", N, "per-peer send and receive sequence numbers, 2 x n, resident pages"},
    {"tcp_rank_table", "low-level contexts (rank -> QP table)", 0,
     "tcp: rank -> connection hash map and connection list, one entry per open connection (at most LLC_MAX_CONTEXTS while idle ones can be evicted)"},
    {"tcp_conn_state", "low-level contexts (QPs)", 0, "tcp: per-connection objects, queues, stream decoders"},
    {"tcp_buffers", "communication buffers", 0, "tcp: staging buffer, reassembly buffers, poll set"},
    {"udp_peer_table", "low-level contexts (rank -> QP table)", 0,
     "udp: capped rank -> peer table (LLC_MAX_CONTEXTS slots), peer list, failed ranks, pending Forgets"},
    {"udp_peer_state", "low-level contexts (QPs)", 0, "udp: per-peer objects, send-side objects with queues, decoders"},
    {"udp_unacked", "communication buffers (packets in flight)", 0,
     "udp: datagram buffers sent, not yet acknowledged (retransmission)"},
    {"udp_buffers", "communication buffers", 0,
     "udp: receive buffer, free datagram pool, out-of-order datagrams, reassembly buffers"},
    {"hybrid_routes", "transport/buffer switching", 0,
     "hybrid: per-destination route and send history, queues of sends held while switching"},
    {"shm_segment", "shared-memory comm", 0, "shm: own segment, one receive ring per local process"},
    {"shm_peer_mappings", "shared-memory comm", LLC_MEM_SHARED, "shm: peers' segments mapped here (their pages)"},
    {"shm_peer_state", "shared-memory comm", 0, "shm: per-local-peer objects, queues, stream decoders"},
    {"shm_rank_table", "shared-memory comm (rank -> local index)", 0,
     "shm: the node's ranks (m, binary-searched) and the local peer list (m - 1)"},
    {"shm_buffers", "communication buffers", 0, "shm: reassembly buffers, single-copy receive buffers"},
    {"send_queues", "communication buffers (packets in flight)", 0, "queued outgoing records with their copies"},
    {"self_transport", "other", 0, "self-send queue and gather buffer"},
    {"bootstrap", "process manager (KVS)", 0,
     "bootstrap wrapper; LLC_KVS=dist: this leader's share of the KVS, peer address cache (LLC_KVS_CACHE)"},
    {"ring_pool", "communication buffers", 0,
     "hybrid (receiver driver): the rings this process holds of the node's ring pool (one per source on tcp or asked "
     "to move there, or ring-addressed on udp, DC RDMA; "
     "LLC_RING_SLOTS x LLC_RING_SLOT_BYTES each) and the pool's header and free list (counted by the "
     "process that created it, or a private pool's own)"},
    {"receive_history", "transport/buffer switching", 0,
     "hybrid (receiver driver): per source heard from (at most LLC_MAX_CONTEXTS while entries can be dropped), its "
     "receive count per period, LLC_HYBRID_HISTORY_PERIODS x 8 bytes (the paper's 1024 periods by default: 8 KiB)"},
};

} // namespace

uint64_t heap_bytes(const std::string &s)
{
    const char *p = s.data();
    const char *self = reinterpret_cast<const char *>(&s);
    if (p >= self && p < self + sizeof(s))
        return 0; // short-string buffer inside the object
    return uint64_t(s.capacity()) + 1;
}

const MemComponentInfo &mem_component_info(MemComponent c) { return kInfo[size_t(c)]; }

uint64_t MemRegistry::total() const
{
    uint64_t sum = 0;
    for (size_t i = 0; i < entries_.size(); i++)
        if (!(kInfo[i].flags & LLC_MEM_SHARED))
            sum += entries_[i].bytes;
    return sum;
}

int MemRegistry::export_to(llc_mem_entry_t *out, int max) const
{
    int count = int(MemComponent::Count);
    for (int i = 0; i < count && i < max; i++) {
        out[i].name = kInfo[i].name;
        out[i].paper = kInfo[i].paper;
        out[i].bytes = entries_[size_t(i)].bytes;
        out[i].items = entries_[size_t(i)].items;
        out[i].flags = kInfo[i].flags;
    }
    return count;
}

std::string MemRegistry::format(int rank) const
{
    std::string text;
    char line[256];
    for (size_t i = 0; i < entries_.size(); i++) {
        std::snprintf(line, sizeof(line), "llc mem rank %d: %-18s %12" PRIu64 " B %8" PRIu64 " items  %s%s%s\n",
                      rank, kInfo[i].name, entries_[i].bytes, entries_[i].items,
                      (kInfo[i].flags & LLC_MEM_N_SIZED) ? "[n-sized] " : "",
                      (kInfo[i].flags & LLC_MEM_SHARED) ? "[shared, not in total] " : "", kInfo[i].paper);
        text += line;
    }
    std::snprintf(line, sizeof(line), "llc mem rank %d: %-18s %12" PRIu64 " B\n", rank, "total", total());
    text += line;
    for (const std::string &note : notes_)
        text += "llc mem rank " + std::to_string(rank) + ": note: " + note + "\n";
    return text;
}

uint64_t MemWalk::decoder_bytes(const StreamDecoder &d)
{
    return heap_bytes(d.hdr_) + heap_bytes(d.aux_) + d.payload_.capacity();
}

uint64_t MemWalk::message_bytes(const OutgoingMessage &m)
{
    uint64_t b = sizeof(OutgoingMessage) + heap_bytes(m.hdr_) + heap_bytes(m.aux_) + heap_bytes(m.payload_) +
                 heap_bytes(m.spans_);
    if (m.owned_)
        b += m.wire_.payload_len;
    return b;
}

MemRegistry MemWalk::measure(const Context &c)
{
    MemRegistry r;
    using M = MemComponent;

    // The context itself (its handler table is counted separately).
    r.add(M::Context, sizeof(Context) - sizeof(c.handlers_), 1);
    r.add(M::Context, heap_bytes(c.job_id_) + heap_bytes(c.last_error_) + heap_bytes(c.progress_message_) +
                          heap_bytes(c.completions_));
    r.add(M::HandlerTable, sizeof(c.handlers_), c.handlers_.size());
    // The node-shared table is counted once per node: by the leader that
    // created it; the others count their mapping as shared (not in the total).
    const NodeMap &nm = c.node_map_;
    r.add(M::RankTable, nm.private_bytes() + nm.created_bytes(), uint64_t(nm.size()));
    r.add(M::RankTableMapped, nm.mapped_bytes(), nm.mapped_bytes() ? 1 : 0);
    r.add(M::Context, heap_bytes(nm.private_reason()) + heap_bytes(nm.job_id_) + heap_bytes(nm.segment().name()));
    r.add_note(nm.describe());
    // Lazily committed pages: what the kernel has made resident so far.
    r.add(M::SeqNumbers, c.next_send_seq_.resident_bytes() + c.next_recv_seq_.resident_bytes(),
          c.next_send_seq_.size() + c.next_recv_seq_.size());
    r.add(M::Bootstrap, sizeof(Bootstrap), 1);
    if (const AddressBook *k = c.kvs_.get()) {
        // Items: KVS entries stored here (leaders) plus cached peer entries.
        uint64_t cached = 0, stored = 0;
        uint64_t bytes = sizeof(AddressBook) + k->cache_bytes(&cached);
        r.add(M::Bootstrap, bytes, cached);
        if (const KvsServer *s = k->server()) {
            bytes = sizeof(KvsServer) + s->store_bytes(&stored);
            r.add(M::Bootstrap, bytes, stored);
        }
    }

    if (const auto *s = dynamic_cast<const SelfTransport *>(c.transports_[size_t(Context::Route::Self)].get())) {
        r.add(M::SelfTransport, sizeof(SelfTransport) + heap_bytes(s->queue_) + s->gather_.capacity(), 1);
        add_queue(r, s->queue_);
    }

    const auto *router = dynamic_cast<const NetRouter *>(c.transports_[size_t(Context::Route::Network)].get());
    if (const TcpTransport *t = router ? router->tcp_.get() : nullptr) {
        r.add(M::Context, sizeof(TcpTransport) + heap_bytes(t->my_addr_));
        r.add(M::TcpRankTable, heap_bytes(t->out_) + heap_bytes(t->out_live_) + heap_bytes(t->closing_), t->out_.size());
        for (const TcpTransport::OutConn *oc : t->out_live_) {
            r.add(M::TcpConnState, sizeof(*oc) + heap_bytes(oc->addr) + heap_bytes(oc->failure) + heap_bytes(oc->queue), 1);
            add_queue(r, oc->queue);
        }
        r.add(M::TcpBuffers, heap_bytes(t->in_) + heap_bytes(t->pollset_) + t->staging_.capacity());
        for (const auto &ic : t->in_) {
            r.add(M::TcpConnState, sizeof(*ic) + heap_bytes(ic->addr) + heap_bytes(ic->from), 1);
            if (ic->decoder) {
                r.add(M::TcpConnState, sizeof(StreamDecoder));
                r.add(M::TcpBuffers, decoder_bytes(*ic->decoder));
            }
        }
    }

    if (const auto *s = dynamic_cast<const ShmTransport *>(c.transports_[size_t(Context::Route::Node)].get())) {
        r.add(M::Context, sizeof(ShmTransport) + heap_bytes(s->job_id_));
        r.add(M::Context, heap_bytes(s->own_.name()));
        r.add(M::ShmSegment, s->own_.mapped_bytes(), s->local_ranks_.size());
        r.add(M::ShmRankTable, heap_bytes(s->peers_) + heap_bytes(s->local_ranks_), s->local_ranks_.size());
        for (const auto &p : s->peers_) {
            r.add(M::ShmPeerMappings, p->segment.mapped_bytes(), 1);
            r.add(M::ShmPeerState, sizeof(*p) + heap_bytes(p->segment.name()) + heap_bytes(p->failure) +
                                       heap_bytes(p->queue) + heap_bytes(p->control),
                  1);
            if (p->decoder) {
                r.add(M::ShmPeerState, sizeof(StreamDecoder));
                r.add(M::ShmBuffers, decoder_bytes(*p->decoder));
            }
            r.add(M::ShmBuffers, p->cma_buffer.capacity());
            add_queue(r, p->queue);
            add_queue(r, p->control);
        }
    }

    if (const UdpTransport *u = router ? router->udp_.get() : nullptr)
        measure_udp(r, *u);
    if (router)
        measure_hybrid(r, router);
    return r;
}

MemWalk::StructSizes MemWalk::struct_sizes()
{
    StructSizes s{};
    s.context = sizeof(Context);
    s.handler_table = sizeof(Context::handlers_);
    s.self_transport = sizeof(SelfTransport);
    s.tcp_transport = sizeof(TcpTransport);
    s.shm_transport = sizeof(ShmTransport);
    s.net_router = sizeof(NetRouter);
    s.tcp_out_conn = sizeof(TcpTransport::OutConn);
    s.tcp_in_conn = sizeof(TcpTransport::InConn);
    s.stream_decoder = sizeof(StreamDecoder);
    s.shm_peer = sizeof(ShmTransport::Peer);
    s.empty_deque_heap = heap_bytes(std::deque<std::unique_ptr<OutgoingMessage>>());
    s.pointer = sizeof(void *);
    s.pollfd = sizeof(pollfd);
    s.node_entry = sizeof(int);
    s.node_map_header = NodeMapSegment::bytes_for(0);
    s.tcp_out_entry = hash_node_size(static_cast<decltype(TcpTransport::out_) *>(nullptr));
    s.seq_entry = sizeof(uint64_t);
    s.ring_control = sizeof(RingControl);
    s.segment_header = (sizeof(SegmentHeader) + kCacheLine - 1) / kCacheLine * kCacheLine;
    s.outgoing_message = sizeof(OutgoingMessage);
    s.udp_transport = sizeof(UdpTransport);
    s.udp_peer = sizeof(UdpTransport::Peer);
    s.udp_peer_entry = UdpTransport::table_slot_bytes();
    s.udp_tx = sizeof(UdpTransport::Tx) + heap_bytes(decltype(UdpTransport::Tx::unacked)()) +
               heap_bytes(decltype(UdpTransport::Tx::queue)());
    s.udp_tx_packet = sizeof(UdpTransport::TxPacket);
    s.udp_header = sizeof(UdpHeader);
    s.udp_rx_buffer = UdpTransport::kRxBufBytes;
    s.udp_free_buffers = UdpTransport::kKeepFreeBuffers;
    s.hybrid_route = PeerTable<NetRouter::Route>::slot_bytes();
    s.hybrid_source = PeerTable<NetRouter::Source>::slot_bytes();
    s.hybrid_table_per_cap = sizeof(int32_t) + PeerTable<NetRouter::Route>::ghost_bytes();
    return s;
}

} // namespace llc
