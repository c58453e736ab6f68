// switch_asks_test.cpp - the switching channel's pending asks
// (switch_asks.hpp) as a pure unit: a newer ask replaces the pending one,
// only its answer counts, and an unanswered ask is resent with backoff until
// it is given up.
#include "transport/udp/switch_asks.hpp"

#include <gtest/gtest.h>

#include <netinet/in.h>

#include <cstdint>
#include <vector>

namespace {
sockaddr_in addr_with_port(uint16_t port)
{
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = port;
    return a;
}
} // namespace

TEST(SwitchAsks, ANewerAskReplacesThePendingOneAndOnlyItsAnswerCounts)
{
    llc::SwitchAsks asks;
    asks.add(5, 1, 1, addr_with_port(1), 0);
    asks.add(6, 1, 1, addr_with_port(2), 0);
    asks.add(5, 3, 0, addr_with_port(1), 10);
    EXPECT_EQ(asks.size(), 2u);
    EXPECT_FALSE(asks.answered(5, 1)) << "the answer to the replaced ask";
    EXPECT_FALSE(asks.answered(6, 3)) << "right number, wrong source";
    EXPECT_TRUE(asks.answered(5, 3));
    EXPECT_FALSE(asks.answered(5, 3)) << "a repeated answer";
    EXPECT_EQ(asks.size(), 1u);
    asks.drop(6);
    asks.drop(6);
    EXPECT_TRUE(asks.empty());
}

TEST(SwitchAsks, ResentWithBackoffUntilAnsweredOrGivenUp)
{
    llc::SwitchAsks asks;
    asks.add(2, 7, 1, addr_with_port(9), 1000);
    auto timeout = [](const llc::SwitchAsks::Ask &a) { return uint64_t(100) << a.retries; };
    std::vector<uint64_t> resent_at;
    auto resend = [&](const llc::SwitchAsks::Ask &a) {
        EXPECT_EQ(a.dest, 2);
        EXPECT_EQ(a.number, 7u);
        EXPECT_EQ(a.want, 1u);
        EXPECT_EQ(a.addr.sin_port, 9);
    };
    uint64_t now = 1000;
    size_t given_up = 0;
    for (; now < 1000 + 200000 && !asks.empty(); now += 10) {
        auto r = asks.due(now, timeout, [&](const llc::SwitchAsks::Ask &a) {
            resend(a);
            resent_at.push_back(now);
        });
        given_up += r.given_up;
    }
    ASSERT_EQ(resent_at.size(), size_t(llc::SwitchAsks::kMaxRetries));
    EXPECT_EQ(given_up, 1u);
    EXPECT_EQ(resent_at[0], 1100u) << "first resend after the base timeout";
    for (size_t i = 1; i < resent_at.size(); i++)
        EXPECT_EQ(resent_at[i] - resent_at[i - 1], uint64_t(100) << i) << "doubling";

    // Answered: never resent again.
    asks.add(3, 8, 0, addr_with_port(1), 0);
    EXPECT_TRUE(asks.answered(3, 8));
    auto r =
        asks.due(1000000, timeout, [&](const llc::SwitchAsks::Ask &) { ADD_FAILURE() << "resent after its answer"; });
    EXPECT_EQ(r.resent + r.given_up, 0u);
}
