// tagged_split_test.cpp - the split copy within a node (LLC_TAG_SPLIT_BYTES,
// LLC_TAG_SPLIT_RTS_BYTES, both 64 KiB here;
// doc/libllc-tagged.md, "Split copy"): the sender writes the first part of a
// large message into the receive buffer while the receiver reads the rest.
// Every byte and the bytes around the buffer are checked on both paths
// (request-to-send, offered receive), at sizes around the threshold and
// truncated; a message sent after a split one is matched after it; without
// CMA permission (LLC_CMA_SIMULATE_EPERM) the message is streamed instead;
// forged split records are rejected and counted; a sender that dies before
// its part is written fails the receive instead of leaving it waiting.
#include "common/test_util.hpp"
#include "tagged/tagged_test_util.hpp"

#include "core/context.hpp"
#include "tagged/tagged.hpp"

#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

using namespace llctest;

namespace {

constexpr size_t kThreshold = 64 * 1024;
constexpr size_t kGuard = 4096; // bytes checked on each side of a receive buffer
constexpr uint64_t kData = 11, kReady = 12;
constexpr char kFill = char(0xa5);
constexpr size_t kLen = 256 * 1024; // the forged-record tests' message

// Sizes around the threshold: below it (one copy), at it, just above, odd.
const std::vector<size_t> kSizes = {kThreshold - 1, kThreshold, kThreshold + 1, kThreshold + 4097, 1024 * 1024 + 3};

// rts_threshold: LLC_TAG_SPLIT_RTS_BYTES (0: that path never splits);
// oversubscribed: LLC_OVERSUBSCRIBED=1 (neither path splits).
JobOptions split_pair(bool offers, bool eperm = false, size_t rts_threshold = kThreshold, bool oversubscribed = false)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_TAG_SPLIT_BYTES", std::to_string(kThreshold)},
             {"LLC_TAG_SPLIT_RTS_BYTES", std::to_string(rts_threshold)},
             {"LLC_TAG_OFFER", offers ? "1" : "0"},
             {"LLC_OVERSUBSCRIBED", oversubscribed ? "1" : "0"}}; // (the machine's CPUs would decide)
    if (eperm)
        o.env.push_back({"LLC_CMA_SIMULATE_EPERM", "1"});
    return o;
}

void wait_ok(llc_context_t *ctx, llc_treq_t &req, int want = LLC_OK)
{
    ASSERT_TRUE(progress_until(
        ctx, [&] { return done(req); }, 20));
    EXPECT_EQ(req.status, want);
}

void send_bytes(llc_context_t *ctx, int to, uint64_t tag, size_t len, uint64_t seed)
{
    std::vector<char> out(len);
    fill_pattern(out.data(), len, seed);
    llc_treq_t s{};
    ASSERT_GE(llc_tsend(ctx, to, uint32_t(llc::context_of(ctx).rank()), tag, out.data(), len, 0, &s), 0);
    wait_ok(ctx, s);
}

// A receive buffer of capacity bytes between two guards of kFill.
struct Guarded {
    explicit Guarded(size_t capacity) : bytes(capacity + 2 * kGuard, kFill), capacity(capacity) {}
    char *data() { return bytes.data() + kGuard; }
    bool untouched() const
    {
        return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == kFill; });
    }
    bool guards_intact() const
    {
        auto fill = [](char c) { return c == kFill; };
        return std::all_of(bytes.begin(), bytes.begin() + kGuard, fill) &&
               std::all_of(bytes.end() - kGuard, bytes.end(), fill);
    }
    std::vector<char> bytes;
    size_t capacity;
};

