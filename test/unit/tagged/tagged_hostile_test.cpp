// tagged_hostile_test.cpp - tagged protocol records from a job member that
// do not fit (doc/reliability.md): forged and stale request
// tokens, the token of a cancelled receive, repeated acknowledgements,
// records out of place for the request they name, malformed headers, and a
// request-to-send naming memory that cannot be read.  Each is dropped and
// counted (tag_rejected), or fails only its own request (tag_read_failed);
// the rank carries on and a message sent afterwards arrives intact.
//
// The records are forged with libllc's own send path (llc::context_of), so
// they reach the tagged handlers through a transport like real ones.
#include "common/cma_probe.hpp"
#include "common/test_util.hpp"

#include "core/context.hpp"
#include "tagged/request_tokens.hpp"
#include "tagged/tagged.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <random>

using namespace llctest;

namespace {

constexpr size_t kBig = 256 * 1024; // above LLC_TAG_EAGER_BYTES: request-to-send

llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t s{};
    EXPECT_EQ(llc_get_stats(ctx, &s), LLC_OK);
    return s;
}

uint64_t token_of(llc_treq_t &req) { return llc::state_of(&req).token; }

void forge(llc_context_t *ctx, int dest, unsigned id, const void *hdr, size_t hdr_len, const void *data = nullptr,
           size_t len = 0)
{
    llc_iov_t iov{data, len};
    int rc = llc::context_of(ctx).send_am(dest, id, hdr, hdr_len, &iov, len ? 1 : 0, nullptr, nullptr);
    EXPECT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_strerror(rc);
}

void forge_reply(llc_context_t *ctx, int dest, unsigned id, uint64_t sreq, uint64_t rreq, const void *data = nullptr,
                 size_t len = 0)
{
    llc::TagReply r{sreq, rreq};
    forge(ctx, dest, id, &r, sizeof(r), data, len);
}

bool done(const llc_treq_t &req) { return llc::state_of(const_cast<llc_treq_t *>(&req)).magic == 0; }

// Progress until tag_rejected reaches want (and fail if it goes beyond).
void expect_rejected(llc_context_t *ctx, uint64_t want)
{
    EXPECT_TRUE(progress_until(ctx, [&] { return stats(ctx).tag_rejected >= want; }, 10));
    for (int i = 0; i < 20; i++)
        llc_progress(ctx, nullptr);
    EXPECT_EQ(stats(ctx).tag_rejected, want);
}

// A send from `from` to `to` (who may be the same rank) of len bytes
// with pattern seed, received whole and checked.
void send_one_intact(llc_context_t *ctx, int to, size_t len, uint64_t seed)
{
    std::vector<char> out(len), in(len);
    fill_pattern(out.data(), len, seed);
    llc_treq_t s{}, r{};
    int rc_r = llc_trecv(ctx, LLC_ANY_SOURCE, 4242, 0, in.data(), len, &r);
    int rc_s = llc_tsend(ctx, to, 0, 4242, out.data(), len, 0, &s);
    ASSERT_GE(rc_r, 0);
    ASSERT_GE(rc_s, 0);
    ASSERT_TRUE(progress_until(ctx, [&] { return done(r) && done(s); }, 20));
    EXPECT_EQ(r.status, LLC_OK);
    EXPECT_EQ(s.status, LLC_OK);
    EXPECT_EQ(r.received, len);
    EXPECT_TRUE(check_pattern(in.data(), len, seed));
}

JobOptions one_rank(bool cma)
{
    JobOptions o = job({0});
    if (!cma)
        o.env = {{"LLC_CMA", "0"}};
    return o;
}

} // namespace

// ------------------------------------------------------------ the table alone

