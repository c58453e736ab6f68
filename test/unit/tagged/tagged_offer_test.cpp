// tagged_offer_test.cpp - the receive-first path (offers; doc/libllc-tagged.md,
// "Offers"): a receive posted before its message, for one source, is offered
// to the sender, which writes the message into it.  Cancel, truncation,
// MPI's order against an earlier wildcard receive, no allocation in a steady
// ping-pong, and records from a member that do not fit an offer.  The races
// of offers with messages in flight are in tagged_test.cpp (TaggedOffers.Race*).
#include "common/alloc_counter.hpp"
#include "common/test_util.hpp"
#include "tagged/tagged_test_util.hpp"

#include "core/context.hpp"
#include "tagged/tagged.hpp"

#include <unistd.h>

#include <memory>
#include <random>

using namespace llctest;

namespace {

constexpr size_t kBig = 64 * 1024; // above LLC_TAG_EAGER_BYTES: offered when posted first
constexpr uint64_t kData = 5, kReady = 6, kAfter = 7;

// The label of this rank's messages: its rank.
uint32_t me(llc_context_t *ctx) { return uint32_t(llc::context_of(ctx).rank()); }

// A blocking small message (the tests' own signalling).
void send_small(llc_context_t *ctx, int to, uint64_t tag)
{
    char b = 1;
    llc_treq_t s{};
    ASSERT_GE(llc_tsend(ctx, to, me(ctx), tag, &b, 1, 0, &s), 0);
    ASSERT_TRUE(progress_until(ctx, [&] { return done(s); }, 20));
}
void recv_small(llc_context_t *ctx, int from, uint64_t tag)
{
    char b = 0;
    llc_treq_t r{};
    ASSERT_GE(llc_trecv(ctx, from, tag, 0, &b, 1, &r), 0);
    ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 20));
}

// Send len bytes of pattern seed and wait for the send.
void send_big(llc_context_t *ctx, int to, size_t len, uint64_t seed)
{
    std::vector<char> out(len);
    fill_pattern(out.data(), len, seed);
    llc_treq_t s{};
    ASSERT_GE(llc_tsend(ctx, to, me(ctx), kData, out.data(), len, 0, &s), 0);
    ASSERT_TRUE(progress_until(ctx, [&] { return done(s); }, 20));
    EXPECT_EQ(s.status, LLC_OK);
}

JobOptions tcp_pair()
{
    JobOptions o = job({0, 1});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    return o;
}

// Rank 1 posts a big receive for rank 0, which holds its offer; rank 1
// cancels it: the cancel waits for the sender's answer (LLC_INPROGRESS),
// the receive then completes as cancelled, its buffer untouched, and rank
// 0's offer is gone: the next message goes to a new receive.
void cancel_offered(JobOptions o)
{
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        if (p.rank == 0) {
            ASSERT_TRUE(progress_until(ctx, [&] { return offers_held(ctx) == 1; }, 20));
            send_small(ctx, 1, kReady);
            recv_small(ctx, 1, kAfter);
            // (had the revoked offer stayed, the next message would be
            // written into the cancelled receive's buffer: checked there)
            send_big(ctx, 1, kBig, 41);
        } else {
            std::vector<char> buf(kBig, 0x5a);
            llc_treq_t r{};
            int cancelled = 0;
            ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kData, 0, buf.data(), buf.size(), &r), LLC_INPROGRESS);
            EXPECT_EQ(stats(ctx).tag_offers_sent, 1u);
            recv_small(ctx, 0, kReady);
            EXPECT_EQ(llc_tcancel(ctx, &r, &cancelled), LLC_INPROGRESS) << "the sender holds the offer";
            EXPECT_EQ(cancelled, 0);
            EXPECT_EQ(llc_tcancel(ctx, &r, &cancelled), LLC_INPROGRESS) << "a second cancel waits as well";
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 20));
            EXPECT_EQ(r.status, LLC_ERR_CANCELED);
            send_small(ctx, 0, kAfter);
            std::vector<char> next(kBig);
            llc_treq_t r2{};
            ASSERT_GE(llc_trecv_from(ctx, 0, 0, kData, 0, next.data(), next.size(), &r2), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r2); }, 20));
            EXPECT_EQ(r2.status, LLC_OK);
            EXPECT_TRUE(check_pattern(next.data(), kBig, 41));
            EXPECT_EQ(buf, std::vector<char>(kBig, 0x5a)) << "the cancelled receive's buffer was written";
            llc_stats_t s = stats(ctx);
            EXPECT_EQ(s.tag_cancelled, 1u);
            EXPECT_GE(s.tag_offers_declined, 1u);
        }
        finalize_ok(ctx);
    });
}

} // namespace

