// am_protocol.hpp - the wire format shared by the shm and tcp byte streams.
//
// Every record is a WireHeader followed by hdr_len bytes of AM header,
// aux_len bytes of control data, and (for Kind::Am only) payload_len bytes of
// payload.  Streams are per ordered pair of processes, so records never
// interleave.  All fields are in host byte order: v1 assumes a homogeneous job.
#pragma once

#include <cstdint>
#include <type_traits>

namespace llc {

constexpr uint32_t kWireMagic = 0x314c4c43; // "CLL1" in little-endian memory order
constexpr uint8_t kWireVersion = 1;
constexpr uint32_t kMaxAuxBytes = 1u << 24;
// Handler ids: 0 .. LLC_AM_MAX_HANDLERS-1 are the caller's, the next
// kInternalHandlers libllc's own (the tagged protocol, tagged.hpp).
constexpr unsigned kPublicHandlers = 64; // LLC_AM_MAX_HANDLERS
constexpr unsigned kInternalHandlers = 16;
constexpr unsigned kHandlerSlots = kPublicHandlers + kInternalHandlers;

enum class Kind : uint8_t {
    Am = 1,       // active message with payload in the stream
    CmaRts = 2,   // active message whose payload the receiver reads with process_vm_readv; aux = CmaDescriptor
    CmaAck = 3,   // receiver read the payload of the CmaRts with sequence number `seq`
    CmaNack = 4,  // receiver could not read it: the sender streams the payload instead
    Hello = 5,    // first record on a tcp connection; aux = sender's "ip:port"
    Goodbye = 6,  // sender is finalizing; no further records follow
    Switch = 7,   // hybrid: last record on the tcp path before the sender moves to udp
    SwitchAck = 8, // hybrid: sent on udp by the receiver of a Switch (the tcp path is drained)
    StreamAck = 9, // tcp: sent back on an accepted connection; seq = bytes of the stream consumed so far
    SwitchRequest = 10, // retired (switch asks are udp datagrams of their own now, switch_asks.hpp); never sent
    Close = 11,    // tcp: last record of an evicted connection; seq = stream bytes before it
    VerbsRts = 12  // verbs: active message whose payload the receiver reads with RDMA READ
                   // (rendezvous); aux = VerbsRtsDescriptor + segments (verbs_frame.hpp)
};

// A switch ask's `ack` (once the seq of the retired SwitchRequest): the path the receiver wants the source to send on.
enum class SwitchWant : uint64_t {
    Udp = 0,    // DC class, plain datagrams (the DC channel); also ends ring addressing
    Tcp = 1,    // RC class
    UdpRing = 2 // DC class, datagrams addressed to a ring leased for the source (DC RDMA, udp_ring_landing.hpp)
};

// The source's answer, carried back in the SwitchAnswer datagram.
enum class SwitchVerdict : uint8_t {
    Accepted = 1, // it sends on the wanted path now or is switching to it
    Refused = 2   // it will not (its connected slots are full, it is finalizing, it is not a receiver-driven hybrid)
};

struct WireHeader {
    uint32_t magic;
    uint8_t version;
    uint8_t kind;
    uint16_t handler;
    int32_t src;
    uint32_t hdr_len;
    uint32_t aux_len;
    uint32_t reserved;
    uint64_t payload_len;
    uint64_t seq; // per ordered pair, counts Am/CmaRts records; Ack/Nack echo the Rts's seq;
                  // StreamAck: cumulative bytes of the stream read by its receiver
};
static_assert(sizeof(WireHeader) == 40, "wire header layout");
static_assert(std::is_trivially_copyable<WireHeader>::value, "wire header is copied bytewise");

inline bool kind_is_valid(uint8_t k) { return k >= uint8_t(Kind::Am) && k <= uint8_t(Kind::VerbsRts); }
// Whether payload_len bytes of payload follow in the stream.
inline bool kind_streams_payload(Kind k) { return k == Kind::Am; }

inline WireHeader make_wire_header(Kind kind, int src, unsigned handler, uint64_t seq)
{
    WireHeader w{};
    w.magic = kWireMagic;
    w.version = kWireVersion;
    w.kind = uint8_t(kind);
    w.handler = uint16_t(handler);
    w.src = src;
    w.seq = seq;
    return w;
}

// aux of a CmaRts record: this, then `segments` CmaSegment entries.
struct CmaDescriptor {
    int32_t pid;
    uint32_t segments;
};
struct CmaSegment {
    uint64_t addr;
    uint64_t len;
};

// A small tagged message that is not synchronous, sent through a shared-memory
// ring as a message chunk of its own (shm_ring.hpp): this header and the
// payload, without a WireHeader or a TagWire.  It counts as an Am record in
// the pair's sequence: seq is the low 32 bits of its sequence number.
struct TagChunkHeader {
    uint64_t tag;
    uint32_t source;
    uint32_t seq;
};
static_assert(sizeof(TagChunkHeader) == 16, "shm tagged header layout");

} // namespace llc