TEST(RequestTokens, StaleTokensNeverMatchAndSlotsAreReused)
{
    llc::RequestTokens t;
    llc::TreqState a{}, b{};
    uint64_t ta = t.issue(&a);
    EXPECT_NE(ta, 0u) << "0 means no request on the wire";
    EXPECT_EQ(t.find(ta), &a);
    EXPECT_EQ(t.find(0), nullptr);
    EXPECT_EQ(t.find(ta + (uint64_t(1) << 32)), nullptr) << "another generation";
    EXPECT_EQ(t.find(ta ^ 0xffff), nullptr) << "a slot beyond the table";
    t.release(ta);
    EXPECT_EQ(t.find(ta), nullptr);
    uint64_t tb = t.issue(&b);
    EXPECT_EQ(uint32_t(tb), uint32_t(ta)) << "the freed slot is reused";
    EXPECT_NE(tb, ta) << "with the next generation";
    EXPECT_EQ(t.find(ta), nullptr);
    EXPECT_EQ(t.find(tb), &b);
    t.release(ta); // stale: no effect
    EXPECT_EQ(t.find(tb), &b);
    EXPECT_EQ(t.in_use(), 1u);
}

TEST(RequestTokens, GrowsWithRequestsInFlight)
{
    llc::RequestTokens t;
    std::vector<llc::TreqState> reqs(1000);
    std::vector<uint64_t> tokens;
    for (auto &r : reqs)
        tokens.push_back(t.issue(&r));
    EXPECT_GE(t.capacity(), reqs.size());
    for (size_t i = 0; i < reqs.size(); i++)
        EXPECT_EQ(t.find(tokens[i]), &reqs[i]);
    for (uint64_t tok : tokens)
        t.release(tok);
    EXPECT_EQ(t.in_use(), 0u);
    for (uint64_t tok : tokens)
        EXPECT_EQ(t.find(tok), nullptr);
}

// ------------------------------------------------------------ through a context

TEST(TaggedHostile, ForgedRandomTokensFromAPeerAreDropped)
{
    constexpr int kEach = 50;
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        if (p.rank == 1) {
            std::mt19937_64 rng(20);
            std::vector<char> junk(64, 'j');
            for (int i = 0; i < kEach; i++) {
                forge_reply(ctx, 0, llc::kTagCts, rng(), rng());
                forge_reply(ctx, 0, llc::kTagData, rng(), rng(), junk.data(), junk.size());
                forge_reply(ctx, 0, llc::kTagFin, rng(), rng());
                forge_reply(ctx, 0, llc::kTagFail, rng(), rng());
                forge_reply(ctx, 0, llc::kTagFin, 0, 0);
                uint32_t bad[3] = {1, 2, 3}; // a header of the wrong size
                forge(ctx, 0, llc::kTagCts, bad, sizeof(bad));
            }
            // then real messages, eager and rendezvous
            char small[8] = "after!";
            std::vector<char> big(kBig);
            fill_pattern(big.data(), big.size(), 2);
            llc_treq_t s1{}, s2{};
            ASSERT_GE(llc_tsend(ctx, 0, 1, 76, small, sizeof(small), 0, &s1), 0);
            ASSERT_GE(llc_tsend(ctx, 0, 1, 77, big.data(), big.size(), 0, &s2), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(s1) && done(s2); }));
            EXPECT_EQ(s2.status, LLC_OK);
        } else {
            // a rendezvous send of ours in flight meanwhile (a token that exists)
            std::vector<char> mine(kBig);
            fill_pattern(mine.data(), mine.size(), 3);
            llc_treq_t pending{};
            ASSERT_EQ(llc_tsend(ctx, 1, 0, 99, mine.data(), mine.size(), 0, &pending), LLC_INPROGRESS);
            char small[8] = {};
            std::vector<char> in(kBig);
            llc_treq_t r1{}, r2{};
            ASSERT_GE(llc_trecv(ctx, 1, 76, 0, small, sizeof(small), &r1), 0);
            ASSERT_GE(llc_trecv(ctx, 1, 77, 0, in.data(), in.size(), &r2), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r1) && done(r2); }));
            EXPECT_EQ(stats(ctx).tag_rejected, uint64_t(6 * kEach));
            EXPECT_FALSE(done(pending)) << "no forged record completed our send";
            EXPECT_EQ(r2.status, LLC_OK);
            EXPECT_STREQ(small, "after!");
            EXPECT_TRUE(check_pattern(in.data(), in.size(), 2)) << "a message from the forger arrives intact";
            send_one_intact(ctx, 0, kBig, 4);
            EXPECT_EQ(job_sum(p, "checked", 1), 2u);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(pending); }));
            EXPECT_EQ(pending.status, LLC_OK);
        }
        if (p.rank == 1) {
            EXPECT_EQ(job_sum(p, "checked", 1), 2u);
            EXPECT_EQ(stats(ctx).tag_rejected, 0u);
            std::vector<char> in(kBig);
            llc_treq_t r{};
            ASSERT_GE(llc_trecv(ctx, 0, 99, 0, in.data(), in.size(), &r), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }));
            EXPECT_TRUE(check_pattern(in.data(), in.size(), 3));
        }
        finalize_ok(ctx);
    });
}

