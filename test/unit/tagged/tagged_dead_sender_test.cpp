// tagged_dead_sender_test.cpp - a node-local sender that dies part-way
// through writing a tagged message into its receiver's ring.  What it had
// sealed before is received; the half-written message is never taken for
// one (no receive completes with it, no probe finds it); the receiver's
// llc_progress reports the sender's death (LLC_ERR_PEER naming it); the
// receives that wait for it end with LLC_ERR_PEER and nothing written (one
// posted for its rank, one for any source; one posted for it later fails at
// the call); and the rest of the job carries on: a receive posted for a
// third process before the death gets that process's message, and a receive
// posted by label only (no rank: nothing says who would send to it) is left
// waiting and can still be cancelled.
//
// Two ways to die half-way:
//  * UnsealedMessageChunk: the steps of llc_fast_tsend (llc_fast.h) up to,
//    not including, the seal: header, tag header, payload and the length
//    word are in the ring, as when the process is killed between its stores
//    and the seal's.
//  * RecordCutOffMidStream: an eager message larger than a 4 KiB ring
//    (LLC_CMA=0) goes as a record in pieces; the sender exits after the
//    first piece, without the progress that would write the rest.
#include "common/test_util.hpp"

#include "llc_fast.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace llctest;

namespace {

constexpr uint64_t kTag = 21, kBystanderTag = 22;
constexpr size_t kSmall = 40;           // a complete message before the death
constexpr size_t kCutOff = 12000;       // RecordCutOffMidStream: three times the ring
constexpr uint32_t kCompleteBefore = 3; // messages the dying sender completes first
constexpr char kSentinel = char(0x5c);

enum class Death { UnsealedMessageChunk, RecordCutOffMidStream };

bool done(const llc_treq_t &req, int rc) { return rc == LLC_OK || req.user != nullptr; }

void mark_done(llc_treq_t *req) { req->user = req; }

llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t s{};
    EXPECT_EQ(llc_get_stats(ctx, &s), LLC_OK);
    return s;
}

// Rank 1: kCompleteBefore whole messages, then the half-written one; exits
// without finalize.
void die_half_way(TestProcess &p, llc_context_t *ctx, Death how)
{
    std::vector<char> buf(kCutOff);
    for (uint32_t i = 0; i < kCompleteBefore; i++) {
        fill_pattern(buf.data(), kSmall, i);
        llc_treq_t s{};
        ASSERT_EQ(llc_tsend(ctx, 0, 1, kTag, buf.data(), kSmall, 0, &s), LLC_OK);
    }
    // rank 0 has them all: its ring is empty, nothing of ours is queued
    ASSERT_EQ(TestProcess::fence(&p), 0);
    fill_pattern(buf.data(), buf.size(), 99);
    if (how == Death::UnsealedMessageChunk) {
        llc_fast_peer_t *fast = llc_fast_peer(ctx, 0, LLC_FAST_LAYOUT);
        ASSERT_NE(fast, nullptr);
        ASSERT_EQ(fast->closed | fast->offers, 0u);
        llc_ring_tx_t *ring = fast->ring;
        const uint64_t total = sizeof(llc_ring_tag_header_t) + kSmall;
        char *slot = llc_ring_tx_message_slot(ring, total);
        ASSERT_NE(slot, nullptr);
        llc_ring_tag_header_t h{};
        h.tag = kTag;
        h.source = 1;
        h.seq = uint32_t(*fast->send_seq);
        std::memcpy(slot, &h, sizeof(h));
        std::memcpy(slot + sizeof(h), buf.data(), kSmall);
        const uint64_t len_word = total | LLC_RING_MESSAGE_FLAG;
        std::memcpy(ring->data + (ring->head & ring->mask) + 8, &len_word, sizeof(len_word));
        // (llc_ring_tx_publish would store the seal now)
    } else {
        llc_treq_t s{};
        // larger than the ring: the first piece is written, the rest waits for progress
        ASSERT_EQ(llc_tsend(ctx, 0, 1, kTag, buf.data(), kCutOff, 0, &s), LLC_OK);
    }
    p.depart();
    std::fflush(stderr);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
}

