// peer_timeout_test.cpp - PeerTimeout, when a silent peer is taken for dead
// (tcp's and udp's rule): strictly longer than the timeout, and never for a
// moment later than now.
#include "transport/peer_timeout.hpp"

#include <gtest/gtest.h>

#include <cstdint>

using llc::PeerTimeout;

TEST(PeerTimeout, DeadOnlyAfterMoreThanTheTimeoutOfSilence)
{
    PeerTimeout t(10000);
    EXPECT_EQ(t.ms(), 10000u);
    EXPECT_EQ(t.us(), 10000000u);
    const uint64_t since = 5000000;
    EXPECT_FALSE(t.expired(since, since));
    EXPECT_FALSE(t.expired(since, since + 10000000)) << "exactly the timeout: still alive";
    EXPECT_TRUE(t.expired(since, since + 10000001));
    EXPECT_EQ(PeerTimeout::silent_ms(since, since + 10000999), 10000u) << "whole milliseconds";
}

TEST(PeerTimeout, AMomentAfterNowIsNoSilence)
{
    PeerTimeout t(1);
    // Heard from after the progress call read its clock: not 2^64 us ago.
    EXPECT_FALSE(t.expired(2000, 1000));
    EXPECT_EQ(PeerTimeout::silent_ms(2000, 1000), 0u);
    EXPECT_FALSE(t.expired(0, 0));
    EXPECT_TRUE(t.expired(0, 1001));
}

TEST(PeerTimeout, ZeroTimeoutTakesAnySilenceForDeath)
{
    PeerTimeout t(0);
    EXPECT_FALSE(t.expired(7, 7));
    EXPECT_TRUE(t.expired(7, 8));
}
