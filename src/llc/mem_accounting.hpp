// mem_accounting.hpp - bytes held by a libllc context, per component.
//
// The registry is filled by walking the context's real structures when asked
// (llc_mem_report, LLC_MEM_REPORT=1 at finalize): sizeof of every object
// times its count, capacity() of vectors and strings that live on the heap,
// the map and nodes of std::deque (libstdc++ layout), and the mapped size of
// shared-memory segments.  Nothing is estimated from constants, so the
// numbers move as soon as a peer is used.  See doc/memory.md.
//
// Every component says which component of the paper's per-node memory model
// (SEEDS.md section 2, paper 001) it corresponds to.
#pragma once

#include "llc.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace llc {

class Context;
class OutgoingMessage;
class StreamDecoder;

enum class MemComponent : int {
    Context,         // the Context and transport objects, error strings, completion list
    HandlerTable,    // the 64 AM handler slots
    RankTable,       // node_of_rank: rank -> node (n entries)
    SeqNumbers,      // next_send_seq_/next_recv_seq_: per-peer ordering state (2 x n)
    TcpRankTable,    // tcp: rank -> connection pointer table (n entries)
    TcpConnState,    // tcp: per-connection objects (out and in), their strings, queues, decoders
    TcpBuffers,      // tcp: staging buffer, decoder reassembly buffers, poll set
    ShmSegment,      // shm: this process's segment (header + one receive ring per local process)
    ShmPeerMappings, // shm: the peers' segments mapped here (their pages; LLC_MEM_SHARED)
    ShmPeerState,    // shm: per-local-peer objects, queues, decoders
    ShmRankTable,    // shm: rank -> local peer table (n entries) and local rank list
    ShmBuffers,      // shm: decoder reassembly buffers, CMA receive buffers
    SendQueues,      // messages queued for sending (all transports), with copied headers/payloads
    SelfTransport,   // self: queue and gather buffer
    Bootstrap,       // the bootstrap wrapper; LLC_KVS=dist: the leader's KVS share and the address cache
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
    // One line per component, then a total line, each prefixed "llc mem rank R:".
    std::string format(int rank) const;

private:
    std::array<Entry, size_t(MemComponent::Count)> entries_{};
};

// Walk a context (friend of Context, the transports, StreamDecoder and
// OutgoingMessage) and count what it holds now.
struct MemWalk {
    static MemRegistry measure(const Context &ctx);
    // Heap and object bytes of one queued record / of a decoder's buffers.
    static uint64_t message_bytes(const OutgoingMessage &m);
    static uint64_t decoder_bytes(const StreamDecoder &d);

    // sizeof of libllc's real structures, for the memory model (llc_memmodel).
    struct StructSizes {
        size_t context;          // Context object (includes the handler table)
        size_t handler_table;    // the handler slots inside Context
        size_t self_transport, tcp_transport, shm_transport;
        size_t tcp_out_conn;     // TcpTransport::OutConn
        size_t tcp_in_conn;      // TcpTransport::InConn
        size_t stream_decoder;   // StreamDecoder (one per incoming stream)
        size_t shm_peer;         // ShmTransport::Peer
        size_t empty_deque_heap; // heap of an empty std::deque<unique_ptr<...>> (map + first node)
        size_t pointer;          // a table slot holding a pointer / unique_ptr
        size_t pollfd;
        size_t node_entry;       // node_of_rank entry
        size_t seq_entry;        // one sequence number
        size_t ring_control;     // RingControl (per ring, in the segment)
        size_t segment_header;   // segment header, padded to a cache line
        size_t outgoing_message; // OutgoingMessage (per queued record)
    };
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

} // namespace llc