void run_dying_sender(Death how)
{
    JobOptions o = job({0, 0, 0}, 60);
    if (how == Death::RecordCutOffMidStream)
        o.env = {{"LLC_SHM_RING_BYTES", "4096"}, {"LLC_CMA", "0"}};
    LLC_EXPECT_JOB_OK(o, [how](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        if (p.rank == 1)
            die_half_way(p, ctx, how);
        if (p.rank == 0) {
            std::vector<char> buf(kCutOff + 64);
            for (uint32_t i = 0; i < kCompleteBefore; i++) {
                llc_treq_t r{};
                r.cb = mark_done;
                int rc = llc_trecv(ctx, 1, kTag, 0, buf.data(), buf.size(), &r);
                ASSERT_GE(rc, 0);
                ASSERT_TRUE(progress_until(
                    ctx, [&] { return done(r, rc); }, 20));
                EXPECT_EQ(r.status, LLC_OK);
                ASSERT_EQ(r.length, kSmall);
                EXPECT_TRUE(check_pattern(buf.data(), kSmall, i)) << "message " << i;
            }
            // posted before the half-written message: for its sender's label,
            // for its rank, for any source, and for a process that lives
            std::vector<char> mine(kCutOff + 64, kSentinel), any(kCutOff + 64, kSentinel);
            std::vector<char> ranked(kCutOff + 64, kSentinel), live(kCutOff + 64, kSentinel);
            llc_treq_t from_dead{}, from_any{}, from_dead_rank{}, from_live{};
            from_dead.cb = from_any.cb = from_dead_rank.cb = from_live.cb = mark_done;
            ASSERT_EQ(llc_trecv(ctx, 1, kTag, 0, mine.data(), mine.size(), &from_dead), LLC_INPROGRESS);
            ASSERT_EQ(llc_trecv(ctx, LLC_ANY_SOURCE, kTag, 0, any.data(), any.size(), &from_any), LLC_INPROGRESS);
            ASSERT_EQ(llc_trecv_from(ctx, 1, 1, kTag, 0, ranked.data(), ranked.size(), &from_dead_rank),
                      LLC_INPROGRESS);
            ASSERT_EQ(llc_trecv_from(ctx, 2, 2, kBystanderTag, 0, live.data(), live.size(), &from_live),
                      LLC_INPROGRESS);
            const llc_stats_t before = stats(ctx);
            ASSERT_EQ(TestProcess::fence(&p), 0); // rank 1 writes half a message and dies
            int rc = LLC_OK;
            const double end = now_s() + 10;
            while ((rc = llc_progress(ctx, nullptr)) == LLC_OK && now_s() < end) {
            }
            ASSERT_EQ(rc, LLC_ERR_PEER) << "the sender's death was not reported";
            const std::string why = llc_last_error(ctx);
            EXPECT_TRUE(contains(why, "rank 1")) << why;
            EXPECT_TRUE(contains(why, "died")) << why;
            if (how == Death::RecordCutOffMidStream) {
                EXPECT_TRUE(contains(why, "in the middle of a message")) << why;
            }
            // more progress: still nothing is taken for a message
            const double settle = now_s() + 0.3;
            while (now_s() < settle)
                llc_progress(ctx, nullptr);
            EXPECT_EQ(from_dead.user, nullptr) << "a receive posted by label only completed";
            EXPECT_EQ(from_live.user, nullptr) << "a receive for a process that lives completed";
            for (llc_treq_t *r : {&from_any, &from_dead_rank}) {
                EXPECT_NE(r->user, nullptr) << "a receive that waits for the dead rank did not end";
                EXPECT_EQ(r->status, LLC_ERR_PEER);
                EXPECT_EQ(r->received, 0u);
                EXPECT_EQ(r->src_rank, 1);
            }
            EXPECT_EQ(stats(ctx).msgs_received, before.msgs_received);
            EXPECT_EQ(stats(ctx).tag_unexpected, before.tag_unexpected);
            for (const std::vector<char> *b : {&mine, &any, &ranked, &live})
                EXPECT_EQ(std::count(b->begin(), b->end(), kSentinel), ptrdiff_t(b->size()))
                    << "a receive buffer was written";
            // a receive for the dead rank posted now fails at the call
            llc_treq_t late{};
            EXPECT_EQ(llc_trecv_from(ctx, 1, 1, kTag, 0, ranked.data(), ranked.size(), &late), LLC_ERR_PEER);
            EXPECT_TRUE(contains(llc_last_error(ctx), "rank 1 failed earlier")) << llc_last_error(ctx);
            int found = 1;
            llc_treq_t info{};
            EXPECT_EQ(llc_tprobe(ctx, LLC_ANY_SOURCE, 0, ~uint64_t(0), &found, &info), LLC_OK);
            EXPECT_EQ(found, 0) << "a probe found a message of " << info.length << " bytes";
            // the rest of the job carries on
            ASSERT_EQ(TestProcess::fence(&p), 0);
            ASSERT_TRUE(progress_until(
                ctx, [&] { return from_live.user != nullptr; }, 20));
            EXPECT_EQ(from_live.status, LLC_OK);
            EXPECT_EQ(from_live.length, kSmall);
            EXPECT_TRUE(check_pattern(live.data(), kSmall, 2));
            int cancelled = 0;
            EXPECT_EQ(llc_tcancel(ctx, &from_dead, &cancelled), LLC_OK);
            EXPECT_EQ(cancelled, 1);
            EXPECT_EQ(std::count(mine.begin(), mine.end(), kSentinel), ptrdiff_t(mine.size()));
            ASSERT_EQ(TestProcess::fence(&p), 0);
        }
        if (p.rank == 2) {
            ASSERT_EQ(TestProcess::fence(&p), 0);
            ASSERT_EQ(TestProcess::fence(&p), 0); // rank 0 has seen the death
            std::vector<char> buf(kSmall);
            fill_pattern(buf.data(), kSmall, 2);
            llc_treq_t s{};
            s.cb = mark_done;
            int rc = llc_tsend(ctx, 0, 2, kBystanderTag, buf.data(), kSmall, 0, &s);
            ASSERT_GE(rc, 0);
            ASSERT_TRUE(progress_until(
                ctx, [&] { return done(s, rc); }, 20));
            ASSERT_EQ(TestProcess::fence(&p), 0);
        }
        llc_finalize(ctx); // rank 0 may report the dead peer again; it must return
    });
}

} // namespace

TEST(TaggedDeadSender, UnsealedMessageChunkIsNeverDelivered) { run_dying_sender(Death::UnsealedMessageChunk); }

TEST(TaggedDeadSender, RecordCutOffMidStreamIsNeverDelivered) { run_dying_sender(Death::RecordCutOffMidStream); }
