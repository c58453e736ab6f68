// tagged_fast_test.cpp - the inline fast path of llc_fast.h: small tagged
// messages written into a local peer's ring by the caller's code.  They must
// arrive as if llc_tsend had sent them (matched, in order with the library's
// own sends to that peer, every byte), and the path must refuse whenever it
// would break that: sends queued inside the library, offers held from the
// peer, a failed peer, no shared-memory peer at all.
#include "common/test_util.hpp"

#include "core/context.hpp"
#include "llc_fast.h"
#include "tagged/tagged.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <random>
#include <vector>

using namespace llctest;

namespace {

bool done(const llc_treq_t &req) { return llc::state_of(const_cast<llc_treq_t *>(&req)).magic == 0; }

llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t s{};
    EXPECT_EQ(llc_get_stats(ctx, &s), LLC_OK);
    return s;
}

constexpr uint64_t kTag = 11, kBigTag = 12;
constexpr uint32_t kStream = 3000; // messages of the interleaving test

// Message i of a stream: its length (mostly small, some above the inline
// limit, some large enough for the library's large-message protocol).
size_t length_of(uint32_t i)
{
    uint64_t x = mix64(i);
    switch (x % 16) {
    case 0:
        return 0;
    case 1:
        return 20000 + size_t(x >> 8) % 50000; // request-to-send, a single copy
    case 2:
        return 4000 + size_t(x >> 8) % 8000;   // medium: inline while the ring has room
    default:
        return size_t(x >> 8) % 200;
    }
}

// Send message i through the fast path when it takes it, else llc_tsend;
// count which.  Waits for llc_tsend sends (their buffers are reused).
void send_one(llc_context_t *ctx, llc_fast_peer_t *fast, uint32_t i, std::vector<char> &buf, uint64_t &fast_sent,
              uint64_t &lib_sent)
{
    size_t len = length_of(i);
    buf.resize(len + 1);
    fill_pattern(buf.data(), len, i);
    if (llc_fast_tsend(fast, 0, kTag, buf.data(), len)) {
        fast_sent++;
        return;
    }
    llc_treq_t s{};
    int rc = llc_tsend(ctx, 1, 0, kTag, buf.data(), len, (i % 7 == 3) ? LLC_TSEND_SYNC : 0, &s);
    ASSERT_GE(rc, 0) << llc_last_error(ctx);
    ASSERT_TRUE(progress_until(ctx, [&] { return rc == LLC_OK || done(s); }, 30));
    EXPECT_EQ(s.status, LLC_OK);
    lib_sent++;
}

// Receive n messages of the stream in order, each checked byte by byte.
void receive_stream(llc_context_t *ctx, uint32_t n)
{
    std::vector<char> buf(80000);
    for (uint32_t i = 0; i < n; i++) {
        llc_treq_t r{};
        ASSERT_GE(llc_trecv(ctx, 0, kTag, 0, buf.data(), buf.size(), &r), 0);
        ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 30)) << "message " << i;
        ASSERT_EQ(r.status, LLC_OK);
        ASSERT_EQ(r.length, length_of(i)) << "message " << i << " out of order";
        ASSERT_TRUE(check_pattern(buf.data(), r.length, i)) << "message " << i << " corrupted";
    }
}

} // namespace

// Fast-path sends and library sends (eager records, synchronous,
// request-to-send) to the same peer, interleaved: one stream, in order.
TEST(TaggedFast, InterleavesWithTheLibrarysSendsInOrder)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        if (p.rank == 0) {
            llc_fast_peer_t *fast = llc_fast_peer(ctx, 1, LLC_FAST_LAYOUT);
            ASSERT_NE(fast, nullptr);
            EXPECT_GT(fast->max_len, 0u);
            std::vector<char> buf;
            uint64_t fast_sent = 0, lib_sent = 0;
            for (uint32_t i = 0; i < kStream; i++) {
                send_one(ctx, fast, i, buf, fast_sent, lib_sent);
                if (::testing::Test::HasFatalFailure())
                    return;
            }
            EXPECT_GT(fast_sent, kStream / 2);
            EXPECT_GT(lib_sent, kStream / 20);
            llc_stats_t s = stats(ctx);
            EXPECT_GE(s.msgs_sent, kStream) << "the fast path's messages are counted";
            EXPECT_EQ(fast->msgs, fast_sent);
        } else {
            receive_stream(ctx, kStream);
        }
        finalize_ok(ctx);
    });
}

