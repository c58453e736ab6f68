// verbs_credits_test.cpp - credit flow control of the verbs transport
// (verbs_credits.hpp): the sender blocks at zero credits and resumes on a
// return, returns never overflow the initial grant, the receiver batches
// returns, flushes when asked, and flags a sender that overran its credits;
// and the two sides together never let more than the grant be in flight.
#include "transport/verbs/verbs_credits.hpp"

#include <gtest/gtest.h>

#include <deque>

TEST(VerbsCredits, SenderBlocksAtZeroAndResumesOnReturn)
{
    llc::SendCredits s(3);
    EXPECT_TRUE(s.consume());
    EXPECT_TRUE(s.consume());
    EXPECT_TRUE(s.consume());
    EXPECT_FALSE(s.can_send());
    EXPECT_FALSE(s.consume()); // blocked
    EXPECT_EQ(s.available(), 0u);
    EXPECT_EQ(s.stalls(), 1u);
    EXPECT_TRUE(s.on_return(2));
    EXPECT_TRUE(s.can_send());
    EXPECT_TRUE(s.consume());
    EXPECT_EQ(s.available(), 1u);
}

TEST(VerbsCredits, ReturnsNeverOverflowTheGrant)
{
    llc::SendCredits s(4);
    EXPECT_FALSE(s.on_return(1)); // nothing taken yet
    EXPECT_EQ(s.available(), 4u);
    ASSERT_TRUE(s.consume());
    ASSERT_TRUE(s.consume());
    EXPECT_FALSE(s.on_return(3)); // more than taken: refused whole
    EXPECT_EQ(s.available(), 2u);
    EXPECT_TRUE(s.on_return(2));
    EXPECT_EQ(s.available(), 4u);
    EXPECT_FALSE(s.on_return(0xffffffffu)); // no wrap-around
    EXPECT_EQ(s.available(), 4u);
    EXPECT_TRUE(s.on_return(0));
}

TEST(VerbsCredits, ReceiverReturnsInBatchesOrOnFlush)
{
    llc::RecvCredits r(8, 3);
    EXPECT_EQ(r.take_return(true), 0u); // nothing owed
    for (int i = 0; i < 2; i++) {
        ASSERT_TRUE(r.on_frame());
        r.on_buffer_reposted();
    }
    EXPECT_EQ(r.take_return(), 0u); // below the batch
    ASSERT_TRUE(r.on_frame());
    EXPECT_EQ(r.take_return(), 0u); // arrived but its buffer not reposted: not owed yet
    r.on_buffer_reposted();
    EXPECT_EQ(r.take_return(), 3u);
    EXPECT_EQ(r.outstanding(), 0u);
    ASSERT_TRUE(r.on_frame());
    r.on_buffer_reposted();
    EXPECT_EQ(r.take_return(), 0u);
    EXPECT_EQ(r.take_return(true), 1u); // idle: flushed
    EXPECT_EQ(r.owed(), 0u);
    r.on_buffer_reposted(); // a repost without a frame owes nothing
    EXPECT_EQ(r.take_return(true), 0u);
}

TEST(VerbsCredits, ReceiverFlagsASenderBeyondItsCredits)
{
    llc::RecvCredits r(2, 1);
    EXPECT_TRUE(r.on_frame());
    EXPECT_TRUE(r.on_frame());
    EXPECT_FALSE(r.on_frame()); // a third frame without a return in between
    EXPECT_EQ(r.outstanding(), 2u);
    r.on_buffer_reposted();
    EXPECT_EQ(r.take_return(), 1u);
    EXPECT_TRUE(r.on_frame()); // allowed again after the return
}

// A sender and a receiver joined by queues (frames one way, returns the
// other): with any interleaving the frames in flight never exceed the grant,
// the receiver never flags an overrun, and everything sent arrives.
TEST(VerbsCredits, SenderAndReceiverTogetherStayWithinTheGrant)
{
    const uint32_t grant = 5;
    llc::SendCredits s(grant);
    llc::RecvCredits r(grant, 2);
    std::deque<int> frames;        // in flight to the receiver
    std::deque<uint32_t> returns;  // credits in flight back
    int sent = 0, received = 0;
    const int total = 5000;
    uint32_t rng = 7;
    auto next = [&] { return rng = rng * 1664525u + 1013904223u, rng >> 10; };
    while (received < total) {
        switch (next() % 4) {
        case 0:
            if (sent < total && s.consume())
                frames.push_back(sent++);
            break;
        case 1:
            if (!frames.empty()) {
                ASSERT_TRUE(r.on_frame()) << "overrun at frame " << frames.front();
                ASSERT_EQ(frames.front(), received);
                frames.pop_front();
                received++;
                r.on_buffer_reposted();
            }
            break;
        case 2:
            if (uint32_t n = r.take_return(next() % 8 == 0))
                returns.push_back(n);
            break;
        case 3:
            if (!returns.empty()) {
                ASSERT_TRUE(s.on_return(returns.front()));
                returns.pop_front();
            }
            break;
        }
        ASSERT_LE(frames.size(), size_t(grant));
        // Conservation: every credit taken is a frame in flight, a frame
        // received and not yet returned, or a return in flight.
        uint32_t returning = 0;
        for (uint32_t n : returns)
            returning += n;
        ASSERT_EQ(grant - s.available(), frames.size() + r.outstanding() + returning);
        if (sent < total && s.available() == 0 && frames.empty() && returns.empty() && r.owed() > 0 &&
            r.owed() < r.batch())
            returns.push_back(r.take_return(true)); // what the transport does when its receive side idles
    }
    EXPECT_EQ(sent, total);
    EXPECT_GT(s.stalls(), 0u);
}
