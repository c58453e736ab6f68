// tagged_am_keyed_test.cpp - the tagged layer's one large-message protocol
// over keyed reads (tagged_am_keyed.cpp): large active messages to a peer
// whose transport has CapKeyedRead go as AmRts records with keyed spans,
// read by the receiver's transport, answered Fin (or Fail, or Cts + Data).
// Two processes on two emulated nodes (tcp), whose network transport is
// decorated with KeyedReadFake (common/keyed_read_fake.hpp): keyed reads the
// way verbs has them, between real processes, without an RDMA device (the
// verbs engine's own keyed reads are tested in verbs_rndv_test.cpp).
//
// Checked: payload bytes exact, one or several pieces; later messages,
// small and large, run in send order also while a read is held back; the
// sender's pins go once each message is answered; a read that fails fails
// that message alone (LLC_ERR_PEER), a refused registration copies the
// message, no landing buffer streams it (Cts + Data); a receiver that dies
// with the read pending fails the send and its pins go; forged keyed spans
// (a key never issued, a range past the piece, lengths that do not add up,
// unknown flags) are refused and counted, and nothing outside what was
// exposed is read.
#include "common/keyed_read_fake.hpp"
#include "common/test_util.hpp"

#include "core/context.hpp"
#include "tagged/tagged.hpp"
#include "transport/transport.hpp"

#include <unistd.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace llctest;

namespace {

constexpr unsigned kHandler = 5;
constexpr size_t kLarge = 100 * 1024; // above LLC_VERBS_RNDV_BYTES (64k): by keyed read

llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t s{};
    EXPECT_EQ(llc_get_stats(ctx, &s), LLC_OK);
    return s;
}

// Messages received: the sequence number in each header, and whether the
// payload carried that message's pattern.
struct Inbox {
    std::vector<uint64_t> seqs;
    std::vector<size_t> lens;
    int bad = 0;
};
void on_msg(llc_context_t *, void *arg, int, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    auto *in = static_cast<Inbox *>(arg);
    uint64_t seq = ~uint64_t(0);
    if (hdr_len == sizeof(seq))
        std::memcpy(&seq, hdr, sizeof(seq));
    in->seqs.push_back(seq);
    in->lens.push_back(len);
    if (!check_pattern(data, len, seq))
        in->bad++;
}

// The network transport of ctx decorated with keyed reads; the decorator.
KeyedReadFake *keyed(llc_context_t *ctx, KeyTable &table, int rank)
{
    KeyedReadFake *fake = nullptr;
    EXPECT_TRUE(llc::context_of(ctx).wrap_network_transport([&](std::unique_ptr<llc::Transport> inner) {
        auto f = std::make_unique<KeyedReadFake>(std::move(inner), table, rank);
        fake = f.get();
        return f;
    }));
    return fake;
}

// A job of two processes on two emulated nodes (tcp), each with its network
// transport decorated with keyed reads and kHandler registered; body runs
// in each after a fence (knobs set there act before the process's first
// progress call), then another fence and llc_finalize (with `finalize`; else
// the body left the job).
using PairBody = std::function<void(TestProcess &p, llc_context_t *ctx, KeyedReadFake *fake, Inbox &in)>;
void run_pair(const PairBody &body, bool finalize = true)
{
    KeyTable *table = KeyTable::create();
    LLC_EXPECT_JOB_OK(tcp_pair_job(), [table, &body, finalize](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        KeyedReadFake *fake = keyed(ctx, *table, p.rank);
        ASSERT_NE(fake, nullptr);
        Inbox in;
        ASSERT_EQ(llc_am_register(ctx, kHandler, on_msg, &in), LLC_OK);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        body(p, ctx, fake, in);
        if (!finalize)
            return;
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(ctx);
    });
}

// A send of message seq (len bytes of its pattern, in `pieces` iovs) and
// how it ended.
struct Sent {
    std::vector<char> buf;
    int status = 1; // 1: not completed yet
};
void on_done(void *arg, int status) { static_cast<Sent *>(arg)->status = status; }

void send_msg(llc_context_t *ctx, int dest, uint64_t seq, size_t len, Sent &s, int pieces = 1)
{
    s.buf.resize(len);
    fill_pattern(s.buf.data(), len, seq);
    std::vector<llc_iov_t> iov;
    const size_t per = len / size_t(pieces);
    for (int k = 0; k < pieces; k++)
        iov.push_back(llc_iov_t{s.buf.data() + size_t(k) * per, k + 1 == pieces ? len - size_t(k) * per : per});
    int rc = llc_am_send(ctx, dest, kHandler, &seq, sizeof(seq), iov.data(), int(iov.size()), on_done, &s);
    ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_last_error(ctx);
    if (rc == LLC_OK)
        s.status = LLC_OK;
}

