// udp_ring_landing.hpp - DC RDMA over sockets: a source's udp datagrams
// addressed to the slots of a ring its receiver leased for it.
//
// The paper's third channel: a source that sends large messages through the
// connectionless DC class writes them into a ring buffer its receiver
// leased for it (no connection, no RC slot), flow-controlled by the ring's
// slots.  Here the source stays on udp; once its receiver asked it to
// (SwitchWant::UdpRing, with the ring's geometry), every data datagram it
// sends to that receiver is "ring-addressed": at most one ring slot of
// stream bytes, slot index = psn mod slots in the header, and at most
// `slots` datagrams unacknowledged (RingAddressing).  The receiver copies
// each ring-addressed datagram into its slot (UdpRingLanding) and feeds the
// stream decoder from there, in psn order; a slot is free again once its
// datagram has been fed, which the cumulative acknowledgement tells the
// sender: the ack is the credit.
//
// Pure bookkeeping (no socket, no pool): UdpTransport owns one landing per
// source whose ring it was given, and one RingAddressing per destination
// that asked for it.  See doc/libllc-hybrid.md, "DC RDMA".
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace llc {

// Send side: how datagrams to one receiver are addressed.  slots == 0: plain.
struct RingAddressing {
    uint32_t slots = 0;
    uint32_t slot_bytes = 0;

    bool on() const { return slots != 0; }
    // The unacknowledged datagrams allowed: the socket window, and with a
    // ring no more than its slots (each in-flight datagram owns one slot).
    size_t window(size_t base) const { return on() && slots < base ? slots : base; }
    // Stream bytes per datagram: one slot at most.
    size_t payload_cap(size_t mtu) const { return on() && slot_bytes < mtu ? slot_bytes : mtu; }
    uint32_t slot_of(uint64_t psn) const { return uint32_t(psn % slots); }

    // The geometry travels in one 64-bit field of the ask (slots << 32 | slot bytes).
    uint64_t pack() const { return uint64_t(slots) << 32 | slot_bytes; }
    static RingAddressing unpack(uint64_t v) { return RingAddressing{uint32_t(v >> 32), uint32_t(v)}; }
    // What a sender accepts: the receiver's LLC_RING_SLOTS / LLC_RING_SLOT_BYTES ranges.
    bool valid() const
    {
        return slots >= 1 && slots <= 4096 && slot_bytes >= 1024 && slot_bytes <= (1u << 20) &&
               (slot_bytes & (slot_bytes - 1)) == 0;
    }
};

// Receive side: which datagram (psn) occupies each slot of one leased ring.
class UdpRingLanding {
public:
    UdpRingLanding(char *base, size_t slots, size_t slot_bytes);

    char *base() const { return base_; }
    size_t slots() const { return psn_.size(); }
    size_t slot_bytes() const { return slot_bytes_; }

    // Whether datagram psn (ring slot `slot` by its header, len stream
    // bytes) may land: the slot is psn's, it is free, the bytes fit, and psn
    // is within `slots` of the next one to deliver (rx_next), so that no two
    // datagrams held at once share a slot whatever the sender did.
    bool fits(uint64_t psn, uint32_t slot, size_t len, uint64_t rx_next) const;
    // Copy the datagram's stream bytes into its slot (fits() was true).
    void land(uint64_t psn, const char *data, size_t len);
    bool holds(uint64_t psn) const;
    // The bytes of datagram psn if it is in the ring (len set), else nullptr.
    const char *find(uint64_t psn, size_t &len) const;
    // Its bytes were fed to the decoder: the slot is free (the sender learns
    // it from the next cumulative acknowledgement).
    void release(uint64_t psn);
    size_t occupied() const { return occupied_; }
    // Selective-acknowledgement bits of what the ring holds (bit i: psn
    // rx_next + 1 + i), to be or-ed with those of the early-datagram map.
    uint64_t sack_bits(uint64_t rx_next) const;

    // Every datagram still held, in no particular order, then empty: before
    // the ring goes back to the pool they are copied elsewhere.
    template <class Fn>
    void drain(Fn fn)
    {
        for (size_t s = 0; s < psn_.size(); s++) {
            if (psn_[s] == kEmpty)
                continue;
            fn(psn_[s], base_ + s * slot_bytes_, size_t(len_[s]));
            psn_[s] = kEmpty;
        }
        occupied_ = 0;
    }
    void clear(); // the stream restarted: whatever is held belongs to nothing

    size_t state_bytes() const { return psn_.capacity() * sizeof(uint64_t) + len_.capacity() * sizeof(uint32_t); }

private:
    static constexpr uint64_t kEmpty = UINT64_MAX;
    char *base_;
    size_t slot_bytes_;
    std::vector<uint64_t> psn_; // per slot: the datagram in it, kEmpty if free
    std::vector<uint32_t> len_;
    size_t occupied_ = 0;
};

} // namespace llc