// While the ring is full the path refuses; a library send then queues, and
// the path stays closed until the queue has drained, so that nothing
// overtakes the queued message.
TEST(TaggedFast, StaysClosedWhileSendsAreQueued)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        setenv("LLC_SHM_RING_BYTES", "4096", 1);
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        uint64_t n = 0;
        if (p.rank == 0) {
            llc_fast_peer_t *fast = llc_fast_peer(ctx, 1, LLC_FAST_LAYOUT);
            ASSERT_NE(fast, nullptr);
            std::vector<char> buf;
            uint32_t i = 0;
            // rank 1 reads nothing before the fence: fill its ring
            for (;; i++) {
                size_t len = 40;
                buf.assign(len, 0);
                fill_pattern(buf.data(), len, i);
                if (!llc_fast_tsend(fast, 0, kTag, buf.data(), len))
                    break;
            }
            EXPECT_GT(i, 10u);
            EXPECT_EQ(fast->closed, 0u);
            // the library queues the next ones (copied: complete at once)
            uint32_t queued_from = i;
            for (; i < queued_from + 20; i++) {
                buf.assign(40, 0);
                fill_pattern(buf.data(), 40, i);
                llc_treq_t s{};
                ASSERT_EQ(llc_tsend(ctx, 1, 0, kTag, buf.data(), 40, 0, &s), LLC_OK);
            }
            EXPECT_NE(fast->closed, 0u) << "sends are queued: the fast path must not overtake them";
            buf.assign(40, 0);
            fill_pattern(buf.data(), 40, i);
            EXPECT_EQ(llc_fast_tsend(fast, 0, kTag, buf.data(), 40), 0);
            n = i;
            ASSERT_EQ(TestProcess::put(&p, "n", &n, sizeof(n)), 0);
            ASSERT_EQ(TestProcess::fence(&p), 0);
            // rank 1 reads now: the queue drains and the path opens again
            ASSERT_TRUE(progress_until(ctx, [&] { return fast->closed == 0; }, 30));
            uint32_t inline_sent = 0;
            for (uint32_t k = 0; k < 50; i++, k++) {
                fill_pattern(buf.data(), 40, i);
                if (llc_fast_tsend(fast, 0, kTag, buf.data(), 40)) {
                    inline_sent++;
                    continue;
                }
                // (refused: a chunk that would wrap, or the ring is full)
                llc_treq_t s{};
                ASSERT_EQ(llc_tsend(ctx, 1, 0, kTag, buf.data(), 40, 0, &s), LLC_OK);
            }
            EXPECT_GT(inline_sent, 0u) << "the path opened again";
        } else {
            ASSERT_EQ(TestProcess::fence(&p), 0);
            size_t len = sizeof(n);
            ASSERT_EQ(TestProcess::get(&p, 0, "n", &n, &len), 0);
            std::vector<char> buf(64);
            for (uint32_t i = 0; i < n + 50; i++) {
                llc_treq_t r{};
                ASSERT_GE(llc_trecv(ctx, 0, kTag, 0, buf.data(), buf.size(), &r), 0);
                ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 30)) << "message " << i;
                ASSERT_EQ(r.length, 40u);
                ASSERT_TRUE(check_pattern(buf.data(), 40, i)) << "message " << i << " out of order or corrupted";
            }
        }
        finalize_ok(ctx);
    });
}

// A peer that offered us a receive may want this very message written into
// it: while we hold its offers the fast path refuses, and llc_tsend takes
// the offer.
TEST(TaggedFast, RefusesWhileThePeerHoldsOffersWithUs)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        std::vector<char> buf(64 * 1024, 0);
        if (p.rank == 0) {
            llc_fast_peer_t *fast = llc_fast_peer(ctx, 1, LLC_FAST_LAYOUT);
            ASSERT_NE(fast, nullptr);
            ASSERT_TRUE(progress_until(ctx, [&] { return llc::context_of(ctx).tagged().offers().size() == 1; }, 30));
            EXPECT_EQ(fast->offers, 1u);
            fill_pattern(buf.data(), 100, 77);
            EXPECT_EQ(llc_fast_tsend(fast, 0, kBigTag, buf.data(), 100), 0) << "an offer is held";
            llc_treq_t s{};
            int rc = llc_tsend(ctx, 1, 0, kBigTag, buf.data(), 100, 0, &s);
            ASSERT_GE(rc, 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return rc == LLC_OK || done(s); }, 30));
            EXPECT_EQ(fast->offers, 0u) << "the send used the offer";
        } else {
            llc_treq_t r{};
            ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kBigTag, 0, buf.data(), buf.size(), &r), LLC_INPROGRESS);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 30));
            EXPECT_EQ(r.status, LLC_OK);
            EXPECT_EQ(r.length, 100u);
            EXPECT_TRUE(check_pattern(buf.data(), 100, 77));
            EXPECT_EQ(stats(ctx).tag_offers_used, 1u) << "written into the offered receive";
        }
        finalize_ok(ctx);
    });
}

