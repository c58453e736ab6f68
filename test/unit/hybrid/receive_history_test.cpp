// receive_history_test.cpp - one source's receive history as a pure unit:
// the paper's number of periods, the short-term load, and the recurrence
// predictor that reads the long history; and the policy acting on it.
#include "hybrid/receive_history.hpp"
#include "hybrid/switch_policy.hpp"

#include <gtest/gtest.h>

#include <vector>

using llc::history_periods;
using llc::ReceiveHistory;

namespace {

// n periods, each with the given number of messages of 100 bytes.
void feed(ReceiveHistory &h, const std::vector<uint64_t> &per_period)
{
    for (uint64_t count : per_period) {
        for (uint64_t i = 0; i < count; i++)
            h.record(100);
        h.close_period();
    }
}

// A burst of `burst` messages in one period out of every `cycle`, for `cycles` cycles.
std::vector<uint64_t> bursts(size_t cycle, uint64_t burst, size_t cycles)
{
    std::vector<uint64_t> v;
    for (size_t c = 0; c < cycles; c++)
        for (size_t i = 0; i < cycle; i++)
            v.push_back(i == 0 ? burst : 0);
    return v;
}

} // namespace

TEST(ReceiveHistory, PeriodsFollowThePapersFormula)
{
    EXPECT_EQ(history_periods(1), 1024u);
    EXPECT_EQ(history_periods(4), 1024u);
    EXPECT_EQ(history_periods(8192), 1024u);    // 2^13
    EXPECT_EQ(history_periods(8193), 512u);     // ceil(log2 p) = 14
    EXPECT_EQ(history_periods(16384), 512u);
    EXPECT_EQ(history_periods(1u << 20), 8u);   // 1024 / 2^7
    EXPECT_EQ(history_periods(4u << 20), ReceiveHistory::kRecent); // 1024 / 2^9 = 2, kept at the short-term span
    EXPECT_EQ(history_periods(uint64_t(1) << 40), ReceiveHistory::kRecent);
    // p x periods x 8 bytes stays at 64 MiB from 2^13 up to 2^20 processes.
    for (unsigned lg = 13; lg <= 20; lg++)
        EXPECT_EQ((uint64_t(1) << lg) * history_periods(uint64_t(1) << lg) * 8, uint64_t(64) << 20) << lg;
}

TEST(ReceiveHistory, WeightsRecentPeriodsMoreAndForgetsOldOnes)
{
    ReceiveHistory h; // kRecent periods
    EXPECT_TRUE(h.quiet());
    for (int i = 0; i < 40; i++)
        h.record(100);
    EXPECT_EQ(h.current_count(), 40u);
    EXPECT_EQ(h.load(), 0); // the open period does not count yet
    EXPECT_EQ(h.load_now(), 40);
    h.close_period();
    EXPECT_EQ(h.load(), 40);
    for (int i = 0; i < 10; i++)
        h.record(1000);
    h.close_period();
    EXPECT_EQ(h.load(), 10 + 40 / 2.0);
    EXPECT_DOUBLE_EQ(h.mean_bytes(), (40 * 100 + 10 * 1000) / 50.0);
    EXPECT_FALSE(h.quiet());
    for (size_t i = 0; i < ReceiveHistory::kRecent - 2; i++)
        h.close_period();
    EXPECT_FALSE(h.quiet()); // the 10-message period is the oldest kept
    EXPECT_GT(h.load(), 0);
    h.close_period();
    EXPECT_TRUE(h.quiet());
    EXPECT_EQ(h.load(), 0);
    EXPECT_EQ(h.mean_bytes(), 0);
}

TEST(ReceiveHistory, KeepsEveryPeriodItWasSizedForOnceHeardTwice)
{
    ReceiveHistory h(history_periods(64));
    ASSERT_EQ(h.full_periods(), 1024u);
    EXPECT_EQ(h.periods(), ReceiveHistory::kRecent); // short until heard in a second period
    EXPECT_EQ(h.heap_bytes(), ReceiveHistory::kRecent * 8);
    for (int i = 0; i < 7; i++)
        h.record(8);
    EXPECT_EQ(h.periods(), ReceiveHistory::kRecent); // still one period
    h.close_period();
    h.record(8);
    ASSERT_EQ(h.periods(), 1024u);
    EXPECT_EQ(h.heap_bytes(), 1024u * 8);
    EXPECT_EQ(h.count_ago(1), 7u); // carried over from the short ring
    EXPECT_EQ(h.count_ago(0), 1u);
    for (int i = 0; i < 999; i++)
        h.close_period();
    EXPECT_EQ(h.count_ago(1000), 7u); // 1000 periods back
    EXPECT_EQ(h.load(), 0);           // the short-term load has long forgotten it
    for (int i = 0; i < 23; i++)
        h.close_period();
    EXPECT_EQ(h.count_ago(1023), 7u);
    h.close_period();
    EXPECT_EQ(h.count_ago(1024), 0u); // beyond the ring
    EXPECT_FALSE(h.quiet());          // the 1-message period is still in it
    h.close_period();
    EXPECT_TRUE(h.quiet());
}

TEST(ReceiveHistory, ASourceHeardInOnePeriodKeepsTheShortRing)
{
    ReceiveHistory h(1024);
    for (int i = 0; i < 500; i++)
        h.record(100);
    for (size_t i = 0; i < ReceiveHistory::kRecent - 1; i++) {
        h.close_period();
        EXPECT_FALSE(h.quiet()) << i;
    }
    EXPECT_EQ(h.heap_bytes(), ReceiveHistory::kRecent * 8);
    h.close_period();
    EXPECT_TRUE(h.quiet()); // forgotten after kRecent quiet periods, as before the long history
}

