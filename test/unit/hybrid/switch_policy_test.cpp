// switch_policy_test.cpp - the receiver-driven hybrid's policy as a pure
// unit: cost model and the per-period decisions (the receive history is in
// receive_history_test.cpp).
#include "transport/udp/switch_asks.hpp"
#include "hybrid/switch_policy.hpp"

#include <gtest/gtest.h>

#include <map>
#include <vector>

using llc::Channel;
using llc::CostModel;
using llc::SourceLoad;
using llc::SwitchDecision;
using llc::SwitchPolicy;

namespace {

constexpr uint64_t kPromote = 100; // small messages per period worth a slot

std::map<int, Channel> by_source(const std::vector<SwitchDecision> &ds)
{
    std::map<int, Channel> m;
    for (const SwitchDecision &d : ds) {
        EXPECT_EQ(m.count(d.source), 0u) << "source " << d.source << " decided twice";
        m[d.source] = d.want;
    }
    return m;
}

SourceLoad small(int source, double load, bool on_connected) { return SourceLoad{source, load, 0, on_connected}; }

TEST(CostModel, RingLandingIsTheConnectionlessChoiceForLargeMessagesOnly)
{
    CostModel m;
    EXPECT_EQ(m.best_connectionless(0), Channel::Connectionless);
    EXPECT_EQ(m.best_connectionless(1024), Channel::Connectionless);
    EXPECT_EQ(m.best_connectionless(64 * 1024), Channel::RingLanding);
    // RC is the cheapest everywhere with the defaults, and saves more per message as messages grow.
    for (double size : {0.0, 512.0, 8192.0, 1048576.0}) {
        EXPECT_LT(m.per_message_us(Channel::Connected, size), m.per_message_us(m.best_connectionless(size), size)) << size;
    }
    EXPECT_GT(m.connected_saving_us(64 * 1024), m.connected_saving_us(0));
    EXPECT_GT(m.connected_saving_us(0), 0);
}

TEST(SwitchPolicy, BusySourceIsPromotedAndQuietOneIsNot)
{
    SwitchPolicy p(CostModel{}, kPromote, 4);
    auto d = by_source(p.decide({small(1, kPromote * 1.5, false), small(2, kPromote * 0.5, false)}));
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d.at(1), Channel::Connected);
    EXPECT_GT(p.connected_gain(small(1, kPromote * 1.5, false)), 0);
    EXPECT_LT(p.connected_gain(small(2, kPromote * 0.5, false)), 0);
}

TEST(SwitchPolicy, QuietConnectedSourceIsDemotedToItsBestConnectionlessChannel)
{
    SwitchPolicy p(CostModel{}, kPromote, 4);
    auto d = by_source(p.decide({small(1, kPromote * 0.1, true), SourceLoad{2, 1, 256 * 1024, true},
                                 small(3, kPromote * 0.9, true)}));
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d.at(1), Channel::Connectionless);
    EXPECT_EQ(d.at(2), Channel::RingLanding); // few but large messages: modelled as DC RDMA (udp here)
    EXPECT_EQ(d.count(3), 0u);           // below the promotion level but above the demotion level: stays
}

TEST(SwitchPolicy, LargeMessagesNeedFewerToBePromoted)
{
    SwitchPolicy p(CostModel{}, kPromote, 4);
    SourceLoad big{1, kPromote / 4.0, 64 * 1024, false};
    SourceLoad tiny{2, kPromote / 4.0, 16, false};
    auto d = by_source(p.decide({big, tiny}));
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d.at(1), Channel::Connected);
}

TEST(SwitchPolicy, CapIsRespectedBusiestFirst)
{
    SwitchPolicy p(CostModel{}, kPromote, 2);
    auto d = by_source(p.decide({small(1, kPromote * 2, false), small(2, kPromote * 5, false),
                                 small(3, kPromote * 3, false), small(4, kPromote * 1.2, false)}));
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d.at(2), Channel::Connected);
    EXPECT_EQ(d.at(3), Channel::Connected);

    // One slot already used (by a source not half as busy as the next
    // candidate): only the busiest candidate gets the other.
    d = by_source(p.decide({small(9, kPromote * 2, true), small(2, kPromote * 5, false),
                            small(3, kPromote * 3, false)}));
    EXPECT_EQ(d.size(), 1u);
    EXPECT_EQ(d.at(2), Channel::Connected);
}