// The receiving side's inline look (llc_fast_poll_skip): it lets a poll
// through as soon as a peer has written anything into our rings (the
// inline path's message chunks and the library's own records alike), and
// at least every period-th poll otherwise; the polls it left out count for
// the idle backoff, so a process that waits with it still comes to yield.
TEST(TaggedFast, PollLooksAtTheRingsAndLetsEveryPeriodthPollThrough)
{
    JobOptions o = job({0, 0, 0});
    o.env = {{"LLC_FAST_POLL_PERIOD", "8"}, {"LLC_SPIN_COUNT", "100"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        llc_fast_poll_t *poll = llc_fast_poll(ctx, LLC_FAST_LAYOUT);
        ASSERT_NE(poll, nullptr);
        EXPECT_EQ(poll->nrings, 2u) << "one ring from each other process of the node";
        EXPECT_EQ(poll->period, 8u);
        EXPECT_EQ(llc_fast_poll(ctx, LLC_FAST_LAYOUT - 1), nullptr) << "another layout";
        EXPECT_EQ(llc_fast_poll(nullptr, LLC_FAST_LAYOUT), nullptr);
        std::vector<char> buf(256);
        if (p.rank == 0) {
            // nothing sent to us yet: 7 polls left out, the 8th goes through
            ASSERT_EQ(TestProcess::fence(&p), 0);
            for (int i = 0; i < 7; i++)
                EXPECT_EQ(llc_fast_poll_skip(poll), 1) << "poll " << i;
            EXPECT_EQ(poll->skipped, 7u);
            EXPECT_EQ(llc_fast_poll_skip(poll), 0) << "the period-th poll";
            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
            EXPECT_EQ(poll->skipped, 0u) << "llc_progress takes the count";
            // a waiting loop that skips where it may still reaches the yield
            uint64_t yields = 0;
            for (int i = 0; i < 400 && yields == 0; i++) {
                if (!llc_fast_poll_skip(poll))
                    ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
                llc_stats_t s{};
                ASSERT_EQ(llc_get_stats(ctx, &s), LLC_OK);
                yields = s.idle_yields;
            }
            EXPECT_GT(yields, 0u) << "100 idle polls, most of them left out, end the spinning";
            ASSERT_EQ(TestProcess::fence(&p), 0);
            // rank 1 sends one message inline, then rank 2 one through the library
            for (int from = 1; from <= 2; from++) {
                ASSERT_EQ(TestProcess::fence(&p), 0); // sent
                ASSERT_EQ(poll->skipped, 0u);
                EXPECT_EQ(llc_fast_poll_skip(poll), 0) << "a message from rank " << from << " waits in its ring";
                llc_treq_t r{};
                ASSERT_GE(llc_trecv(ctx, from, kTag, 0, buf.data(), buf.size(), &r), 0);
                ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 30));
                EXPECT_EQ(r.length, 100u);
                EXPECT_TRUE(check_pattern(buf.data(), 100, uint32_t(from)));
                EXPECT_EQ(llc_fast_poll_skip(poll), 1) << "read: nothing waits any more";
                ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
                ASSERT_EQ(TestProcess::fence(&p), 0); // looked
            }
        } else {
            ASSERT_EQ(TestProcess::fence(&p), 0);
            ASSERT_EQ(TestProcess::fence(&p), 0);
            for (int turn = 1; turn <= 2; turn++) {
                llc_treq_t s{};
                bool sync = false;
                if (turn == p.rank) {
                    fill_pattern(buf.data(), 100, uint32_t(p.rank));
                    if (p.rank == 1) {
                        llc_fast_peer_t *fast = llc_fast_peer(ctx, 0, LLC_FAST_LAYOUT);
                        ASSERT_NE(fast, nullptr);
                        ASSERT_EQ(llc_fast_tsend(fast, uint32_t(p.rank), kTag, buf.data(), 100), 1);
                    } else {
                        // synchronous: a record through the library, not a message chunk
                        ASSERT_EQ(llc_tsend(ctx, 0, uint32_t(p.rank), kTag, buf.data(), 100, LLC_TSEND_SYNC, &s),
                                  LLC_INPROGRESS);
                        sync = true;
                    }
                }
                ASSERT_EQ(TestProcess::fence(&p), 0); // sent
                ASSERT_EQ(TestProcess::fence(&p), 0); // rank 0 looked
                if (sync)
                    ASSERT_TRUE(progress_until(ctx, [&] { return done(s); }, 30));
            }
        }
        finalize_ok(ctx);
    });
}