// Rank 0 sends len bytes (seed i); rank 1 receives them into capacity bytes,
// posted before the message (offers on: the offer path) or after it arrived.
// Then a small message with the same tag: matched after the large one.
void split_round_trip(bool offers, bool eperm, size_t len, size_t capacity, uint64_t seed,
                      size_t rts_threshold = kThreshold, bool oversubscribed = false)
{
    LLC_EXPECT_JOB_OK(split_pair(offers, eperm, rts_threshold, oversubscribed), [=](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        const size_t threshold = offers ? kThreshold : rts_threshold;
        const bool split = !eperm && !oversubscribed && threshold && std::min(len, capacity) >= threshold;
        if (p.rank == 0) {
            if (offers)
                ASSERT_TRUE(progress_until(
                    ctx, [&] { return offers_held(ctx) == 1; }, 20));
            else
                ASSERT_EQ(TestProcess::fence(&p), 0);
            send_bytes(ctx, 1, kData, len, seed);
            send_bytes(ctx, 1, kData, 100, seed + 1);
            const llc_stats_t s = stats(ctx);
            EXPECT_EQ(s.tag_cma_writes, split ? 1u : (offers && !eperm ? 1u : 0u)) << "len " << len;
            EXPECT_EQ(s.tag_rejected, 0u);
        } else {
            Guarded buf(capacity);
            llc_treq_t r{};
            if (offers) {
                ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kData, 0, buf.data(), capacity, &r), LLC_INPROGRESS);
            } else {
                ASSERT_EQ(TestProcess::fence(&p), 0);
                ASSERT_TRUE(progress_until(
                    ctx, [&] { return stats(ctx).tag_unexpected >= 1; }, 20));
                ASSERT_GE(llc_trecv(ctx, 0, kData, 0, buf.data(), capacity, &r), 0);
            }
            std::vector<char> small(100);
            llc_treq_t r2{};
            ASSERT_GE(llc_trecv(ctx, 0, kData, 0, small.data(), small.size(), &r2), 0);
            wait_ok(ctx, r, len > capacity ? LLC_ERR_TRUNCATE : LLC_OK);
            wait_ok(ctx, r2);
            EXPECT_EQ(r.length, len);
            EXPECT_EQ(r.received, std::min(len, capacity));
            std::vector<char> want(len);
            fill_pattern(want.data(), len, seed);
            EXPECT_TRUE(std::equal(want.begin(), want.begin() + std::min(len, capacity), buf.data()))
                << "len " << len << " into " << capacity;
            EXPECT_TRUE(buf.guards_intact()) << "written outside the receive buffer";
            EXPECT_EQ(r2.length, 100u) << "the later message was matched first";
            EXPECT_TRUE(check_pattern(small.data(), 100, seed + 1));
            const llc_stats_t s = stats(ctx);
            EXPECT_EQ(s.tag_offers_used, offers ? 1u : 0u);
            // its part of a split, or the whole message pulled after a request-to-send
            EXPECT_EQ(s.tag_cma_reads, split || (!offers && !eperm) ? 1u : 0u) << "len " << len;
            EXPECT_EQ(s.tag_rejected, 0u);
        }
        finalize_ok(ctx);
    });
}

// Two processes of a node with the split copy on; body(p, ctx, context).
template <class Body> void split_job(bool offers, Body body)
{
    LLC_EXPECT_JOB_OK(split_pair(offers), [body](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        body(p, ctx, llc::context_of(ctx));
        finalize_ok(ctx);
    });
}

} // namespace

TEST(TaggedSplit, RequestToSendEveryByteAroundTheThreshold)
{
    uint64_t seed = 1;
    for (size_t len : kSizes)
        split_round_trip(false, false, len, len, seed++);
}

TEST(TaggedSplit, OfferEveryByteAroundTheThreshold)
{
    uint64_t seed = 21;
    for (size_t len : kSizes)
        split_round_trip(true, false, len, len, seed++);
}

// Each path has its own threshold: the request-to-send path off, or from
// 512 KiB, while offers split from 64 KiB.
TEST(TaggedSplit, RequestToSendThresholdIsItsOwn)
{
    split_round_trip(false, false, 300000, 300000, 31, 0);
    split_round_trip(false, false, 300000, 300000, 32, 512 * 1024);
    split_round_trip(false, false, 600000, 600000, 33, 512 * 1024);
    split_round_trip(true, false, 300000, 300000, 34, 0);
}

// With more processes on the node than CPUs neither path splits: one
// process copies the whole message (the sender into the offer, the
// receiver after a request-to-send).
TEST(TaggedSplit, NeverOnAnOversubscribedNode)
{
    split_round_trip(false, false, 300000, 300000, 61, kThreshold, true);
    split_round_trip(true, false, 300000, 300000, 62, kThreshold, true);
}

TEST(TaggedSplit, TruncatedReceiveBothPaths)
{
    split_round_trip(false, false, 300000, 200001, 41);
    split_round_trip(true, false, 300000, 200001, 42);
}

TEST(TaggedSplit, NotPermittedIsStreamedBothPaths)
{
    split_round_trip(false, true, 300000, 300000, 51);
    split_round_trip(true, true, 300000, 300000, 52);
}

