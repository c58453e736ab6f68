// config_backoff_test.cpp - the progress backoff (progress_backoff.hpp) and
// Config's parsing, in one process.  Part of the Components suite, split
// from components_test.cpp by component (the stream decoder is in
// wire/stream_decoder_test.cpp, the shm ring in transport/shm/shm_ring_test.cpp).
#include "core/config.hpp"
#include "core/errors.hpp"
#include "core/progress_backoff.hpp"

#include "common/test_util.hpp"

#include <cstdlib>

using namespace llc;

namespace {
uint64_t fake_now_us = 1000000;
uint64_t fake_clock()
{
    return fake_now_us;
}
} // namespace

TEST(Components, BackoffSpinsThenYieldsThenSleeps)
{
    ProgressBackoff b(3, 2000);
    for (int i = 0; i < 3; i++)
        EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Yield);
    usleep(3000);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Sleep);
    b.on_activity();
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
}

// A call that stands for several idle polls (the caller left some out,
// llc_fast_poll_skip) uses up the spinning by polls, not by calls.
TEST(Components, BackoffCountsPollsLeftOutAsIdleCalls)
{
    ProgressBackoff b(10, 1000000);
    EXPECT_EQ(b.on_idle(4), ProgressBackoff::Action::Spin);  // 4 of 10
    EXPECT_EQ(b.on_idle(6), ProgressBackoff::Action::Spin);  // 10 of 10: the last spinning poll
    EXPECT_EQ(b.on_idle(1), ProgressBackoff::Action::Yield);
    b.on_activity();
    EXPECT_EQ(b.on_idle(9), ProgressBackoff::Action::Spin);
    EXPECT_EQ(b.on_idle(16), ProgressBackoff::Action::Yield) << "past the spin count within one call";
    EXPECT_EQ(b.on_idle(16), ProgressBackoff::Action::Yield);
    ProgressBackoff none(0, 1000000);
    EXPECT_EQ(none.on_idle(16), ProgressBackoff::Action::Yield);
}

// A wait loop whose calls come back to back goes on to sleep however long
// each of its own yields and sleeps takes.
TEST(Components, BackoffBackToBackCallsReachSleep)
{
    ProgressBackoff b(2, 1000, 50, fake_clock);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Yield);
    fake_now_us += 400; // a long yield
    b.wait_ended();
    fake_now_us += 10;
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Yield);
    fake_now_us += 700;
    b.wait_ended();
    fake_now_us += 10;
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Sleep);
    fake_now_us += 100;
    b.wait_ended();
    fake_now_us += 49;
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Sleep);
}

// A caller that polls now and then (computing, or copying into shared
// memory, between MPI calls) is not put to sleep in every poll: a call more
// than away_us after the last wait ended begins a new wait, spinning.
TEST(Components, BackoffCallerAwayStartsANewWait)
{
    ProgressBackoff b(2, 1000, 50, fake_clock);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Yield);
    fake_now_us += 2000;
    b.wait_ended();
    fake_now_us += 1;
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Sleep);
    b.wait_ended();
    fake_now_us += 51; // away
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Spin);
    EXPECT_EQ(b.on_idle(), ProgressBackoff::Action::Yield);
    // away_us 0: never
    ProgressBackoff never(1, 1000, 0, fake_clock);
    EXPECT_EQ(never.on_idle(), ProgressBackoff::Action::Spin);
    EXPECT_EQ(never.on_idle(), ProgressBackoff::Action::Yield);
    fake_now_us += 5000;
    EXPECT_EQ(never.on_idle(), ProgressBackoff::Action::Sleep);
}

// LLC_OVERSUBSCRIBED: auto picks the short spin and the early sleep when
// the node runs more of the job's processes than it has online CPUs; 1 and
// 0 force either; the figures come from their own settings.
TEST(Components, IdlePolicyFollowsOversubscription)
{
    Config c;
    c.spin_count = 1000;
    c.idle_sleep_us = 1000;
    c.oversub_spin_count = 100;
    c.oversub_idle_sleep_us = 20;
    IdlePolicy p = idle_policy(c, 8, 2);
    EXPECT_TRUE(p.oversubscribed);
    EXPECT_EQ(p.spin_count, 100u);
    EXPECT_EQ(p.idle_sleep_us, 20u);
    p = idle_policy(c, 2, 2); // one process per CPU
    EXPECT_FALSE(p.oversubscribed);
    EXPECT_EQ(p.spin_count, 1000u);
    EXPECT_EQ(p.idle_sleep_us, 1000u);
    c.oversubscribed = Config::Oversubscribed::On;
    EXPECT_TRUE(idle_policy(c, 1, 64).oversubscribed);
    c.oversubscribed = Config::Oversubscribed::Off;
    EXPECT_FALSE(idle_policy(c, 64, 1).oversubscribed);
    EXPECT_GE(online_cpus(), 1);

    // parsed from the environment
    setenv("LLC_OVERSUBSCRIBED", "1", 1);
    setenv("LLC_OVERSUB_SPIN_COUNT", "7", 1);
    setenv("LLC_OVERSUB_IDLE_SLEEP_US", "3", 1);
    Config e = Config::from_environment();
    EXPECT_EQ(e.oversubscribed, Config::Oversubscribed::On);
    p = idle_policy(e, 1, 4);
    EXPECT_EQ(p.spin_count, 7u);
    EXPECT_EQ(p.idle_sleep_us, 3u);
    setenv("LLC_OVERSUBSCRIBED", "0", 1);
    EXPECT_EQ(Config::from_environment().oversubscribed, Config::Oversubscribed::Off);
    setenv("LLC_OVERSUBSCRIBED", "sometimes", 1);
    EXPECT_THROW(Config::from_environment(), Error);
    for (const char *v : {"LLC_OVERSUBSCRIBED", "LLC_OVERSUB_SPIN_COUNT", "LLC_OVERSUB_IDLE_SLEEP_US"})
        unsetenv(v);
    EXPECT_EQ(Config::from_environment().oversubscribed, Config::Oversubscribed::Auto);
}

TEST(Components, ConfigParsesSuffixesAndRoundsRing)
{
    setenv("LLC_SHM_RING_BYTES", "100k", 1);
    setenv("LLC_CMA", "0", 1);
    Config c = Config::from_environment();
    EXPECT_EQ(c.shm_ring_bytes, 128u * 1024);
    EXPECT_FALSE(c.cma_enabled);
    setenv("LLC_CMA", "2", 1);
    EXPECT_THROW(Config::from_environment(), Error);
    unsetenv("LLC_SHM_RING_BYTES");
    unsetenv("LLC_CMA");
    Config d = Config::from_environment();
    EXPECT_EQ(d.shm_ring_bytes, 256u * 1024);
    EXPECT_TRUE(d.cma_enabled);
}