TEST(TaggedOffers, CancelledOfferedReceiveIsNeverWrittenShm) { cancel_offered(job({0, 0})); }
TEST(TaggedOffers, CancelledOfferedReceiveIsNeverWrittenTcp) { cancel_offered(tcp_pair()); }

// A cancel racing the sender's write ends one way or the other, never in
// between: cancelled with the buffer untouched (the message then goes to
// the next receive), or received whole.  60 rounds at random moments.
TEST(TaggedOffers, CancelRacingTheWriteEndsOneWayOrTheOther)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        constexpr int kRounds = 60;
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        std::mt19937_64 rng(77 + unsigned(p.rank));
        int cancelled_rounds = 0, written_rounds = 0;
        for (int i = 0; i < kRounds; i++) {
            if (p.rank == 0) {
                ASSERT_TRUE(progress_until(ctx, [&] { return offers_held(ctx) == 1; }, 20));
                send_small(ctx, 1, kReady); // "I hold your offer": now cancel and write race
                for (unsigned k = rng() % 40; k > 0; k--)
                    llc_progress(ctx, nullptr);
                send_big(ctx, 1, kBig, 100 + uint64_t(i));
            } else {
                std::vector<char> buf(kBig, 0x5a), spare(kBig, 0);
                llc_treq_t r{}, r2{};
                int cancelled = 0;
                ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kData, 0, buf.data(), buf.size(), &r), LLC_INPROGRESS);
                recv_small(ctx, 0, kReady);
                for (unsigned k = rng() % 40; k > 0; k--)
                    llc_progress(ctx, nullptr);
                int rc = llc_tcancel(ctx, &r, &cancelled);
                ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_strerror(rc);
                if (!done(r))
                    ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 20));
                if (r.status == LLC_ERR_CANCELED) {
                    cancelled_rounds++;
                    EXPECT_EQ(buf, std::vector<char>(kBig, 0x5a)) << "round " << i << ": cancelled, yet written";
                    // (a plain receive: an offer here could cross the message,
                    // and refusals in a row make the receiver stop offering)
                    ASSERT_GE(llc_trecv(ctx, 0, kData, 0, spare.data(), spare.size(), &r2), 0);
                    ASSERT_TRUE(progress_until(ctx, [&] { return done(r2); }, 20));
                    EXPECT_TRUE(check_pattern(spare.data(), kBig, 100 + uint64_t(i))) << "round " << i;
                } else {
                    written_rounds++;
                    EXPECT_EQ(r.status, LLC_OK) << "round " << i;
                    EXPECT_EQ(r.received, kBig);
                    EXPECT_TRUE(check_pattern(buf.data(), kBig, 100 + uint64_t(i))) << "round " << i;
                }
            }
        }
        if (p.rank == 1) {
            EXPECT_EQ(cancelled_rounds + written_rounds, kRounds);
            // a cancelled round's message may arrive before the plain
            // receive that takes it (counted as unexpected, at most one per
            // cancelled round); none may be left over
            EXPECT_LE(stats(ctx).tag_unexpected, uint64_t(cancelled_rounds));
            for (int k = 0; k < 20; k++)
                llc_progress(ctx, nullptr);
            int found = 1;
            llc_treq_t info{};
            ASSERT_GE(llc_tprobe(ctx, LLC_ANY_SOURCE, 0, ~uint64_t(0), &found, &info), 0);
            EXPECT_EQ(found, 0) << "a message of " << info.length << " bytes was left over";
        }
        finalize_ok(ctx);
    });
}

