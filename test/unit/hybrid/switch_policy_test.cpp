// switch_policy_test.cpp - the receiver-driven hybrid's policy as a pure
// unit: cost model and the per-period decisions (the receive history is in
// receive_history_test.cpp).
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