TEST(ReceiveHistory, RecurrencePredictsTheNextBurstOneCycleAfterTheLast)
{
    ReceiveHistory h(1024);
    feed(h, bursts(20, 500, 4)); // bursts 80, 60, 40 and 20 periods back; the open period is the next one due
    ReceiveHistory::Recurrence r = h.recurrence();
    EXPECT_EQ(r.cycle, 20u);
    EXPECT_EQ(r.count, 500u);
    EXPECT_EQ(h.load(), 0);               // the short-term load sees nothing
    EXPECT_EQ(h.predicted_load(), 500.0); // the long history does
    // One period later no burst is due: nothing predicted.
    h.close_period();
    EXPECT_EQ(h.recurrence().count, 0u);
    EXPECT_EQ(h.predicted_load(), 0);
    // The burst that came, a cycle after the last, keeps the cycle going.
    ReceiveHistory g(1024);
    feed(g, bursts(20, 500, 5));
    EXPECT_EQ(g.recurrence().cycle, 20u);
}

TEST(ReceiveHistory, RecurrenceNeedsThreeCyclesAndAQuietPeriod)
{
    // Two cycles only: not enough.
    ReceiveHistory two(1024);
    feed(two, bursts(10, 300, 2));
    EXPECT_EQ(two.recurrence().count, 0u);
    // Three, with a cycle longer than the short ring: the first burst had
    // left it when the second one made the ring grow, so two are known.
    ReceiveHistory three(1024);
    feed(three, bursts(10, 300, 3));
    EXPECT_EQ(three.recurrence().count, 0u);
    // Four: the bursts 10, 20 and 30 periods back line up with the open period.
    ReceiveHistory four(1024);
    feed(four, bursts(10, 300, 4));
    EXPECT_EQ(four.recurrence().cycle, 10u);
    EXPECT_EQ(four.recurrence().count, 300u);
    // A cycle within the short ring keeps its first burst: three suffice.
    ReceiveHistory short_cycle(1024);
    feed(short_cycle, bursts(3, 90, 3));
    EXPECT_EQ(short_cycle.recurrence().cycle, 3u);
    // A source busy in every period has no quiet period: no recurrence (load() covers it).
    ReceiveHistory steady(1024);
    feed(steady, std::vector<uint64_t>(200, 50));
    EXPECT_EQ(steady.recurrence().count, 0u);
    EXPECT_EQ(steady.predicted_load(), steady.load());
    // One long busy phase that ended is not a cycle, although periods one,
    // two and three "cycles" back line up with it for cycles of 61 .. 86.
    ReceiveHistory phase(1024);
    feed(phase, std::vector<uint64_t>(200, 50));
    feed(phase, std::vector<uint64_t>(60, 0));
    for (int i = 0; i < 150; i++) {
        EXPECT_EQ(phase.recurrence().count, 0u) << i;
        phase.close_period();
    }
    // A single burst is not either.
    ReceiveHistory once(1024);
    feed(once, {0, 0, 400});
    for (int i = 0; i < 100; i++) {
        EXPECT_EQ(once.recurrence().count, 0u) << i;
        once.close_period();
    }
}

TEST(ReceiveHistory, RecurrenceToleratesBurstsThatSpillIntoTheNextPeriod)
{
    ReceiveHistory h(1024);
    std::vector<uint64_t> v;
    for (int c = 0; c < 5; c++) {
        for (int i = 0; i < 16; i++) {
            if (i == 0)
                v.push_back(c == 2 ? 150 : 200);
            else if (i == 1)
                v.push_back(c % 2 ? 60 : 0); // every other burst straddles a period boundary
            else
                v.push_back(0);
        }
    }
    feed(h, v);
    ReceiveHistory::Recurrence r = h.recurrence();
    EXPECT_EQ(r.cycle, 16u);
    EXPECT_EQ(r.count, 150u); // the least of the three aligned bursts
}

TEST(ReceiveHistory, ShortHistoriesCannotSeeLongCycles)
{
    // With the paper's 8 periods (2^20 processes) a 20-period cycle is out of reach.
    ReceiveHistory h(history_periods(1u << 20));
    feed(h, bursts(20, 500, 5));
    EXPECT_EQ(h.recurrence().count, 0u);
    // ...but a 2-period cycle still is (3 cycles fit in 7 closed periods).
    ReceiveHistory s(history_periods(1u << 20));
    feed(s, bursts(2, 80, 4));
    EXPECT_EQ(s.recurrence().cycle, 2u);
    EXPECT_EQ(s.recurrence().count, 80u);
}

TEST(ReceiveHistory, ThePolicyMovesAPeriodicSourceBeforeItsBurst)
{
    llc::SwitchPolicy policy(llc::CostModel{}, 100, 4);
    ReceiveHistory h(1024);
    feed(h, bursts(12, 1000, 4)); // the open period is the next burst's
    llc::SourceLoad now{7, h.predicted_load(), h.mean_bytes(), false};
    std::vector<llc::SwitchDecision> d = policy.decide({now});
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].source, 7);
    EXPECT_EQ(d[0].want, llc::Channel::Connected);
    // The short-term load alone would not have moved it.
    llc::SourceLoad recent_only{7, h.load(), h.mean_bytes(), false};
    EXPECT_TRUE(policy.decide({recent_only}).empty());
}