namespace {

// An offered receive of 20000 bytes meets a message of 30000: the first
// 20000 land, the receive reports LLC_ERR_TRUNCATE with the sent length,
// and the next message is untouched.
void truncated_write(JobOptions o)
{
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        constexpr size_t kCap = 20000, kSent = 30000;
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        if (p.rank == 0) {
            ASSERT_TRUE(progress_until(ctx, [&] { return offers_held(ctx) == 1; }, 20));
            send_big(ctx, 1, kSent, 7);
            send_big(ctx, 1, kBig, 8);
        } else {
            std::vector<char> buf(kCap + 16, 0x11), next(kBig);
            llc_treq_t r{}, r2{};
            ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kData, 0, buf.data(), kCap, &r), LLC_INPROGRESS);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 20));
            EXPECT_EQ(r.status, LLC_ERR_TRUNCATE);
            EXPECT_EQ(r.received, kCap);
            EXPECT_EQ(r.length, kSent);
            std::vector<char> want(kSent);
            fill_pattern(want.data(), kSent, 7);
            EXPECT_TRUE(std::equal(buf.begin(), buf.begin() + kCap, want.begin())) << "the prefix that fits";
            EXPECT_EQ(std::vector<char>(buf.begin() + kCap, buf.end()), std::vector<char>(16, 0x11))
                << "written past the receive";
            ASSERT_GE(llc_trecv_from(ctx, 0, 0, kData, 0, next.data(), next.size(), &r2), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r2); }, 20));
            EXPECT_EQ(r2.status, LLC_OK);
            EXPECT_TRUE(check_pattern(next.data(), kBig, 8));
            EXPECT_GE(stats(ctx).tag_offers_used, 1u);
        }
        finalize_ok(ctx);
    });
}

} // namespace

TEST(TaggedOffers, TruncatedWriteReportsTheSentLengthShm) { truncated_write(job({0, 0})); }
TEST(TaggedOffers, TruncatedWriteReportsTheSentLengthTcp) { truncated_write(tcp_pair()); }

// MPI's order: an any-source receive posted earlier takes the first
// message, so the later receive for the same tag is not offered; two
// receives for rank 0 posted back to back are both offered and filled in
// posting order.
TEST(TaggedOffers, EarlierReceivesKeepTheirTurn)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        if (p.rank == 0) {
            recv_small(ctx, 1, kReady);
            for (uint64_t seed : {1, 2})
                send_big(ctx, 1, kBig, seed);
            recv_small(ctx, 1, kReady);
            EXPECT_EQ(offers_held(ctx), 2u);
            for (uint64_t seed : {3, 4})
                send_big(ctx, 1, kBig, seed);
        } else {
            std::vector<std::vector<char>> b(4, std::vector<char>(kBig));
            llc_treq_t r[4] = {};
            ASSERT_EQ(llc_trecv(ctx, LLC_ANY_SOURCE, kData, 0, b[0].data(), kBig, &r[0]), LLC_INPROGRESS);
            ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kData, 0, b[1].data(), kBig, &r[1]), LLC_INPROGRESS);
            EXPECT_EQ(stats(ctx).tag_offers_sent, 0u) << "offered past an earlier any-source receive";
            send_small(ctx, 0, kReady);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r[0]) && done(r[1]); }, 20));
            ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kData, 0, b[2].data(), kBig, &r[2]), LLC_INPROGRESS);
            ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kData, 0, b[3].data(), kBig, &r[3]), LLC_INPROGRESS);
            EXPECT_EQ(stats(ctx).tag_offers_sent, 2u);
            ASSERT_TRUE(progress_until(ctx, [&] { return offers_held(ctx) == 0 && stats(ctx).tag_offers_sent; }, 1));
            send_small(ctx, 0, kReady);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r[2]) && done(r[3]); }, 20));
            for (int i = 0; i < 4; i++) {
                EXPECT_EQ(r[i].status, LLC_OK) << i;
                EXPECT_TRUE(check_pattern(b[size_t(i)].data(), kBig, uint64_t(i + 1))) << "receive " << i;
            }
            EXPECT_EQ(stats(ctx).tag_offers_used, 2u);
        }
        finalize_ok(ctx);
    });
}

