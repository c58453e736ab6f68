// mem_accounting.hpp - bytes held by a libllc context, per component.
//
// The registry is filled from the context's real structures when asked
// (llc_mem_report, LLC_MEM_REPORT=1 at finalize): each class reports its own
// through a public member (Context::account, which calls Transport::account
// of each transport; NodeMap::account, OutgoingMessage::memory_bytes,
// StreamDecoder::buffer_bytes), with sizeof of every object
// times its count, capacity() of vectors and strings that live on the heap,
// the map and nodes of std::deque, the buckets and nodes of std::unordered_map
// and the nodes of std::map (libstdc++ layout), and the mapped size of
// shared-memory segments.  Nothing is estimated from constants, so the
// numbers move as soon as a peer is used.  See doc/memory.md.
//
// Every component says which component of the paper's per-node memory model
// (Yamaguchi et al., doc/references.md) it corresponds to.
#pragma once

#include "llc.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace llc {

class Context;

enum class MemComponent : int {
    Context,         // the Context and transport objects, error strings, completion list
    HandlerTable,    // the 64 AM handler slots
    RankTable,       // NodeMap: rank -> node (n entries), counted once per node (by the leader) when shared
    RankTableMapped, // NodeMap: the node leader's shared table mapped here (LLC_MEM_SHARED)
    SeqNumbers,      // next_send_seq_/next_recv_seq_: per-peer ordering state (2 x n)
    TcpRankTable,    // tcp: rank -> connection hash map (entries for destinations sent to)
    TcpConnState,    // tcp: per-connection objects (out and in), their strings, queues, decoders
    TcpBuffers,      // tcp: staging buffer, decoder reassembly buffers, poll set
    UdpPeerTable,    // udp: rank -> peer hash table and the list of peers (entries for peers talked to)
    UdpPeerState,    // udp: per-peer objects, send-side objects with their queues, decoders
    UdpUnacked,      // udp: datagram buffers sent and not yet acknowledged (kept for retransmission)
    UdpBuffers,      // udp: receive buffer, free datagram pool, out-of-order datagrams, decoder buffers
    HybridRoutes,    // hybrid: per-destination route (path, switching state, send history), held sends' queues
    ShmSegment,      // shm: this process's segment (header + one receive ring per local process)
    ShmPeerMappings, // shm: the peers' segments mapped here (their pages; LLC_MEM_SHARED)
    ShmPeerState,    // shm: per-local-peer objects, queues, decoders
    ShmRankTable,    // shm: the node's rank list (m) and the local peer list (m - 1)
    ShmBuffers,      // shm: decoder reassembly buffers
    SendQueues,      // messages queued for sending (all transports), with copied headers/payloads
    SelfTransport,   // self: queue and gather buffer
    Bootstrap,       // the bootstrap wrapper; LLC_KVS=dist: the leader's KVS share and the address cache
    RingPool,       // hybrid: the rings this process holds of the node's ring pool, and the pool's header (its creator)
    ReceiveHistory, // hybrid (receiver driver): per tracked source, its receive counts per period (receive_history.hpp)
    TaggedUnexpected, // tagged: unexpected-message records waiting for their receive, and those kept for reuse
    Count
};

struct MemComponentInfo {
    const char *name;
    const char *paper;       // component of the paper's model
    uint32_t flags;          // LLC_MEM_SHARED / LLC_MEM_N_SIZED
    const char *description;
};

// Static description of a component.
const MemComponentInfo &mem_component_info(MemComponent c);

class MemRegistry {
public:
    struct Entry {
        uint64_t bytes = 0;
        uint64_t items = 0;
    };
    void add(MemComponent c, uint64_t bytes, uint64_t items = 0)
    {
        Entry &e = entries_[size_t(c)];
        e.bytes += bytes;
        e.items += items;
    }
    const Entry &get(MemComponent c) const { return entries_[size_t(c)]; }
    // Sum over the components not flagged LLC_MEM_SHARED.
    uint64_t total() const;
    // Copy into the C API's entries; returns the component count.
    int export_to(llc_mem_entry_t *out, int max) const;
    // A line of text printed after the table (e.g. where the rank table lives).
    void add_note(std::string note) { notes_.push_back(std::move(note)); }
    // One line per component, then a total line, then the notes, each prefixed "llc mem rank R:".
    std::string format(int rank) const;

private:
    std::array<Entry, size_t(MemComponent::Count)> entries_{};
    std::vector<std::string> notes_;
};