size_t size_of(uint64_t i) { return i % 3 == 1 ? kLarge + size_t(i) * 1000 : 500 + size_t(i); }

// Rank 0 sends rank 1 `n` messages (every third large, some in pieces);
// all must complete with `status`.  Rank 1 receives those `expect` (by
// sequence number) in order, intact.
void exchange(llc_context_t *ctx, TestProcess &p, int n, KeyedReadFake *fake, Inbox &in,
              const std::vector<uint64_t> &expect)
{
    if (p.rank == 0) {
        std::vector<Sent> sent(static_cast<size_t>(n));
        for (int i = 0; i < n; i++)
            send_msg(ctx, 1, uint64_t(i), size_of(uint64_t(i)), sent[size_t(i)], i % 4 == 1 ? 3 : 1);
        EXPECT_TRUE(progress_until(ctx, [&] {
            for (const Sent &s : sent)
                if (s.status == 1)
                    return false;
            return true;
        }));
        for (int i = 0; i < n; i++)
            EXPECT_EQ(sent[size_t(i)].status, LLC_OK) << "message " << i;
        EXPECT_EQ(fake->pinned(), 0) << "pins left after every message was answered";
    } else {
        EXPECT_TRUE(progress_until(ctx, [&] { return in.seqs.size() >= expect.size(); }));
        EXPECT_EQ(in.seqs, expect);
        EXPECT_EQ(in.bad, 0);
    }
}

std::vector<uint64_t> all(int n)
{
    std::vector<uint64_t> v;
    for (int i = 0; i < n; i++)
        v.push_back(uint64_t(i));
    return v;
}

} // namespace

// Large messages (one or three pieces) among small ones: read by key,
// intact, in send order; while the receiver holds its first read back, the
// small message sent after it waits; every pin goes once answered.
TEST(TaggedAmKeyed, LargeMessagesAreReadByKeyInOrder)
{
    run_pair([](TestProcess &p, llc_context_t *ctx, KeyedReadFake *fake, Inbox &in) {
        if (p.rank == 1) {
            fake->hold_reads = true;
            EXPECT_TRUE(progress_until(ctx, [&] { return fake->reads_pending() == 1; }));
            for (int i = 0; i < 200; i++)
                llc_progress(ctx, nullptr);
            EXPECT_EQ(in.seqs, std::vector<uint64_t>{0}) << "a message ran before the large one before it";
            fake->hold_reads = false;
        }
        const int n = 12;
        exchange(ctx, p, n, fake, in, all(n));
        if (p.rank == 1) {
            EXPECT_EQ(fake->reads_done, uint64_t(n / 3));
            EXPECT_EQ(stats(ctx).tag_rejected, 0u);
        } else {
            EXPECT_EQ(stats(ctx).cma_msgs, 0u);
        }
    });
}

// A read that fails (the fake's READ error) fails that message alone: its
// send completes with LLC_ERR_PEER, its pins go, the rest arrive in order.
TEST(TaggedAmKeyed, FailedReadFailsOnlyThatMessage)
{
    run_pair([](TestProcess &p, llc_context_t *ctx, KeyedReadFake *fake, Inbox &in) {
        if (p.rank == 0) {
            Sent large;
            send_msg(ctx, 1, 1, kLarge, large);
            EXPECT_TRUE(progress_until(ctx, [&] { return large.status != 1; }));
            EXPECT_EQ(large.status, LLC_ERR_PEER);
            EXPECT_EQ(fake->pinned(), 0);
        } else {
            fake->fail_reads = true;
            EXPECT_TRUE(progress_until(ctx, [&] { return fake->reads_refused == 1; }));
            fake->fail_reads = false;
            EXPECT_TRUE(in.seqs.empty());
        }
        EXPECT_EQ(TestProcess::fence(&p), 0);
        exchange(ctx, p, 6, fake, in, all(6));
    });
}

// The sender's registration refused: the message is copied as any other
// (nothing read by key); the receiver without a landing buffer: it asks for
// the payload (Cts) and it is streamed.  Both arrive intact, in order.
TEST(TaggedAmKeyed, RefusedRegistrationCopiesAndNoLandingBufferStreams)
{
    for (bool sender_refuses : {true, false}) {
        run_pair([sender_refuses](TestProcess &p, llc_context_t *ctx, KeyedReadFake *fake, Inbox &in) {
            if (p.rank == 0)
                fake->fail_expose = sender_refuses;
            else
                fake->fail_landing = !sender_refuses;
            const int n = 9;
            exchange(ctx, p, n, fake, in, all(n));
            if (p.rank == 1) {
                EXPECT_EQ(fake->reads_done, 0u);
            }
        });
    }
}