// A steady ping-pong of 64 KiB messages whose receives are offered and
// written by the sender allocates nothing on the heap (issue target).  Each
// rank posts its next receive before it answers, so every offer is made
// while nothing is in flight towards it and is taken.
TEST(TaggedOffers, SteadyLargePingPongAllocatesNothing)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        constexpr int kWarm = 50, kRounds = 500;
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        int peer = 1 - p.rank;
        std::vector<char> out(kBig), in(kBig);
        llc_treq_t rq[2] = {}, s{};
        auto post = [&](int i) {
            ASSERT_GE(llc_trecv_from(ctx, peer, peer, kData, 0, in.data(), kBig, &rq[i % 2]), 0);
        };
        // the peer's receive is offered to us (in warm-up, perhaps not)
        auto offer_held = [&](int i) {
            double end = now_s() + (i < kWarm ? 0.01 : 20);
            while (offers_held(ctx) == 0 && now_s() < end)
                llc_progress(ctx, nullptr);
            EXPECT_TRUE(offers_held(ctx) > 0 || i < kWarm) << "round " << i << ": no offer from the peer";
        };
        auto send = [&](int i) {
            out[0] = char(i);
            ASSERT_GE(llc_tsend(ctx, peer, uint32_t(p.rank), kData, out.data(), kBig, 0, &s), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(s); }, 20));
        };
        auto received = [&](int i) {
            ASSERT_TRUE(progress_until(ctx, [&] { return done(rq[i % 2]); }, 20));
            EXPECT_EQ(in[0], char(i));
        };
        uint64_t used = 0;
        std::unique_ptr<CountAllocations> counter;
        post(0);
        for (int i = 0; i < kWarm + kRounds; i++) {
            if (i == kWarm) {
                if (p.rank == 0)
                    used = stats(ctx).tag_offers_used;
                counter.reset(new CountAllocations);
            }
            if (p.rank == 0) {
                offer_held(i);
                send(i);
                received(i);
                post(i + 1);
            } else {
                received(i);
                post(i + 1);
                // (counted here: waiting for our send's answer, as a split
                // copy's send does, may take the peer's next message already)
                if (i + 1 == kWarm)
                    used = stats(ctx).tag_offers_used;
                offer_held(i);
                send(i);
            }
        }
        EXPECT_EQ(counter->count(), 0u) << "heap allocations in " << kRounds << " round trips on rank " << p.rank;
        EXPECT_GE(stats(ctx).tag_offers_used, used + kRounds) << "every receive was written by the sender";
        // the receive posted last: cancelled, once the peer gives the offer back
        int cancelled = 0;
        llc_tcancel(ctx, &rq[(kWarm + kRounds) % 2], &cancelled);
        ASSERT_TRUE(progress_until(ctx, [&] { return done(rq[(kWarm + kRounds) % 2]); }, 20));
        EXPECT_EQ(rq[(kWarm + kRounds) % 2].status, LLC_ERR_CANCELED);
        finalize_ok(ctx);
    });
}

// Records from a member that do not fit an offer: a write naming no
// offered receive, one for the offered receive with a tag it does not
// take, one carrying fewer bytes than it declares; refusals and
// revocations naming nothing.  The writes are dropped and counted
// (tag_rejected); refusals and revocations are dropped silently (a real one
// may name a receive that completed meanwhile).  The offered receive then
// takes the real message intact.
TEST(TaggedOffers, RecordsThatDoNotFitAnOfferAreDropped)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        llc::Context &c = llc::context_of(ctx);
        if (p.rank == 0) {
            ASSERT_TRUE(progress_until(ctx, [&] { return offers_held(ctx) == 1; }, 20));
            llc::Offer o;
            ASSERT_TRUE(c.tagged().offers().peek(1, o));
            std::vector<char> junk(100, 'x');
            llc_iov_t iov{junk.data(), junk.size()};
            auto put = [&](uint64_t rreq, uint64_t tag, uint64_t length) {
                llc::PutWire w{rreq, tag, length, 0, 0};
                c.send_am(1, llc::kTagPut, &w, sizeof(w), &iov, 1, nullptr, nullptr);
            };
            put(o.rreq ^ 0x5555, kData, junk.size()); // names nothing
            put(o.rreq, kData + 1, junk.size());      // a tag the receive does not take
            put(o.rreq, kData, kBig);                 // declares 64 KiB, carries 100 bytes
            llc::TagReply nothing{0, o.rreq ^ 0x7777};
            c.send_am(1, llc::kTagDecline, &nothing, sizeof(nothing), nullptr, 0, nullptr, nullptr);
            c.send_am(1, llc::kTagRevoke, &nothing, sizeof(nothing), nullptr, 0, nullptr, nullptr);
            recv_small(ctx, 1, kAfter);
            EXPECT_EQ(offers_held(ctx), 1u) << "the offer is still ours to use";
            send_big(ctx, 1, kBig, 9);
        } else {
            std::vector<char> buf(kBig, 0);
            llc_treq_t r{};
            ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kData, 0, buf.data(), buf.size(), &r), LLC_INPROGRESS);
            ASSERT_TRUE(progress_until(ctx, [&] { return stats(ctx).tag_rejected >= 3; }, 20));
            EXPECT_FALSE(done(r)) << "a write that does not fit completed the offered receive";
            send_small(ctx, 0, kAfter);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 20));
            EXPECT_EQ(r.status, LLC_OK);
            EXPECT_TRUE(check_pattern(buf.data(), kBig, 9));
            llc_stats_t s = stats(ctx);
            EXPECT_EQ(s.tag_rejected, 3u);
            EXPECT_EQ(s.tag_offers_used, 1u);
        }
        finalize_ok(ctx);
    });
}