// sizeof of libllc's real structures, for the memory model (llc_memmodel).
// Each class fills in its own (its static struct_sizes).
struct StructSizes {
    size_t context;          // Context object (includes the handler table)
    size_t handler_table;    // the handler slots inside Context
    size_t self_transport, tcp_transport, shm_transport;
    size_t net_router;       // NetRouter (with any inter-node transport)
    size_t tcp_out_conn;     // TcpTransport::OutConn
    size_t tcp_in_conn;      // TcpTransport::InConn
    size_t stream_decoder;   // StreamDecoder (one per incoming stream)
    size_t shm_peer;         // ShmTransport::Peer
    size_t empty_deque_heap; // heap of an empty std::deque<unique_ptr<...>> (map + first node)
    size_t pointer;          // a table slot holding a pointer / unique_ptr
    size_t pollfd;
    size_t node_entry;       // node_of_rank entry
    size_t node_map_header;  // header of the node-shared rank -> node segment (padded)
    size_t tcp_out_entry;    // tcp: rank -> connection hash node (per destination sent to)
    size_t seq_entry;        // one sequence number
    size_t ring_control;     // RingControl (per ring, in the segment)
    size_t segment_header;   // segment header, padded to a cache line
    size_t outgoing_message; // OutgoingMessage (per queued record)
    size_t udp_transport;    // UdpTransport
    size_t udp_peer;         // UdpTransport::Peer (per peer talked to; all an idle peer keeps)
    size_t udp_peer_entry;   // its rank -> peer hash node and its slot in the peer list
    size_t udp_tx;           // UdpTransport::Tx (per peer with recent sends) with the heap of its two empty deques
    size_t udp_tx_packet;    // UdpTransport::TxPacket (per unacknowledged datagram, in the deque)
    size_t udp_header;       // UdpHeader: a datagram buffer is udp_header + LLC_UDP_MTU bytes
    size_t udp_rx_buffer;    // the receive buffer (one per process)
    size_t udp_free_buffers; // most datagram buffers kept in the free pool
    size_t hybrid_route;     // hybrid: Context::Route in its table slot (per recently used destination, at most gamma)
    size_t hybrid_source;    // receiver-driven hybrid: Context::Source (receive history) in its table slot (same)
    size_t hybrid_table_per_cap; // either table, per unit of LLC_MAX_CONTEXTS: a bucket head and a predictor ghost
};

// Every record of a send queue (std::deque or std::vector of
// std::unique_ptr<OutgoingMessage>), into SendQueues.
template <class Queue> void account_queue(MemRegistry &r, const Queue &q)
{
    for (const auto &m : q)
        r.add(MemComponent::SendQueues, m->memory_bytes(), 1);
}

// What a context holds now (Context::account: the context, then each of its
// transports' account()), and the sizes above.
struct MemWalk {
    using StructSizes = llc::StructSizes;
    static MemRegistry measure(const Context &ctx);
    static StructSizes struct_sizes();
};

// Heap bytes of standard containers (used by the walk and by PeerTable).
template <class T> uint64_t heap_bytes(const std::vector<T> &v) { return uint64_t(v.capacity()) * sizeof(T); }
uint64_t heap_bytes(const std::string &s);
// libstdc++ std::deque: a map of node pointers (at least 8) and nodes of
// 512 bytes (or one element when larger), allocated even when empty.
template <class T> uint64_t heap_bytes(const std::deque<T> &d)
{
    const uint64_t node_elems = sizeof(T) < 512 ? 512 / sizeof(T) : 1;
    const uint64_t nodes = d.size() / node_elems + 1;
    const uint64_t map = nodes + 2 > 8 ? nodes + 2 : 8;
    return map * sizeof(T *) + nodes * node_elems * sizeof(T);
}

// One allocation per element of std::unordered_map and std::map: sizeof of
// libstdc++'s node types (a next pointer, the value, and the hash code where
// the hash is not "fast"; the red-black links and colour before the value).
// With another library: a node written out with a next pointer, the value and
// a hash code; a colour, three links and the value.
#if defined(__GLIBCXX__)
template <class K, class V, class H, class E, class A>
constexpr size_t hash_node_size(const std::unordered_map<K, V, H, E, A> *)
{
    return sizeof(std::__detail::_Hash_node<std::pair<const K, V>, std::__cache_default<K, H>::value>);
}
template <class K, class V, class C, class A> constexpr size_t tree_node_size(const std::map<K, V, C, A> *)
{
    return sizeof(std::_Rb_tree_node<std::pair<const K, V>>);
}
#else
template <class K, class V, class H, class E, class A>
constexpr size_t hash_node_size(const std::unordered_map<K, V, H, E, A> *)
{
    struct Node {
        void *next;
        std::pair<const K, V> value;
        size_t hash;
    };
    return sizeof(Node);
}
template <class K, class V, class C, class A> constexpr size_t tree_node_size(const std::map<K, V, C, A> *)
{
    struct Node {
        int colour;
        void *links[3];
        std::pair<const K, V> value;
    };
    return sizeof(Node);
}
#endif
// The bucket array (none while there is a single bucket: libstdc++ keeps it
// inside the object) and one node per element; not what the values own.
template <class K, class V, class H, class E, class A> uint64_t heap_bytes(const std::unordered_map<K, V, H, E, A> &m)
{
    const uint64_t buckets = m.bucket_count() > 1 ? uint64_t(m.bucket_count()) * sizeof(void *) : 0;
    return buckets + uint64_t(m.size()) * hash_node_size(&m);
}
// One node per element (the header is inside the object); not what the values own.
template <class K, class V, class C, class A> uint64_t heap_bytes(const std::map<K, V, C, A> &m)
{
    return uint64_t(m.size()) * tree_node_size(&m);
}

} // namespace llc