TEST(TaggedHostile, StaleTokensAfterCompletionAreDropped)
{
    LLC_EXPECT_JOB_OK(one_rank(false), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        std::vector<char> out(kBig), in(kBig);
        fill_pattern(out.data(), kBig, 5);
        llc_treq_t s{}, r{};
        ASSERT_EQ(llc_tsend(ctx, 0, 0, 1, out.data(), kBig, 0, &s), LLC_INPROGRESS);
        uint64_t stoken = token_of(s);
        ASSERT_NE(stoken, 0u);
        ASSERT_TRUE(progress_until(ctx, [&] { return stats(ctx).tag_unexpected == 1; }));
        ASSERT_EQ(llc_trecv(ctx, 0, 1, 0, in.data(), kBig, &r), LLC_INPROGRESS); // clear-to-send sent
        uint64_t rtoken = token_of(r);
        ASSERT_NE(rtoken, 0u);
        ASSERT_TRUE(progress_until(ctx, [&] { return done(s) && done(r); }));
        EXPECT_TRUE(check_pattern(in.data(), kBig, 5));
        EXPECT_EQ(llc::context_of(ctx).tagged().tokens().in_use(), 0u);

        // a new send takes the slot of one of them: the old tokens still name nothing
        llc_treq_t s2{};
        ASSERT_EQ(llc_tsend(ctx, 0, 0, 2, out.data(), kBig, 0, &s2), LLC_INPROGRESS);
        uint32_t slot = uint32_t(token_of(s2));
        EXPECT_TRUE(slot == uint32_t(stoken) || slot == uint32_t(rtoken));
        forge_reply(ctx, 0, llc::kTagCts, stoken, rtoken);
        forge_reply(ctx, 0, llc::kTagFin, stoken, 0);
        forge_reply(ctx, 0, llc::kTagFail, stoken, 0);
        forge_reply(ctx, 0, llc::kTagFin, rtoken, 0);
        forge_reply(ctx, 0, llc::kTagData, 0, rtoken, out.data(), kBig);
        expect_rejected(ctx, 5);
        EXPECT_FALSE(done(s2)) << "the stale acknowledgement did not complete the new send";
        std::fill(in.begin(), in.end(), 0);
        ASSERT_GE(llc_trecv(ctx, 0, 2, 0, in.data(), kBig, &r), 0);
        ASSERT_TRUE(progress_until(ctx, [&] { return done(s2) && done(r); }));
        EXPECT_EQ(s2.status, LLC_OK);
        EXPECT_TRUE(check_pattern(in.data(), kBig, 5));
        send_one_intact(ctx, 0, kBig, 6);
        EXPECT_EQ(stats(ctx).tag_rejected, 5u);
        finalize_ok(ctx);
    });
}