// An offer naming memory the sender cannot write (a member's bug or a
// forgery) fails that send with LLC_ERR_PEER; the sender carries on.
TEST(TaggedOffers, UnwritableOfferFailsOnlyThatSend)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        llc::Context &c = llc::context_of(ctx);
        if (p.rank == 0) {
            ASSERT_TRUE(progress_until(ctx, [&] { return offers_held(ctx) == 1; }, 20));
            std::vector<char> out(kBig, 1);
            llc_treq_t s{};
            int rc = llc_tsend(ctx, 1, 0, kData, out.data(), kBig, 0, &s);
            ASSERT_GE(rc, 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(s); }, 20));
            if (stats(ctx).tag_cma_writes == 0 && s.status == LLC_OK) {
                // process_vm_writev is not permitted here: the payload went in the Put
                EXPECT_EQ(rc, LLC_INPROGRESS);
            } else {
                EXPECT_EQ(s.status, LLC_ERR_PEER);
            }
            send_small(ctx, 1, kAfter);
        } else {
            // a forged offer: rank 0's tagged records seen so far, a buffer at 0x1000
            llc::OfferWire w{};
            w.rreq = 0x100000001ull;
            w.tag = kData;
            w.capacity = kBig;
            w.addr = 0x1000;
            w.seen = c.records_received_from(0);
            w.source = 0;
            w.pid = int32_t(::getpid());
            c.send_am(0, llc::kTagOffer, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
            recv_small(ctx, 0, kAfter);
        }
        finalize_ok(ctx);
    });
}

// An offer naming the sender's own process is refused (counted, declined):
// taking it would make the sender's sends write into its own memory.
TEST(TaggedOffers, OfferNamingTheSendersOwnProcessIsRefused)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        llc::Context &c = llc::context_of(ctx);
        int32_t pid = int32_t(::getpid());
        if (p.rank == 0) {
            llc_treq_t s{};
            ASSERT_GE(llc_tsend(ctx, 1, 0, kReady, &pid, sizeof(pid), 0, &s), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(s); }, 20));
            ASSERT_TRUE(progress_until(ctx, [&] { return stats(ctx).tag_rejected >= 1; }, 20));
            EXPECT_EQ(offers_held(ctx), 0u);
            send_small(ctx, 1, kAfter);
        } else {
            int32_t pid0 = 0;
            llc_treq_t r{};
            ASSERT_GE(llc_trecv(ctx, 0, kReady, 0, &pid0, sizeof(pid0), &r), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 20));
            llc::OfferWire w{};
            w.rreq = 0x100000001ull;
            w.tag = kData;
            w.capacity = kBig;
            w.addr = uint64_t(uintptr_t(&pid0)); // mapped here, and the offer names rank 0's process
            w.seen = c.records_received_from(0);
            w.source = 0;
            w.pid = pid0;
            c.send_am(0, llc::kTagOffer, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
            recv_small(ctx, 0, kAfter);
            EXPECT_EQ(stats(ctx).tag_offers_declined, 1u) << "refused with a Decline";
        }
        finalize_ok(ctx);
    });
}