// A caller that did work of its own between polls (one-sided copies into
// shared memory) sets `busy`: its polls, skipped or not, are not a wait and
// never come to yield; without it the same loop yields.
TEST(TaggedFast, PollsOfABusyCallerNeverYield)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_FAST_POLL_PERIOD", "8"}, {"LLC_SPIN_COUNT", "100"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        llc_fast_poll_t *poll = llc_fast_poll(ctx, LLC_FAST_LAYOUT);
        ASSERT_NE(poll, nullptr);
        EXPECT_EQ(poll->busy, 0u);
        auto yields = [&] {
            llc_stats_t s{};
            EXPECT_EQ(llc_get_stats(ctx, &s), LLC_OK);
            return s.idle_yields;
        };
        auto loop = [&](bool busy) {
            for (int i = 0; i < 1000; i++) {
                if (busy)
                    poll->busy = 1;
                if (!llc_fast_poll_skip(poll))
                    ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
            }
        };
        ASSERT_EQ(TestProcess::fence(&p), 0);
        uint64_t before = yields();
        loop(true);
        EXPECT_EQ(yields(), before) << "1000 polls of a busy caller, 10 times the spin count";
        EXPECT_EQ(poll->busy, 0u) << "llc_progress takes the word";
        loop(false);
        EXPECT_GT(yields(), before) << "the same loop, idle, comes to yield";
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(ctx);
    });
}

// LLC_FAST_POLL_PERIOD=1 turns the look off; a process alone on its node has
// no rings to look at.
TEST(TaggedFast, NoPollWithPeriodOneOrAloneOnTheNode)
{
    JobOptions o = job({0, 0, 1});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        if (p.rank == 1)
            setenv("LLC_FAST_POLL_PERIOD", "1", 1);
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        if (p.rank == 0)
            EXPECT_NE(llc_fast_poll(ctx, LLC_FAST_LAYOUT), nullptr);
        else
            EXPECT_EQ(llc_fast_poll(ctx, LLC_FAST_LAYOUT), nullptr) << (p.rank == 1 ? "period 1" : "alone");
        finalize_ok(ctx);
    });
}

// No fast path to itself, to a rank out of range, to another node, with
// another layout, or with LLC_FAST_PATH=0.
TEST(TaggedFast, OnlyToProcessesOnTheNodeWithTheSameLayout)
{
    JobOptions o = job({0, 0, 1});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        if (p.rank == 1)
            setenv("LLC_FAST_PATH", "0", 1);
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        EXPECT_EQ(llc_fast_peer(ctx, p.rank, LLC_FAST_LAYOUT), nullptr) << "itself";
        EXPECT_EQ(llc_fast_peer(ctx, 3, LLC_FAST_LAYOUT), nullptr) << "out of range";
        EXPECT_EQ(llc_fast_peer(ctx, -1, LLC_FAST_LAYOUT), nullptr) << "negative";
        EXPECT_EQ(llc_fast_peer(nullptr, 0, LLC_FAST_LAYOUT), nullptr);
        if (p.rank == 0) {
            EXPECT_NE(llc_fast_peer(ctx, 1, LLC_FAST_LAYOUT), nullptr);
            EXPECT_EQ(llc_fast_peer(ctx, 1, LLC_FAST_LAYOUT + 1), nullptr) << "another layout";
            EXPECT_EQ(llc_fast_peer(ctx, 1, LLC_FAST_LAYOUT - 1), nullptr) << "the older layout (16-byte chunks)";
            EXPECT_EQ(llc_fast_peer(ctx, 2, LLC_FAST_LAYOUT), nullptr) << "another node";
        } else if (p.rank == 1) {
            EXPECT_EQ(llc_fast_peer(ctx, 0, LLC_FAST_LAYOUT), nullptr) << "LLC_FAST_PATH=0";
        } else {
            EXPECT_EQ(llc_fast_peer(ctx, 0, LLC_FAST_LAYOUT), nullptr) << "another node";
        }
        finalize_ok(ctx);
    });
}
