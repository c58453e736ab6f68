// udp_ring_landing_test.cpp - the slot and credit bookkeeping of ring
// landing (udp_ring_landing.hpp) alone: datagrams land in the slot their psn
// names and free it when consumed, the sender's credits are the slots, and a
// sender keeping its credits never finds its slot taken.  The switch into
// ring addressing and back, with real processes, is in
// test/unit/hybrid/ring_landing_test.cpp.
#include "common/test_util.hpp"
#include "transport/udp/udp_ring_landing.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

TEST(RingLandingSlots, DatagramsLandInTheirSlotAndFreeItWhenConsumed)
{
    std::vector<char> ring(4 * 1024);
    llc::UdpRingLanding l(ring.data(), 4, 1024);
    const char a[] = "alpha", b[] = "bravo";
    // rx_next 10: psn 10..13 may land, in slot psn mod 4.
    EXPECT_TRUE(l.fits(13, 1, sizeof(b), 10));
    EXPECT_FALSE(l.fits(13, 2, sizeof(b), 10)) << "the header names another slot than psn mod slots";
    EXPECT_FALSE(l.fits(14, 2, 10, 10)) << "beyond the slots ahead of the next psn to deliver";
    EXPECT_FALSE(l.fits(9, 1, 10, 10)) << "already delivered";
    EXPECT_FALSE(l.fits(12, 0, 1025, 10)) << "more than a slot";
    l.land(13, b, sizeof(b));
    EXPECT_TRUE(l.holds(13));
    EXPECT_FALSE(l.holds(9)) << "same slot, other psn";
    EXPECT_EQ(ring.data() + 1 * 1024, [&] {
        size_t n;
        return l.find(13, n);
    }()) << "slot 1 of the ring";
    EXPECT_EQ(l.sack_bits(10), uint64_t(1) << 2) << "psn 13 = rx_next + 1 + 2";
    l.land(10, a, sizeof(a));
    EXPECT_EQ(l.occupied(), 2u);
    size_t n = 0;
    const char *d = l.find(10, n);
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(n, sizeof(a));
    EXPECT_STREQ(d, "alpha");
    l.release(10); // fed: the slot is free (the ack after rx_next = 11 credits it)
    EXPECT_FALSE(l.holds(10));
    EXPECT_EQ(l.occupied(), 1u);
    // psn 14 reuses slot 2 only once rx_next passed 10 (here 11): it fits.
    EXPECT_TRUE(l.fits(14, 2, 10, 11));
    EXPECT_FALSE(l.fits(17, 1, 10, 14)) << "slot 1 still holds psn 13";
    std::vector<uint64_t> drained;
    l.drain([&](uint64_t psn, const char *data, size_t len) {
        drained.push_back(psn);
        EXPECT_EQ(len, sizeof(b));
        EXPECT_STREQ(data, "bravo");
    });
    EXPECT_EQ(drained, std::vector<uint64_t>{13});
    EXPECT_EQ(l.occupied(), 0u);
    EXPECT_EQ(l.sack_bits(10), 0u);
}

TEST(RingLandingSlots, SenderCreditsAreTheSlots)
{
    llc::RingAddressing plain;
    EXPECT_FALSE(plain.on());
    EXPECT_EQ(plain.window(64), 64u);
    EXPECT_EQ(plain.payload_cap(16384), 16384u);
    llc::RingAddressing ring{16, 4096};
    EXPECT_EQ(ring.window(64), 16u) << "one datagram in flight per slot";
    EXPECT_EQ(ring.window(8), 8u) << "a smaller socket window still rules";
    EXPECT_EQ(ring.payload_cap(16384), 4096u) << "one slot of bytes per datagram";
    EXPECT_EQ(ring.payload_cap(1500), 1500u);
    EXPECT_EQ(ring.slot_of(33), 1u);
    llc::RingAddressing back = llc::RingAddressing::unpack(ring.pack());
    EXPECT_EQ(back.slots, 16u);
    EXPECT_EQ(back.slot_bytes, 4096u);
    EXPECT_TRUE(back.valid());
    EXPECT_FALSE((llc::RingAddressing{16, 3000}).valid());
    EXPECT_FALSE((llc::RingAddressing{0, 4096}).valid());
    EXPECT_FALSE(llc::RingAddressing::unpack(0).valid());
}

// With credits as the sender keeps them (at most `slots` unacknowledged
// datagrams, a slot back with each cumulative ack) and datagrams arriving in
// any order, every datagram fits a free slot and delivery in psn order
// frees them: the invariant the receiver's checks rely on.
TEST(RingLandingSlots, CreditedSenderNeverFindsItsSlotTaken)
{
    const size_t slots = 8;
    std::vector<char> ring(slots * 1024);
    llc::UdpRingLanding l(ring.data(), slots, 1024);
    llc::RingAddressing addr{uint32_t(slots), 1024};
    uint64_t next_psn = 0, acked = 0, rx_next = 0;
    std::vector<uint64_t> in_flight;
    uint64_t rng = 12345, delivered = 0;
    for (int step = 0; step < 20000; step++) {
        rng = llctest::mix64(rng);
        if (next_psn - acked < addr.window(64) && rng % 3 != 0) {
            in_flight.push_back(next_psn++);
            continue;
        }
        if (in_flight.empty()) {
            acked = rx_next; // an ack reaches the sender
            continue;
        }
        size_t i = size_t(rng >> 8) % in_flight.size(); // any order
        uint64_t psn = in_flight[i];
        in_flight.erase(in_flight.begin() + long(i));
        char byte = char(psn);
        ASSERT_TRUE(l.fits(psn, addr.slot_of(psn), 1, rx_next)) << "psn " << psn << " rx_next " << rx_next;
        l.land(psn, &byte, 1);
        size_t n;
        while (const char *d = l.find(rx_next, n)) {
            ASSERT_EQ(*d, char(rx_next));
            l.release(rx_next++);
            delivered++;
        }
        if (rng % 5 == 0)
            acked = rx_next;
    }
    EXPECT_GT(delivered, 5000u);
}
