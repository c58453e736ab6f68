// mem_accounting.cpp - the components' descriptions, the registry, and the
// entry points that ask a context and libllc's classes for their figures
// (see mem_accounting.hpp).
#include "mem/mem_accounting.hpp"

#include "core/context.hpp"
#include "hybrid/net_router.hpp"
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
    {"handler_table", "other", 0,
     "active-message handler slots (LLC_AM_MAX_HANDLERS of the caller, 8 of libllc's tagged protocol)"},
    {"rank_table", "communicator tables (rank translation)", N,
     "rank -> node, n entries: the node-shared table if created here (node leader), else a private copy; 0 if mapped"},
    {"rank_table_mapped", "communicator tables (rank translation)", N | LLC_MEM_SHARED,
     "the node leader's rank -> node table mapped read-only here (the leader counts it)"},
    {"seq_numbers", "high-level contexts (VC/BoC)", N,
     "per-peer send and receive sequence numbers, 2 x n, resident pages"},
    {"tcp_rank_table", "low-level contexts (rank -> QP table)", 0,
     "tcp: rank -> connection hash map and connection list, one entry per open connection (at most LLC_MAX_CONTEXTS "
     "while idle ones can be evicted)"},
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
    {"tagged_unexpected", "communication buffers", 0,
     "tagged: records of messages that arrived before their receive, with their payload copies, and the records kept "
     "for reuse (at most 64, 64, 64, 32, 8 and 2 of the size classes 0 B to 16 KiB: about 140 KiB)"},
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

MemRegistry MemWalk::measure(const Context &ctx)
{
    MemRegistry r;
    ctx.account(r);
    return r;
}

StructSizes MemWalk::struct_sizes()
{
    StructSizes s{};
    Context::struct_sizes(s);
    SelfTransport::struct_sizes(s);
    TcpTransport::struct_sizes(s);
    ShmTransport::struct_sizes(s);
    UdpTransport::struct_sizes(s);
    NetRouter::struct_sizes(s);
    s.stream_decoder = sizeof(StreamDecoder);
    s.empty_deque_heap = heap_bytes(std::deque<std::unique_ptr<OutgoingMessage>>());
    s.pointer = sizeof(void *);
    s.pollfd = sizeof(pollfd);
    s.node_entry = sizeof(int);
    s.node_map_header = NodeMapSegment::bytes_for(0);
    s.seq_entry = sizeof(uint64_t);
    s.outgoing_message = sizeof(OutgoingMessage);
    return s;
}

} // namespace llc