// Rank 1 (hostile receiver) answers rank 0's request-to-send with split
// records that do not fit: a part as long as the message, an unknown token,
// then a second split after the real one.  Each is rejected and counted,
// nothing is written, and the message still arrives whole.
TEST(TaggedSplit, ForgedSplitRecordsAreRejected)
{
    split_job(false, [](TestProcess &p, llc_context_t *ctx, llc::Context &c) {
        if (p.rank == 0) {
            send_bytes(ctx, 1, kData, kLen, 61);
            EXPECT_EQ(stats(ctx).tag_rejected, 3u);
            EXPECT_EQ(stats(ctx).tag_cma_writes, 1u);
        } else {
            llc_treq_t info{};
            llc_tmsg_t *msg = nullptr;
            int found = 0;
            ASSERT_TRUE(progress_until(
                ctx, [&] { return llc_tmprobe(ctx, 0, kData, 0, &found, &msg, &info) == LLC_OK && found; }));
            const uint64_t sreq = reinterpret_cast<const llc::Unexpected *>(msg)->sreq;
            Guarded decoy(kLen);
            auto forge = [&](uint64_t sreq, uint64_t split) {
                llc::SplitWire w{sreq, 0x100000001ull, uint64_t(uintptr_t(decoy.data())), split};
                c.send_am(0, llc::kTagSplit, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
            };
            forge(sreq, kLen);                // the whole message for the sender to write
            forge(sreq ^ (1ull << 40), 4096); // a token that names nothing
            Guarded buf(kLen);
            llc_treq_t r{};
            ASSERT_GE(llc_tmrecv(ctx, msg, buf.data(), kLen, &r), 0);
            forge(sreq, 4096); // after the real split: asked already
            wait_ok(ctx, r);
            EXPECT_TRUE(check_pattern(buf.data(), kLen, 61));
            EXPECT_TRUE(buf.guards_intact());
            EXPECT_TRUE(decoy.untouched()) << "a forged split was written";
        }
    });
}

// Rank 0 (hostile sender) answers rank 1's offer with split writes that do
// not fit it (a split at the end of the buffer, a payload carried along) and
// a Written for no receive: rejected, counted, the receive keeps its offer
// and takes the real message after them.
TEST(TaggedSplit, ForgedSplitWritesAreRejected)
{
    split_job(true, [](TestProcess &p, llc_context_t *ctx, llc::Context &c) {
        if (p.rank == 0) {
            ASSERT_TRUE(progress_until(
                ctx, [&] { return offers_held(ctx) == 1; }, 20));
            llc::Offer o;
            ASSERT_TRUE(c.tagged().offers().peek(1, o));
            std::vector<char> out(kLen);
            fill_pattern(out.data(), kLen, 71);
            llc::PutSplitWire w{{o.rreq, kData, kLen, 0, 0}, 0x100000001ull, uint64_t(uintptr_t(out.data())), kLen};
            c.send_am(1, llc::kTagPutSplit, &w, sizeof(w), nullptr, 0, nullptr, nullptr); // split at the end
            w.split = 4096;
            llc_iov_t iov{out.data(), 16};
            c.send_am(1, llc::kTagPutSplit, &w, sizeof(w), &iov, 1, nullptr, nullptr); // carries bytes
            llc::WrittenWire written{o.rreq ^ (1ull << 40), uint32_t(llc::CmaCopy::Done), 0};
            c.send_am(1, llc::kTagWritten, &written, sizeof(written), nullptr, 0, nullptr, nullptr);
            char b = 0;
            llc_treq_t r{};
            ASSERT_GE(llc_trecv(ctx, 1, kReady, 0, &b, 1, &r), 0);
            wait_ok(ctx, r);
            send_bytes(ctx, 1, kData, kLen, 72);
        } else {
            Guarded buf(kLen);
            llc_treq_t r{};
            ASSERT_EQ(llc_trecv_from(ctx, 0, 0, kData, 0, buf.data(), kLen, &r), LLC_INPROGRESS);
            ASSERT_TRUE(progress_until(
                ctx, [&] { return stats(ctx).tag_rejected == 3; }, 20));
            EXPECT_FALSE(done(r));
            EXPECT_TRUE(buf.untouched()) << "a forged split was taken";
            send_bytes(ctx, 0, kReady, 1, 0);
            wait_ok(ctx, r);
            EXPECT_TRUE(check_pattern(buf.data(), kLen, 72));
            EXPECT_TRUE(buf.guards_intact());
            EXPECT_EQ(stats(ctx).tag_rejected, 3u);
        }
    });
}

// Rank 0 sends a request-to-send for a buffer of its and dies without
// answering the split: rank 1's receive completes with LLC_ERR_PEER once the
// death is seen, instead of waiting for the sender's part for ever.
TEST(TaggedSplit, SenderDyingBeforeItsPartFailsTheReceive)
{
    LLC_EXPECT_JOB_OK(split_pair(false), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        llc::Context &c = llc::context_of(ctx);
        if (p.rank == 0) {
            std::vector<char> out(kLen);
            llc::TagWire w{};
            w.tag = kData;
            w.length = kLen;
            w.sreq = 0x100000001ull; // no request: the split is left unanswered
            w.pid = int32_t(::getpid());
            w.addr = uint64_t(uintptr_t(out.data()));
            c.send_am(1, llc::kTagRts, &w, sizeof(w), nullptr, 0, nullptr, nullptr);
            ASSERT_TRUE(progress_until(
                ctx, [&] { return stats(ctx).tag_rejected >= 1; }, 20));
            p.depart();
            _exit(::testing::Test::HasFailure() ? 1 : 0);
        }
        Guarded buf(kLen);
        llc_treq_t r{};
        ASSERT_GE(llc_trecv(ctx, 0, kData, 0, buf.data(), kLen, &r), 0);
        const double end = now_s() + 20;
        while (!done(r) && now_s() < end)
            llc_progress(ctx, nullptr); // (reports the death once)
        ASSERT_TRUE(done(r)) << "the receive waits for a dead sender";
        EXPECT_EQ(r.status, LLC_ERR_PEER);
        EXPECT_TRUE(buf.guards_intact());
        llc_finalize(ctx);
    });
}
