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
