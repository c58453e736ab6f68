// verbs_recv_pool_test.cpp - the shared receive queue's buffer bookkeeping
// (verbs_recv_pool.hpp): never more than the bound posted, a consumed buffer
// is reposted exactly once (after its release, not before), refused
// transitions change nothing, and the paper's sizes.
#include "transport/verbs/verbs_recv_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

TEST(VerbsRecvPool, NeverPostsMoreThanTheBound)
{
    llc::RecvBufferPool pool(8, 64, 3);
    EXPECT_EQ(pool.postable(), 3u);
    auto first = pool.take_to_post();
    EXPECT_EQ(first.size(), 3u);
    EXPECT_EQ(pool.posted(), 3u);
    EXPECT_TRUE(pool.take_to_post().empty()); // at the bound
    EXPECT_EQ(pool.postable(), 0u);
    // One completes: one may be posted, and it is another buffer (the
    // consumed one is not released yet).
    ASSERT_TRUE(pool.on_completion(first[0]));
    auto more = pool.take_to_post();
    ASSERT_EQ(more.size(), 1u);
    EXPECT_EQ(std::count(first.begin(), first.end(), more[0]), 0);
    EXPECT_EQ(pool.posted(), 3u);
    EXPECT_EQ(pool.consumed(), 1u);
    EXPECT_EQ(pool.idle(), 4u);
    // max limits a call further.
    ASSERT_TRUE(pool.on_completion(first[1]));
    ASSERT_TRUE(pool.on_completion(first[2]));
    EXPECT_EQ(pool.take_to_post(1).size(), 1u);
    EXPECT_EQ(pool.posted(), 2u);
}

TEST(VerbsRecvPool, ConsumedBufferIsRepostedExactlyOnceAfterRelease)
{
    llc::RecvBufferPool pool(2, 64, 2);
    auto ids = pool.take_to_post();
    ASSERT_EQ(ids.size(), 2u);
    ASSERT_TRUE(pool.on_completion(ids[0]));
    EXPECT_TRUE(pool.take_to_post().empty()); // consumed, not yet released: not postable
    EXPECT_EQ(pool.state(ids[0]), llc::RecvBufferPool::State::Consumed);
    ASSERT_TRUE(pool.release(ids[0]));
    auto again = pool.take_to_post();
    ASSERT_EQ(again.size(), 1u);
    EXPECT_EQ(again[0], ids[0]);
    EXPECT_EQ(pool.reposts(), 1u);
    EXPECT_TRUE(pool.take_to_post().empty()); // not a second time
    EXPECT_EQ(pool.reposts(), 1u);
    // A second release of the same buffer (now Posted) is refused and does
    // not make it postable twice.
    EXPECT_FALSE(pool.release(ids[0]));
    EXPECT_TRUE(pool.take_to_post().empty());
    EXPECT_EQ(pool.refused(), 1u);
}

TEST(VerbsRecvPool, RefusesTransitionsOutOfOrder)
{
    llc::RecvBufferPool pool(4, 16, 4);
    EXPECT_FALSE(pool.on_completion(0)); // never posted
    EXPECT_FALSE(pool.release(0));       // never consumed
    EXPECT_FALSE(pool.on_completion(99)); // no such buffer
    EXPECT_FALSE(pool.unpost(0));
    EXPECT_EQ(pool.refused(), 4u);
    EXPECT_EQ(pool.idle(), 4u);
    auto ids = pool.take_to_post(1);
    ASSERT_TRUE(pool.on_completion(ids[0]));
    EXPECT_FALSE(pool.on_completion(ids[0])); // a duplicated completion
    EXPECT_EQ(pool.consumed(), 1u);
    EXPECT_EQ(pool.posted(), 0u);
}

TEST(VerbsRecvPool, UnpostedBuffersArePostedAgainLater)
{
    llc::RecvBufferPool pool(4, 16, 4);
    auto ids = pool.take_to_post();
    ASSERT_EQ(ids.size(), 4u);
    ASSERT_TRUE(pool.unpost(ids[2])); // ibv_post_srq_recv refused it
    ASSERT_TRUE(pool.unpost(ids[3]));
    EXPECT_EQ(pool.posted(), 2u);
    auto retry = pool.take_to_post();
    EXPECT_EQ(std::set<uint32_t>(retry.begin(), retry.end()), (std::set<uint32_t>{ids[2], ids[3]}));
    EXPECT_EQ(pool.reposts(), 0u); // never consumed: not reposts
}

// Many rounds of random completions and releases: the invariants hold at
// every step, and every buffer is posted again once per consumption.
TEST(VerbsRecvPool, InvariantsHoldUnderChurn)
{
    const size_t count = 64, bound = 32;
    llc::RecvBufferPool pool(count, 4096, bound);
    std::vector<uint32_t> posted, consumed;
    uint64_t completions = 0;
    uint32_t rng = 12345;
    auto next = [&] { return rng = rng * 1103515245u + 12345u, rng >> 8; };
    for (int step = 0; step < 20000; step++) {
        for (uint32_t id : pool.take_to_post(next() % 8))
            posted.push_back(id);
        if (!posted.empty() && next() % 2) {
            size_t i = next() % posted.size();
            ASSERT_TRUE(pool.on_completion(posted[i]));
            completions++;
            consumed.push_back(posted[i]);
            posted.erase(posted.begin() + long(i));
        }
        if (!consumed.empty() && next() % 2) {
            size_t i = next() % consumed.size();
            ASSERT_TRUE(pool.release(consumed[i]));
            consumed.erase(consumed.begin() + long(i));
        }
        ASSERT_LE(pool.posted(), bound);
        ASSERT_EQ(pool.posted(), posted.size());
        ASSERT_EQ(pool.consumed(), consumed.size());
        ASSERT_EQ(pool.posted() + pool.consumed() + pool.idle(), count);
        std::set<uint32_t> all(posted.begin(), posted.end());
        all.insert(consumed.begin(), consumed.end());
        ASSERT_EQ(all.size(), posted.size() + consumed.size()); // no buffer in two places
    }
    // reposts = completions of buffers that were posted again since.
    for (uint32_t id : pool.take_to_post())
        (void)id;
    EXPECT_GT(pool.reposts(), 0u);
    EXPECT_LE(pool.reposts(), completions);
    EXPECT_EQ(pool.refused(), 0u);
}

TEST(VerbsRecvPool, PaperSizesAndOffsets)
{
    llc::RecvBufferPool pool(2 * 2048, 4096, 2048);
    EXPECT_EQ(pool.region_bytes(), 16u << 20);
    EXPECT_EQ(pool.offset(0), 0u);
    EXPECT_EQ(pool.offset(4095), 4095u * 4096u);
    EXPECT_EQ(pool.take_to_post().size(), 2048u);
    EXPECT_THROW(llc::RecvBufferPool(4, 16, 5), std::invalid_argument);
    EXPECT_THROW(llc::RecvBufferPool(0, 16, 0), std::invalid_argument);
    EXPECT_THROW(llc::RecvBufferPool(4, 0, 1), std::invalid_argument);
}