// The receiver dies with the read of a large message pending (held): the
// sender's send completes with LLC_ERR_PEER and its pins go.
TEST(TaggedAmKeyed, DeadReceiverReleasesThePins)
{
    run_pair(
        [](TestProcess &p, llc_context_t *ctx, KeyedReadFake *fake, Inbox &) {
            if (p.rank == 1) {
                fake->hold_reads = true;
                EXPECT_TRUE(progress_until(ctx, [&] { return fake->reads_pending() == 1; }));
                p.depart();
                _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize, the read never ends
            }
            Sent large;
            send_msg(ctx, 1, 1, kLarge, large);
            EXPECT_EQ(fake->pinned(), 1);
            p.depart();
            const double start = now_s();
            while (large.status == 1 && now_s() - start < 30)
                llc_progress(ctx, nullptr); // errors expected: the peer is gone
            EXPECT_EQ(large.status, LLC_ERR_PEER);
            EXPECT_EQ(fake->pinned(), 0);
            llc_finalize(ctx); // the dead peer makes it report an error; it must not hang
        },
        false);
}

// Forged AmRts records with keyed spans from rank 0: a key never issued, a
// span past the exposed piece, spans whose lengths do not add up, unknown
// flags.  The first two are read by no one (the fake refuses the READ: the
// exposed bytes only are readable), the last two are dropped as malformed
// (tag_rejected); each is answered Fail.  None is delivered; a real message
// after them arrives intact.
TEST(TaggedAmKeyed, ForgedKeyedSpansAreRefusedAndCounted)
{
    run_pair([](TestProcess &p, llc_context_t *ctx, KeyedReadFake *fake, Inbox &in) {
        if (p.rank == 0) {
            std::vector<char> piece(8192, 'x');
            std::string why;
            llc_iov_t iov{piece.data(), 4096};
            auto real = fake->expose(1, &iov, 1, &why); // a live key for the first 4096 bytes
            ASSERT_NE(real, nullptr);
            const llc::KeyedSpan good = real->spans[0];
            struct Case {
                llc::KeyedSpan span;
                uint64_t length;
                uint32_t flags;
            };
            const Case cases[] = {
                {{good.addr, good.len, good.key ^ 0x77, 0}, good.len, llc::kAmKeyed},        // a key never issued
                {{good.addr, good.len + 4096, good.key, 0}, good.len + 4096, llc::kAmKeyed}, // past the piece
                {good, good.len + 1, llc::kAmKeyed},                                         // lengths do not add up
                {good, good.len, llc::kAmKeyed | 0x100},                                     // unknown flags
            };
            llc::Context &c = llc::context_of(ctx);
            for (const Case &k : cases) {
                llc::AmRtsWire w{};
                w.sreq = 0x5eed0000ull; // none of ours: rank 1's Fail is dropped here
                w.length = k.length;
                w.handler = kHandler;
                w.spans = 1;
                w.flags = k.flags;
                llc_iov_t rec{const_cast<llc::KeyedSpan *>(&k.span), sizeof(k.span)};
                int rc = c.send_am(1, llc::kTagAmRts, &w, sizeof(w), &rec, 1, nullptr, nullptr);
                EXPECT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_strerror(rc);
            }
            // each answered Fail, naming no send of ours: dropped here, counted
            EXPECT_TRUE(progress_until(ctx, [&] { return stats(ctx).tag_rejected >= 4; }));
            EXPECT_EQ(stats(ctx).tag_rejected, 4u);
            real.reset();
            Sent after;
            send_msg(ctx, 1, 7, kLarge, after);
            EXPECT_TRUE(progress_until(ctx, [&] { return after.status != 1; }));
            EXPECT_EQ(after.status, LLC_OK);
            EXPECT_EQ(fake->pinned(), 0);
        } else {
            EXPECT_TRUE(progress_until(ctx, [&] { return in.seqs.size() == 1; }));
            EXPECT_EQ(in.seqs, std::vector<uint64_t>{7});
            EXPECT_EQ(in.bad, 0);
            EXPECT_EQ(fake->reads_refused, 2u);
            EXPECT_EQ(fake->reads_done, 1u);
            EXPECT_EQ(stats(ctx).tag_rejected, 2u); // the two malformed ones
        }
    });
}