TEST(TaggedHostile, TokenOfACancelledReceiveIsDropped)
{
    LLC_EXPECT_JOB_OK(one_rank(false), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        std::vector<char> out(kBig), in(kBig);
        fill_pattern(out.data(), kBig, 7);
        llc_treq_t s{}, r{};
        ASSERT_EQ(llc_tsend(ctx, 0, 0, 1, out.data(), kBig, 0, &s), LLC_INPROGRESS);
        ASSERT_TRUE(progress_until(ctx, [&] { return stats(ctx).tag_unexpected == 1; }));
        ASSERT_EQ(llc_trecv(ctx, 0, 1, 0, in.data(), kBig, &r), LLC_INPROGRESS);
        uint64_t rtoken = token_of(r);
        ASSERT_TRUE(progress_until(ctx, [&] { return done(s) && done(r); }));

        // the same request posted again, then cancelled
        std::vector<char> other(kBig, 'x');
        ASSERT_EQ(llc_trecv(ctx, 0, 3, 0, other.data(), kBig, &r), LLC_INPROGRESS);
        int cancelled = 0;
        ASSERT_EQ(llc_tcancel(ctx, &r, &cancelled), LLC_OK);
        ASSERT_EQ(cancelled, 1);
        forge_reply(ctx, 0, llc::kTagData, 0, rtoken, out.data(), kBig);
        expect_rejected(ctx, 1);
        EXPECT_EQ(r.status, LLC_ERR_CANCELED);
        EXPECT_EQ(std::count(other.begin(), other.end(), 'x'), ptrdiff_t(kBig)) << "nothing was written";
        send_one_intact(ctx, 0, kBig, 8);
        send_one_intact(ctx, 0, 8, 9);
        finalize_ok(ctx);
    });
}

TEST(TaggedHostile, RepeatedOrMisplacedAcknowledgementsAreDropped)
{
    LLC_EXPECT_JOB_OK(one_rank(false), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        char out[8] = "sync-me", in[8] = {};
        llc_treq_t s{}, r{};
        ASSERT_EQ(llc_tsend(ctx, 0, 0, 1, out, sizeof(out), LLC_TSEND_SYNC, &s), LLC_INPROGRESS);
        uint64_t stoken = token_of(s);
        ASSERT_NE(stoken, 0u);
        // a clear-to-send for a synchronous eager send: out of place
        forge_reply(ctx, 0, llc::kTagCts, stoken, 1);
        forge_reply(ctx, 0, llc::kTagFail, stoken, 0);
        expect_rejected(ctx, 2);
        EXPECT_FALSE(done(s)) << "still waiting for its acknowledgement";
        ASSERT_GE(llc_trecv(ctx, 0, 1, 0, in, sizeof(in), &r), 0);
        ASSERT_TRUE(progress_until(ctx, [&] { return done(s) && done(r); }));
        EXPECT_EQ(s.status, LLC_OK);
        EXPECT_STREQ(in, "sync-me");
        // the acknowledgement again, twice
        forge_reply(ctx, 0, llc::kTagFin, stoken, 0);
        forge_reply(ctx, 0, llc::kTagFin, stoken, 0);
        expect_rejected(ctx, 4);

        // data of the wrong length for a receive that waits for data: the
        // receive keeps waiting and gets the real data
        std::vector<char> big(kBig), got(kBig);
        fill_pattern(big.data(), kBig, 10);
        llc_treq_t bs{}, br{};
        ASSERT_EQ(llc_tsend(ctx, 0, 0, 2, big.data(), kBig, 0, &bs), LLC_INPROGRESS);
        ASSERT_TRUE(progress_until(ctx, [&] { return stats(ctx).tag_unexpected == 2; }));
        ASSERT_EQ(llc_trecv(ctx, 0, 2, 0, got.data(), kBig, &br), LLC_INPROGRESS);
        std::vector<char> longer(kBig + 1, 'L');
        forge_reply(ctx, 0, llc::kTagData, 0, token_of(br), longer.data(), longer.size());
        ASSERT_TRUE(progress_until(ctx, [&] { return done(bs) && done(br); }));
        EXPECT_EQ(stats(ctx).tag_rejected, 5u);
        EXPECT_EQ(br.status, LLC_OK);
        EXPECT_TRUE(check_pattern(got.data(), kBig, 10));
        send_one_intact(ctx, 0, 8, 11);
        finalize_ok(ctx);
    });
}

