// am_protocol.hpp - the wire format shared by the shm and tcp byte streams.
//
// Every record is a WireHeader followed by hdr_len bytes of AM header,
// aux_len bytes of control data, and (for Kind::Am only) payload_len bytes of
// payload.  Streams are per ordered pair of processes, so records never
// interleave.  All fields are in host byte order: the format assumes a
// homogeneous job.
#pragma once

#include <cstdint>
#include <type_traits>

namespace llc {

constexpr uint32_t kWireMagic = 0x314c4c43; // "CLL1" in little-endian memory order
// 4: verbs' VerbsRts records and RndvFin frames gone (large active messages
// to a verbs peer take the tagged layer's AmRts too, with keyed spans read
// by RDMA READ; AmRtsWire grew a flags word), and the split copy's records
// (kTagSplit, kTagPutSplit, kTagWritten) after kTagAmRts, the one-sided ids
// moved up by three behind them, 24 internal handler ids; 3: shm's CmaRts,
// CmaAck and CmaNack gone (large active messages take the
// tagged layer's rendezvous, kTagAmRts, and the one-sided handler ids moved up
// by one behind it); 2: record kinds moved into their owners' ranges (below);
// 1: kinds 1 .. 12 in the order Am, CmaRts, CmaAck, CmaNack, Hello, Goodbye,
// Switch, SwitchAck, StreamAck, SwitchRequest, Close, VerbsRts.
constexpr uint8_t kWireVersion = 4;
constexpr uint32_t kMaxAuxBytes = 1u << 24;
// Handler ids: 0 .. LLC_AM_MAX_HANDLERS-1 are the caller's, the next
// kInternalHandlers libllc's own (the tagged protocol, tagged.hpp; then
// one-sided put/get, rma/rma_wire.hpp).
constexpr unsigned kPublicHandlers = 64; // LLC_AM_MAX_HANDLERS
constexpr unsigned kInternalHandlers = 24;
constexpr unsigned kHandlerSlots = kPublicHandlers + kInternalHandlers;

// Record kinds.  Each owner has a private range of 16 kinds, so that a
// transport adds a control record of its own without looking at anyone
// else's; each kind is checked below to lie in its owner's range.
//   0x01-0x0f core: records of every stream (the tagged protocol, its
//             rendezvous for large active messages included, travels in Am
//             records on libllc's internal handlers and has no kinds of its own)
//   0x10-0x1f shm: none (0x10-0x12 were its single-copy records until
//             version 3: never reuse them)
//   0x20-0x2f tcp: the connection's own records
//   0x30-0x3f udp: none yet (its datagrams have types of their own, UdpType
//             in udp_transport.hpp, and carry a stream of these records)
//   0x40-0x4f verbs: none (0x40 was its VerbsRts until version 4: never reuse it)
//   0x50-0x5f the hybrid router: moving a pair between tcp and udp
// 0 and 0x60-0xff belong to no one; a record of a kind not listed in Kind is
// a protocol error (kind_is_valid).
struct KindRange {
    uint8_t first;
    uint8_t last;
    constexpr bool holds(uint8_t k) const { return k >= first && k <= last; }
};
constexpr KindRange kCoreKinds{0x01, 0x0f};
constexpr KindRange kShmKinds{0x10, 0x1f};
constexpr KindRange kTcpKinds{0x20, 0x2f};
constexpr KindRange kUdpKinds{0x30, 0x3f};
constexpr KindRange kVerbsKinds{0x40, 0x4f};
constexpr KindRange kHybridKinds{0x50, 0x5f};

enum class Kind : uint8_t {
    // core (kCoreKinds)
    Am = 0x01,      // active message with payload in the stream
    Goodbye = 0x02, // sender is finalizing; no further records follow
    // tcp (kTcpKinds)
    Hello = 0x20,     // first record on a tcp connection; aux = sender's "ip:port"
    StreamAck = 0x21, // sent back on an accepted connection; seq = bytes of the stream consumed so far
    Close = 0x22,     // last record of an evicted connection; seq = stream bytes before it
    // hybrid (kHybridKinds)
    Switch = 0x50,       // last record on the tcp path before the sender moves to udp
    SwitchAck = 0x51,    // sent on udp by the receiver of a Switch (the tcp path is drained)
    SwitchRequest = 0x52 // retired (switch asks are udp datagrams of their own now, switch_asks.hpp); never sent
};

static_assert(kCoreKinds.last < kShmKinds.first && kShmKinds.last < kTcpKinds.first &&
                  kTcpKinds.last < kUdpKinds.first && kUdpKinds.last < kVerbsKinds.first &&
                  kVerbsKinds.last < kHybridKinds.first,
              "the owners' ranges of record kinds do not overlap");

// The range of the owner of kind k, which says which kinds there are:
// {0, 0} for a byte that is none.  (A kind added to Kind and not here is a
// -Wswitch warning.)
constexpr KindRange kind_owner_range(Kind k)
{
    switch (k) {
    case Kind::Am:
    case Kind::Goodbye:
        return kCoreKinds;
    case Kind::Hello:
    case Kind::StreamAck:
    case Kind::Close:
        return kTcpKinds;
    case Kind::Switch:
    case Kind::SwitchAck:
    case Kind::SwitchRequest:
        return kHybridKinds;
    }
    return KindRange{0, 0};
}

// Whether k is one of the kinds above.
constexpr bool kind_is_valid(uint8_t k) { return kind_owner_range(Kind(k)).last != 0; }

constexpr bool every_kind_lies_in_its_owners_range()
{
    for (unsigned k = 0; k < 256; k++)
        if (kind_is_valid(uint8_t(k)) && !kind_owner_range(Kind(k)).holds(uint8_t(k)))
            return false;
    return true;
}
static_assert(every_kind_lies_in_its_owners_range(), "a record kind lies outside its owner's range");

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
    uint64_t seq; // per ordered pair, counts Am records;
                  // StreamAck: cumulative bytes of the stream read by its receiver
};
static_assert(sizeof(WireHeader) == 40, "wire header layout");
static_assert(std::is_trivially_copyable<WireHeader>::value, "wire header is copied bytewise");

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