TEST(SwitchPolicy, NoSlotsMeansNoPromotion)
{
    SwitchPolicy p(CostModel{}, kPromote, 0);
    EXPECT_TRUE(p.decide({small(1, kPromote * 100, false)}).empty());
}

TEST(SwitchPolicy, MuchBusierSourceEvictsTheLeastBusyConnectedSource)
{
    SwitchPolicy p(CostModel{}, kPromote, 2);
    // Full with 1 (2x) and 2 (4x); 3 at 5x is not twice as busy as 1: no change.
    EXPECT_TRUE(p.decide({small(1, kPromote * 2, true), small(2, kPromote * 4, true), small(3, kPromote * 3.9, false)})
                    .empty());
    // 3 at 5x is: 1 (the least busy) goes, 3 comes; 2 stays.
    auto d = by_source(
        p.decide({small(1, kPromote * 2, true), small(2, kPromote * 4, true), small(3, kPromote * 5, false)}));
    ASSERT_EQ(d.size(), 2u);
    EXPECT_EQ(d.at(1), Channel::Connectionless);
    EXPECT_EQ(d.at(3), Channel::Connected);
    // Two much busier candidates evict both.
    d = by_source(p.decide({small(1, kPromote * 2, true), small(2, kPromote * 4, true), small(3, kPromote * 9, false),
                            small(4, kPromote * 10, false)}));
    ASSERT_EQ(d.size(), 4u);
    EXPECT_EQ(d.at(1), Channel::Connectionless);
    EXPECT_EQ(d.at(2), Channel::Connectionless);
    EXPECT_EQ(d.at(3), Channel::Connected);
    EXPECT_EQ(d.at(4), Channel::Connected);
}

TEST(SwitchPolicy, OverTheCapKeepsTheBusiest)
{
    SwitchPolicy p(CostModel{}, kPromote, 1);
    auto d = by_source(p.decide({small(1, kPromote * 3, true), small(2, kPromote * 2, true)}));
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d.at(2), Channel::Connectionless);
}

// A source whose load hovers around the promotion level is promoted once
// and then stays: the demotion level is a quarter of the promotion level.
TEST(SwitchPolicy, HoveringAtTheThresholdDoesNotFlap)
{
    SwitchPolicy p(CostModel{}, kPromote, 1);
    bool on_connected = false;
    int switches = 0;
    const double factors[] = {0.95, 1.05, 0.9, 1.1, 0.8, 1.0, 0.7, 1.2, 0.6, 0.99, 1.01, 0.5, 1.3};
    for (int round = 0; round < 4; round++) {
        for (double f : factors) {
            auto d = by_source(p.decide({small(7, kPromote * f, on_connected)}));
            if (d.count(7)) {
                bool want_connected = d.at(7) == Channel::Connected;
                EXPECT_NE(want_connected, on_connected) << "asked for the path it is on";
                on_connected = want_connected;
                switches++;
            }
        }
    }
    EXPECT_EQ(switches, 1);
    EXPECT_TRUE(on_connected);
    // It does go back once it is really quiet.
    auto d = by_source(p.decide({small(7, kPromote * 0.2, true)}));
    ASSERT_EQ(d.count(7), 1u);
    EXPECT_EQ(d.at(7), Channel::Connectionless);
}

} // namespace

// ------------------------------------------------------------ switch asks

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
    auto r = asks.due(1000000, timeout, [&](const llc::SwitchAsks::Ask &) { ADD_FAILURE() << "resent after its answer"; });
    EXPECT_EQ(r.resent + r.given_up, 0u);
}
