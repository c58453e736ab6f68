// busy_promotion_test.cpp - BusyPromotion, which busy peers get a connected
// slot (the router's tcp routes, verbs' RC queue pairs): busy from
// promote_at, quiet below a quarter of it, and a newcomer takes a promoted
// peer's slot only when twice as busy, exactly twice as the caller says.
#include "transport/busy_promotion.hpp"

#include <gtest/gtest.h>

#include <cstdint>

using llc::BusyPromotion;

TEST(BusyPromotion, BusyFromTheThresholdQuietBelowAQuarterOfIt)
{
    BusyPromotion p(256);
    EXPECT_EQ(p.promote_at(), 256u);
    EXPECT_FALSE(p.busy(255));
    EXPECT_TRUE(p.busy(256));
    EXPECT_TRUE(p.quiet(63));
    EXPECT_FALSE(p.quiet(64));
    EXPECT_FALSE(p.busy(100) || p.quiet(100)) << "in between: stays where it is (no flapping)";
}

TEST(BusyPromotion, SmallThresholdsAreNeverQuiet)
{
    BusyPromotion p(3);
    EXPECT_FALSE(p.quiet(0)) << "3 / 4 = 0: nothing is below it";
    EXPECT_TRUE(p.busy(3));
}

TEST(BusyPromotion, ANewcomerDisplacesOnlyWhenTwiceAsBusy)
{
    using A = BusyPromotion::AtTwice;
    EXPECT_FALSE(BusyPromotion::displaces(199, 100, A::Displaces));
    EXPECT_TRUE(BusyPromotion::displaces(200, 100, A::Displaces)) << "a receiver's ask: exactly twice displaces";
    EXPECT_FALSE(BusyPromotion::displaces(200, 100, A::Stays)) << "the sender's tick: exactly twice stays";
    EXPECT_TRUE(BusyPromotion::displaces(201, 100, A::Stays));
    EXPECT_TRUE(BusyPromotion::displaces(1, 0, A::Stays)) << "an idle promoted peer gives way to any load";
    EXPECT_FALSE(BusyPromotion::displaces(0, 0, A::Stays));
    EXPECT_TRUE(BusyPromotion::displaces(0, 0, A::Displaces));
}