TEST(TaggedHostile, UnreadableRendezvousBufferFailsOnlyThatReceive)
{
    if (!cma_permitted())
        GTEST_SKIP() << "process_vm_readv is not permitted here";
    LLC_EXPECT_JOB_OK(one_rank(true), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        struct Case {
            int32_t pid;
            uint64_t addr;
        } cases[] = {
            {int32_t(getpid()), 0x1000},                  // EFAULT: not mapped
            {int32_t(getpid()), ~uint64_t(0) - 4096},     // EFAULT: beyond the address space
            {int32_t(0x3ffffff0), 0x1000},                // ESRCH: no such process
        };
        int n = 0;
        for (const Case &c : cases) {
            llc::TagWire w{};
            w.tag = 50;
            w.length = kBig;
            w.sreq = 0xdead0000beefull; // names no send of ours: the failure notice is dropped too
            w.pid = c.pid;
            w.addr = c.addr;
            forge(ctx, 0, llc::kTagRts, &w, sizeof(w));
            std::vector<char> in(kBig);
            llc_treq_t r{};
            ASSERT_GE(llc_trecv(ctx, LLC_ANY_SOURCE, 50, 0, in.data(), kBig, &r), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return done(r); }, 10));
            EXPECT_EQ(r.status, LLC_ERR_PEER) << "case " << n;
            n++;
            EXPECT_EQ(stats(ctx).tag_read_failed, uint64_t(n));
        }
        expect_rejected(ctx, uint64_t(2 * n)); // each failed read, and each failure notice to no send
        uint64_t reads = stats(ctx).tag_cma_reads;
        send_one_intact(ctx, 0, kBig, 12);
        EXPECT_EQ(stats(ctx).tag_cma_reads, reads + 1) << "a good one is read with one copy";
        finalize_ok(ctx);
    });
}

// A send whose receiver could not read its buffer completes with an error
// (the receiver's failure notice), not never.
TEST(TaggedHostile, SenderLearnsOfAFailedRead)
{
    if (!cma_permitted())
        GTEST_SKIP() << "process_vm_readv is not permitted here";
    LLC_EXPECT_JOB_OK(one_rank(true), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        // our own pending send, announced again with a bad address
        std::vector<char> out(kBig, 'o');
        llc_treq_t s{};
        ASSERT_EQ(llc_tsend(ctx, 0, 0, 60, out.data(), kBig, 0, &s), LLC_INPROGRESS);
        ASSERT_TRUE(progress_until(ctx, [&] { return stats(ctx).tag_unexpected == 1; }));
        llc::TagWire w{};
        w.tag = 61;
        w.length = kBig;
        w.sreq = token_of(s);
        w.pid = int32_t(getpid());
        w.addr = 0x1000;
        forge(ctx, 0, llc::kTagRts, &w, sizeof(w));
        std::vector<char> in(kBig);
        llc_treq_t r{};
        ASSERT_GE(llc_trecv(ctx, 0, 61, 0, in.data(), kBig, &r), 0);
        ASSERT_TRUE(progress_until(ctx, [&] { return done(r) && done(s); }, 10));
        EXPECT_EQ(r.status, LLC_ERR_PEER);
        EXPECT_EQ(s.status, LLC_ERR_PEER);
        EXPECT_EQ(stats(ctx).tag_read_failed, 1u);
        // the real announcement of that send now names a send that is over
        std::vector<char> in2(kBig);
        llc_treq_t r2{};
        ASSERT_GE(llc_trecv(ctx, 0, 60, 0, in2.data(), kBig, &r2), 0);
        ASSERT_TRUE(progress_until(ctx, [&] { return done(r2); }, 10));
        EXPECT_EQ(r2.status, LLC_OK) << "its buffer is still there to read";
        expect_rejected(ctx, 2); // the failed read, then the stale acknowledgement of r2
        send_one_intact(ctx, 0, kBig, 13);
        finalize_ok(ctx);
    });
}
