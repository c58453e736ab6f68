// tagged_test.cpp - tagged point-to-point: MPI's matching rules (order, any
// source, any tag), eager and request-to-send messages raced against
// receives posted before, after and in between, synchronous sends,
// truncation, cancel, probe and matched probe, on every transport.
#include "common/alloc_counter.hpp"
#include "common/test_util.hpp"

#include "tagged/tag_matcher.hpp"

#include <cstring>
#include <random>
#include <vector>

using namespace llctest;

namespace {

// ------------------------------------------------------------ the matcher alone

struct PostedRecv {
    llc_treq_t req{};
    llc::TreqState &st() { return llc::state_of(&req); }
    PostedRecv(uint64_t tag, uint64_t ignore, int source)
    {
        st().kind = llc::TreqState::Recv;
        st().tag = tag;
        st().ignore = ignore;
        st().source = source;
    }
};

llc::TagEnvelope envelope(uint64_t tag, uint32_t source) { return llc::TagEnvelope{tag, source, int(source), 8}; }

llc::Unexpected *unexpected(llc::TagMatcher &m, uint64_t tag, uint32_t source, uint64_t length)
{
    llc::Unexpected *u = m.new_unexpected(0);
    u->env = llc::TagEnvelope{tag, source, int(source), length};
    return u;
}

} // namespace

TEST(TagMatcher, PostedReceivesMatchInPostingOrder)
{
    llc::TagMatcher m;
    PostedRecv a(7, 0, 1), b(7, 0, LLC_ANY_SOURCE), c(7, 0, 1);
    m.post(a.st());
    m.post(b.st());
    m.post(c.st());
    EXPECT_EQ(m.take_posted(envelope(7, 2)), &b.st()) << "source 2 skips the receive for source 1";
    EXPECT_EQ(m.take_posted(envelope(7, 1)), &a.st());
    EXPECT_EQ(m.take_posted(envelope(8, 1)), nullptr) << "tag 8 matches nothing";
    EXPECT_EQ(m.take_posted(envelope(7, 1)), &c.st());
    EXPECT_EQ(m.posted_count(), 0u);
}

TEST(TagMatcher, IgnoredBitsAreWildcards)
{
    llc::TagMatcher m;
    const uint64_t ctx_bits = uint64_t(5) << 32;
    PostedRecv any_tag(ctx_bits, 0xffffffffull, LLC_ANY_SOURCE);
    m.post(any_tag.st());
    EXPECT_EQ(m.take_posted(envelope((uint64_t(6) << 32) | 3, 0)), nullptr) << "another context never matches";
    EXPECT_EQ(m.take_posted(envelope(ctx_bits | 12345, 0)), &any_tag.st());
}

TEST(TagMatcher, UnexpectedMessagesMatchInArrivalOrderAndCanBeProbed)
{
    llc::TagMatcher m;
    m.add_unexpected(unexpected(m, 1, 0, 10));
    m.add_unexpected(unexpected(m, 2, 1, 20));
    m.add_unexpected(unexpected(m, 1, 1, 30));
    llc::Unexpected *peek = m.find_unexpected(1, 0, 1, false);
    ASSERT_NE(peek, nullptr);
    EXPECT_EQ(peek->env.length, 30u);
    EXPECT_EQ(m.unexpected_count(), 3u) << "a probe leaves the message queued";
    auto first = m.own(m.find_unexpected(0, ~0ull, LLC_ANY_SOURCE, true));
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->env.length, 10u) << "any source, any tag: the oldest";
    auto second = m.own(m.find_unexpected(1, 0, LLC_ANY_SOURCE, true));
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(second->env.length, 30u);
    EXPECT_EQ(m.unexpected_count(), 1u);
}

TEST(UnexpectedPool, RecordsAndBuffersAreReusedBySizeClass)
{
    llc::UnexpectedPool pool;
    llc::Unexpected *small = pool.take(8);
    ASSERT_NE(small->data, nullptr);
    char *small_buf = small->data;
    small->env.length = 8;
    small->sreq = 42;
    pool.give(small);
    EXPECT_EQ(pool.kept(), 1u);
    llc::Unexpected *again = pool.take(60);
    EXPECT_EQ(again, small) << "a record of the same class comes back";
    EXPECT_EQ(again->data, small_buf) << "with its buffer";
    EXPECT_EQ(again->sreq, 0u) << "and its other fields reset";
    EXPECT_EQ(again->env.length, 0u);
    llc::Unexpected *bigger = pool.take(65);
    EXPECT_NE(bigger, again) << "65 bytes need the next class";
    llc::Unexpected *none = pool.take(0);
    EXPECT_EQ(none->data, nullptr) << "no payload, no buffer";
    llc::Unexpected *huge = pool.take(llc::UnexpectedPool::class_bytes(llc::UnexpectedPool::kClasses - 1) + 1);
    EXPECT_EQ(huge->size_class, llc::UnexpectedPool::kOwnBuffer);
    std::memset(huge->data, 1, llc::UnexpectedPool::class_bytes(llc::UnexpectedPool::kClasses - 1) + 1);
    pool.give(huge);
    EXPECT_EQ(pool.kept(), 0u) << "a buffer above the largest class is not kept";
    pool.give(again);
    pool.give(bigger);
    pool.give(none);
    EXPECT_EQ(pool.kept(), 3u);
}

TEST(UnexpectedPool, KeepsAtMostItsLimitPerClass)
{
    llc::UnexpectedPool pool;
    std::vector<llc::Unexpected *> taken;
    for (size_t i = 0; i < llc::UnexpectedPool::keep_limit(1) + 5; i++)
        taken.push_back(pool.take(16));
    for (size_t i = 0; i < llc::UnexpectedPool::keep_limit(5) + 5; i++)
        taken.push_back(pool.take(10000));
    for (llc::Unexpected *u : taken)
        pool.give(u);
    EXPECT_EQ(pool.kept(), llc::UnexpectedPool::keep_limit(1) + llc::UnexpectedPool::keep_limit(5));
    EXPECT_LT(pool.kept_bytes(), size_t(64 * 1024)) << "fewer of the large buffers are kept";
}

TEST(TagMatcher, UnpostedReceiveNeverMatches)
{
    llc::TagMatcher m;
    PostedRecv a(3, 0, 0);
    m.post(a.st());
    EXPECT_TRUE(m.unpost(a.st()));
    EXPECT_FALSE(m.unpost(a.st())) << "twice";
    EXPECT_EQ(m.take_posted(envelope(3, 0)), nullptr);
}

// ------------------------------------------------------------ jobs

namespace {

struct Completed {
    int count = 0;
};

void count_cb(llc_treq_t *req) { static_cast<Completed *>(req->user)->count++; }

// Post or send and return whether it is already complete; fails the test on an error.
bool started(llc_context_t *ctx, int rc)
{
    EXPECT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_strerror(rc) << ": " << llc_last_error(ctx);
    return rc == LLC_OK;
}

void wait_all(llc_context_t *ctx, const Completed &done, int target)
{
    progress_until(ctx, [&] { return done.count >= target; });
}

// Size of message i of the random stream (seeded): eager and rendezvous mixed.
size_t stream_size(std::mt19937_64 &rng)
{
    switch (rng() % 5) {
    case 0: return 0;
    case 1: return size_t(rng() % 64);
    case 2: return size_t(rng() % 16384);
    case 3: return 16384 + size_t(rng() % 200000);
    default: return size_t(rng() % 2048);
    }
}

// Rank 0 streams kMessages messages with tags 0..2; rank 1 receives them
// with receives posted at random points (before the messages, after, in
// between), some with any tag and any source, and checks each one's bytes:
// non-overtaking order makes receive j the match of message j.  in_place:
// the transport reads rendezvous payloads straight into the posted buffers
// (tcp), which the receiver's counters must show.  offers: the receives
// name the sender's rank (llc_trecv_from), so that those posted first are
// offered to it (offers) and race the messages already on their way;
// some buffers are then larger than their message, so that eager messages
// meet offered receives too.
void race(JobOptions o, unsigned seed, bool in_place = false, bool offers = false)
{
    LLC_EXPECT_JOB_OK(o, [seed, in_place, offers](TestProcess &p) {
        constexpr int kMessages = 300;
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        int me = p.rank, last = p.size - 1;
        std::mt19937_64 sizes(seed);
        std::vector<size_t> len(kMessages);
        for (auto &l : len)
            l = stream_size(sizes);
        Completed done, rdone;
        std::vector<llc_treq_t> reqs(kMessages), rreqs(kMessages);
        std::vector<std::vector<char>> bufs(kMessages), rbufs(kMessages);
        int immediate = 0, rimmediate = 0;
        constexpr int kPostedFirst = 10; // receives posted before the sender starts
        constexpr uint64_t kGo = 99;
        if (me == 0) {
            std::mt19937_64 pace(seed * 31 + 1);
            if (me != last) {
                char go = 0;
                llc_treq_t g{};
                g.cb = count_cb;
                g.user = &done;
                if (!started(ctx, llc_trecv(ctx, last, kGo, 0, &go, 1, &g)))
                    wait_all(ctx, done, 1);
                done.count = 0;
            }
            for (int i = 0; i < kMessages; i++) {
                bufs[i].resize(len[i] + 1);
                fill_pattern(bufs[i].data(), len[i], uint64_t(i) + seed);
                reqs[i].cb = count_cb;
                reqs[i].user = &done;
                unsigned flags = i % 7 == 3 ? LLC_TSEND_SYNC : 0;
                immediate += started(ctx, llc_tsend(ctx, last, 0, uint64_t(i % 3), bufs[i].data(), len[i], flags,
                                                   &reqs[i]));
                for (unsigned k = pace() % 4; k > 0; k--)
                    ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
            }
            if (me != last)
                wait_all(ctx, done, kMessages - immediate);
        }
        if (me == last) {
            std::mt19937_64 pace(seed * 17 + 5);
            auto &reqs = rreqs;
            auto &bufs = rbufs;
            for (int i = 0; i < kMessages; i++) {
                bufs[i].assign(len[i] + 1 + pace() % 3 + (offers && pace() % 4 != 0 ? 20000 : 0), 0);
                reqs[i].cb = count_cb;
                reqs[i].user = &rdone;
                // (with offers, fewer wildcards and small buffers: a
                // receive that is not offered keeps every later one it
                // overlaps from being offered)
                bool any_tag = pace() % (offers ? 10 : 4) == 0, any_source = pace() % (offers ? 12 : 3) == 0;
                uint64_t ignore = any_tag ? ~0ull : 0;
                int source = any_source ? LLC_ANY_SOURCE : 0;
                rimmediate += started(ctx, offers ? llc_trecv_from(ctx, source, 0, uint64_t(i % 3), ignore,
                                                                  bufs[i].data(), bufs[i].size(), &reqs[i])
                                                  : llc_trecv(ctx, source, uint64_t(i % 3), ignore, bufs[i].data(),
                                                              bufs[i].size(), &reqs[i]));
                for (unsigned k = pace() % 50; k > 0; k--)
                    ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
                if (i + 1 == kPostedFirst && me != 0) {
                    char go = 1;
                    llc_treq_t g{};
                    g.cb = count_cb;
                    g.user = &rdone;
                    rimmediate += started(ctx, llc_tsend(ctx, 0, uint32_t(me), kGo, &go, 1, 0, &g)) ? 0 : -1;
                }
                if (i + 1 == kMessages / 2) {
                    // wait until the next message has arrived before its receive: unexpected
                    int found = 0;
                    progress_until(ctx, [&] {
                        EXPECT_EQ(llc_tprobe(ctx, 0, 0, ~0ull, &found, nullptr), LLC_OK);
                        return found != 0;
                    });
                }
            }
            wait_all(ctx, rdone, kMessages - rimmediate);
            if (me == 0)
                wait_all(ctx, done, kMessages - immediate);
            for (int i = 0; i < kMessages; i++) {
                EXPECT_EQ(reqs[i].status, LLC_OK) << "receive " << i;
                EXPECT_EQ(reqs[i].tag, uint64_t(i % 3)) << "receive " << i;
                EXPECT_EQ(reqs[i].src_rank, 0);
                ASSERT_EQ(reqs[i].length, len[i]) << "receive " << i << " got another message";
                EXPECT_EQ(reqs[i].received, len[i]);
                EXPECT_TRUE(check_pattern(bufs[i].data(), len[i], uint64_t(i) + seed)) << "bytes of message " << i;
                EXPECT_EQ(bufs[i][len[i]], 0) << "wrote past the message " << i;
            }
            llc_stats_t s;
            ASSERT_EQ(llc_get_stats(ctx, &s), LLC_OK);
            EXPECT_GT(s.tag_unexpected, 0u) << "some messages came before their receive";
            if (p.size > 1) { // (to itself, every send comes before its receive)
                EXPECT_LT(s.tag_unexpected, uint64_t(kMessages)) << "some receives were posted first";
            }
            if (in_place) {
                EXPECT_GT(s.tag_data_in_place, 0u) << "rendezvous payloads read straight into the receive buffers";
            } else {
                EXPECT_EQ(s.tag_data_in_place, 0u);
            }
            if (offers && p.size > 1) {
                EXPECT_GT(s.tag_offers_sent, 0u) << "receives posted first were offered";
                EXPECT_GT(s.tag_offers_used, 0u) << "the sender wrote into some of them";
                EXPECT_LE(s.tag_offers_used + s.tag_offers_declined, s.tag_offers_sent);
            } else {
                EXPECT_EQ(s.tag_offers_sent, 0u);
            }
        }
        finalize_ok(ctx);
    });
}

} // namespace

TEST(Tagged, RaceShm)
{
    for (unsigned seed : {1u, 2u, 3u})
        race(job({0, 0}), seed);
}
TEST(Tagged, RaceShmWithoutCma)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_CMA", "0"}};
    race(o, 4);
}
TEST(Tagged, RaceTcp) { race(tcp_pair_job(), 5, true); }
TEST(Tagged, RaceUdpWithLoss)
{
    JobOptions o = udp_pair_job();
    o.env.push_back({"LLC_UDP_DROP_PERMILLE", "50"});
    race(o, 6);
}
TEST(Tagged, RaceSelf) { race(job({0}), 7); }

// The same races with receives offered to the sender (offers): written
// by process_vm_writev (shm), carried in the Put through the ring (shm
// without CMA), read from the socket into the buffer (tcp), over udp at 5 %
// loss; and to itself, where nothing is offered.
TEST(TaggedOffers, RaceShm)
{
    for (unsigned seed : {11u, 12u, 13u, 14u})
        race(job({0, 0}), seed, false, true);
}
TEST(TaggedOffers, RaceShmWithoutCma)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_CMA", "0"}};
    race(o, 15, false, true);
}
TEST(TaggedOffers, RaceTcp)
{
    for (unsigned seed : {16u, 17u})
        race(tcp_pair_job(), seed, true, true);
}
TEST(TaggedOffers, RaceUdpWithLoss)
{
    JobOptions o = udp_pair_job();
    o.env.push_back({"LLC_UDP_DROP_PERMILLE", "50"});
    race(o, 18, false, true);
}
TEST(TaggedOffers, RaceSelf) { race(job({0}), 19, false, true); }

// Receives of any source on rank 2 take messages from a node-local sender
// (shm) and a remote one (tcp) at once; per sender the order holds.
TEST(Tagged, AnySourceFromShmAndTcpAtOnce)
{
    JobOptions o = job({0, 1, 1});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        constexpr int kEach = 200;
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Completed done;
        if (p.rank < 2) {
            std::vector<llc_treq_t> reqs(kEach);
            std::vector<std::vector<char>> bufs(kEach);
            int immediate = 0;
            for (int i = 0; i < kEach; i++) {
                size_t n = size_t(i % 5 == 0 ? 40000 + i : i * 7);
                bufs[i].resize(n);
                fill_pattern(bufs[i].data(), n, uint64_t(p.rank * 1000 + i));
                reqs[i].cb = count_cb;
                reqs[i].user = &done;
                immediate += started(ctx, llc_tsend(ctx, 2, uint32_t(p.rank), 9, bufs[i].data(), n, 0, &reqs[i]));
            }
            wait_all(ctx, done, kEach - immediate);
        } else {
            int next[2] = {0, 0};
            std::vector<char> buf(65536);
            for (int i = 0; i < 2 * kEach; i++) {
                llc_treq_t r{};
                r.cb = count_cb;
                r.user = &done;
                int before = done.count;
                if (!started(ctx, llc_trecv(ctx, LLC_ANY_SOURCE, 9, 0, buf.data(), buf.size(), &r)))
                    wait_all(ctx, done, before + 1);
                ASSERT_EQ(r.status, LLC_OK);
                ASSERT_TRUE(r.source == 0 || r.source == 1);
                int k = next[r.source]++;
                size_t n = size_t(k % 5 == 0 ? 40000 + k : k * 7);
                ASSERT_EQ(r.length, n) << "message " << k << " of sender " << r.source << " out of order";
                EXPECT_TRUE(check_pattern(buf.data(), n, uint64_t(r.source * 1000 + k)));
            }
            EXPECT_EQ(next[0], kEach);
            EXPECT_EQ(next[1], kEach);
        }
        finalize_ok(ctx);
    });
}

namespace {

// A synchronous send stays incomplete until the receive is posted.
void sync_send(JobOptions o, size_t n)
{
    LLC_EXPECT_JOB_OK(o, [n](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Completed done;
        std::vector<char> buf(n + 1);
        if (p.rank == 0) {
            fill_pattern(buf.data(), n, 77);
            llc_treq_t s{}, go{};
            s.cb = go.cb = count_cb;
            s.user = go.user = &done;
            ASSERT_FALSE(started(ctx, llc_tsend(ctx, 1, 0, 5, buf.data(), n, LLC_TSEND_SYNC, &s)));
            double until = now_s() + 0.3;
            while (now_s() < until)
                ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
            EXPECT_EQ(done.count, 0) << "the synchronous send completed before its receive was posted";
            char token = 1;
            wait_all(ctx, done, started(ctx, llc_tsend(ctx, 1, 0, 6, &token, 1, 0, &go)) ? 1 : 2);
            EXPECT_EQ(s.status, LLC_OK);
        } else {
            char token = 0;
            llc_treq_t go{}, r{};
            go.cb = r.cb = count_cb;
            go.user = r.user = &done;
            if (!started(ctx, llc_trecv(ctx, 0, 6, 0, &token, 1, &go)))
                wait_all(ctx, done, 1);
            int before = done.count;
            if (!started(ctx, llc_trecv(ctx, 0, 5, 0, buf.data(), n, &r)))
                wait_all(ctx, done, before + 1);
            EXPECT_EQ(r.status, LLC_OK);
            EXPECT_TRUE(check_pattern(buf.data(), n, 77));
        }
        finalize_ok(ctx);
    });
}

} // namespace

TEST(Tagged, SyncSendWaitsForTheReceiveShmEager) { sync_send(job({0, 0}), 100); }
TEST(Tagged, SyncSendWaitsForTheReceiveShmRendezvous) { sync_send(job({0, 0}), 300000); }
TEST(Tagged, SyncSendWaitsForTheReceiveTcpRendezvous) { sync_send(tcp_pair_job(), 300000); }

namespace {

// Too-long messages truncate that receive only; a cancelled receive gets no
// data; probes see the next message and matched probes take it.
void truncate_cancel_probe(JobOptions o)
{
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        const size_t sizes[] = {100, 300000, 64, 200000};
        const uint64_t tags[] = {1, 1, 2, 3};
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Completed done;
        if (p.rank == 0) {
            // wait for rank 1's cancelled receive of tag 9 to be gone
            char token = 0;
            llc_treq_t go{};
            go.cb = count_cb;
            go.user = &done;
            if (!started(ctx, llc_trecv(ctx, 1, 8, 0, &token, 1, &go)))
                wait_all(ctx, done, 1);
            done.count = 0;
            std::vector<std::vector<char>> bufs;
            std::vector<llc_treq_t> reqs(5);
            int immediate = 0;
            for (int i = 0; i < 4; i++) {
                bufs.emplace_back(sizes[i]);
                fill_pattern(bufs[i].data(), sizes[i], uint64_t(i));
                reqs[i].cb = count_cb;
                reqs[i].user = &done;
                immediate += started(ctx, llc_tsend(ctx, 1, 0, tags[i], bufs[i].data(), sizes[i], 0, &reqs[i]));
            }
            char nine = 9;
            reqs[4].cb = count_cb;
            reqs[4].user = &done;
            immediate += started(ctx, llc_tsend(ctx, 1, 0, 9, &nine, 1, 0, &reqs[4]));
            wait_all(ctx, done, 5 - immediate);
        } else {
            // a receive of tag 9, cancelled before anything is sent
            char nine = 0;
            llc_treq_t c{};
            c.cb = count_cb;
            c.user = &done;
            ASSERT_FALSE(started(ctx, llc_trecv(ctx, 0, 9, 0, &nine, 1, &c)));
            int cancelled = 0;
            ASSERT_EQ(llc_tcancel(ctx, &c, &cancelled), LLC_OK);
            EXPECT_EQ(cancelled, 1);
            EXPECT_EQ(c.status, LLC_ERR_CANCELED);
            char token = 1;
            llc_treq_t go{};
            go.cb = count_cb;
            go.user = &done;
            if (!started(ctx, llc_tsend(ctx, 0, 1, 8, &token, 1, 0, &go)))
                wait_all(ctx, done, 1);
            // truncation: 100 bytes into 50, 300000 into 1000
            std::vector<char> small(50), medium(1000);
            for (int i = 0; i < 2; i++) {
                llc_treq_t r{};
                r.cb = count_cb;
                r.user = &done;
                std::vector<char> &b = i == 0 ? small : medium;
                int before = done.count;
                if (!started(ctx, llc_trecv(ctx, 0, 1, 0, b.data(), b.size(), &r)))
                    wait_all(ctx, done, before + 1);
                EXPECT_EQ(r.status, LLC_ERR_TRUNCATE);
                EXPECT_EQ(r.length, sizes[i]);
                EXPECT_EQ(r.received, b.size());
                EXPECT_TRUE(check_pattern(b.data(), b.size(), uint64_t(i)) || b.size() < 8)
                    << "the prefix that fits arrives";
            }
            // probe tag 3 (the rendezvous one), then take tag 2 and 3 by matched probe
            llc_treq_t info{};
            int found = 0;
            progress_until(ctx, [&] {
                EXPECT_EQ(llc_tprobe(ctx, 0, 3, 0, &found, &info), LLC_OK);
                return found != 0;
            });
            EXPECT_EQ(info.length, sizes[3]);
            EXPECT_EQ(info.tag, 3u);
            for (int i = 2; i < 4; i++) {
                llc_tmsg_t *msg = nullptr;
                found = 0;
                progress_until(ctx, [&] {
                    EXPECT_EQ(llc_tmprobe(ctx, LLC_ANY_SOURCE, 0, ~0ull, &found, &msg, &info), LLC_OK);
                    return found != 0;
                });
                ASSERT_NE(msg, nullptr);
                EXPECT_EQ(info.tag, tags[i]) << "any tag: the older message first";
                EXPECT_EQ(llc_tprobe(ctx, 0, tags[i], 0, &found, nullptr), LLC_OK);
                EXPECT_EQ(found, 0) << "a matched-probed message leaves matching";
                std::vector<char> b(sizes[i]);
                llc_treq_t r{};
                r.cb = count_cb;
                r.user = &done;
                int before = done.count;
                if (!started(ctx, llc_tmrecv(ctx, msg, b.data(), b.size(), &r)))
                    wait_all(ctx, done, before + 1);
                EXPECT_EQ(r.status, LLC_OK);
                EXPECT_TRUE(check_pattern(b.data(), b.size(), uint64_t(i)));
            }
            // the message of tag 9 went to no cancelled receive: a new one gets it
            llc_treq_t r{};
            r.cb = count_cb;
            r.user = &done;
            char got = 0;
            int before = done.count;
            if (!started(ctx, llc_trecv(ctx, 0, 9, 0, &got, 1, &r)))
                wait_all(ctx, done, before + 1);
            EXPECT_EQ(got, 9);
            EXPECT_EQ(nine, 0) << "the cancelled receive's buffer was written";
        }
        finalize_ok(ctx);
    });
}

} // namespace

TEST(Tagged, TruncateCancelProbeShm) { truncate_cancel_probe(job({0, 0})); }
TEST(Tagged, TruncateCancelProbeTcp) { truncate_cancel_probe(tcp_pair_job()); }

TEST(Tagged, BadArgumentsAreRefused)
{
    LLC_EXPECT_JOB_OK(job({0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        llc_treq_t r{};
        EXPECT_EQ(llc_tsend(ctx, 5, 0, 0, "x", 1, 0, &r), LLC_ERR_INVALID);
        EXPECT_TRUE(contains(llc_last_error(ctx), "out of range")) << llc_last_error(ctx);
        EXPECT_EQ(llc_tsend(ctx, 0, 0, 0, nullptr, 4, 0, &r), LLC_ERR_INVALID);
        EXPECT_EQ(llc_tsend(ctx, 0, 0, 0, "x", 1, 0x80, &r), LLC_ERR_INVALID);
        EXPECT_EQ(llc_trecv(ctx, -2, 0, 0, nullptr, 0, &r), LLC_ERR_INVALID);
        EXPECT_EQ(llc_trecv(ctx, 0, 0, 0, nullptr, 0, nullptr), LLC_ERR_INVALID);
        EXPECT_NE(llc_caps(ctx) & LLC_CAP_TAGGED, 0u);
        EXPECT_NE(llc_caps(ctx) & LLC_CAP_REMOTE_WRITE, 0u) << "offers (llc_trecv_from)";
        finalize_ok(ctx);
    });
}

// The counter behind the zero-allocation check counts at all, in every
// build: through the replaced operator new, or under ThreadSanitizer
// (which keeps its own operator new) through the runtime's malloc hook.
// Direct calls of the allocation function: a new-expression may be elided.
TEST(AllocCounter, CountsOperatorNew)
{
    CountAllocations counter;
    void *p = ::operator new(64);
    EXPECT_GE(counter.count(), 1u);
    ::operator delete(p);
}

// A steady ping-pong of small tagged messages between two processes of a
// node allocates nothing on the heap, on either side (issue target: zero
// allocations per message).  Counted through operator new, which every
// allocation of libllc goes through.
TEST(Tagged, SteadyShmPingPongAllocatesNothing)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        constexpr int kWarm = 200, kRounds = 2000;
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        int peer = 1 - p.rank;
        uint64_t out = 0, in = 0;
        Completed done;
        llc_treq_t s{}, r{};
        s.cb = r.cb = count_cb;
        s.user = r.user = &done;
        Completed sdone, rdone;
        s.user = &sdone;
        r.user = &rdone;
        auto round = [&](int i) {
            sdone.count = rdone.count = 0;
            bool recv_now = false, send_now = false;
            if (p.rank == 0) {
                recv_now = started(ctx, llc_trecv(ctx, peer, 1, 0, &in, 8, &r));
                out = uint64_t(i);
                send_now = started(ctx, llc_tsend(ctx, peer, uint32_t(p.rank), 1, &out, 8, 0, &s));
            } else {
                recv_now = started(ctx, llc_trecv(ctx, peer, 1, 0, &in, 8, &r));
                progress_until(ctx, [&] { return recv_now || rdone.count == 1; });
                out = in;
                send_now = started(ctx, llc_tsend(ctx, peer, uint32_t(p.rank), 1, &out, 8, 0, &s));
            }
            progress_until(ctx, [&] { return (recv_now || rdone.count == 1) && (send_now || sdone.count == 1); });
            EXPECT_EQ(in, uint64_t(i));
        };
        for (int i = 0; i < kWarm; i++)
            round(i);
        CountAllocations counter;
        for (int i = kWarm; i < kWarm + kRounds; i++)
            round(i);
        EXPECT_EQ(counter.count(), 0u) << "heap allocations in " << kRounds << " round trips on rank " << p.rank;
        finalize_ok(ctx);
    });
}

// Messages that arrive before their receives are posted (unexpected, as
// when a sender runs ahead of its receiver) allocate nothing either, once
// the pattern has been seen: their records and payload buffers are reused
// (unexpected_pool.hpp).  8-byte and 1 KiB messages, 32 in flight.
TEST(Tagged, SteadyUnexpectedMessagesAllocateNothing)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        constexpr int kBatch = 32, kWarm = 60, kRounds = 100;
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        int peer = 1 - p.rank;
        std::vector<char> out(1024 * kBatch), in(1024 * kBatch);
        std::vector<llc_treq_t> reqs(kBatch);
        Completed done;
        for (auto &q : reqs) {
            q.cb = count_cb;
            q.user = &done;
        }
        uint64_t go = 0;
        llc_treq_t ack{};
        ack.cb = count_cb;
        ack.user = &done;
        auto round = [&](int i) {
            size_t len = (i & 1) ? 1024 : 8;
            done.count = 0;
            int started_now = 0;
            if (p.rank == 0) {
                for (int k = 0; k < kBatch; k++) {
                    std::memset(&out[size_t(k) * len], char(i + k), len);
                    started_now += started(
                        ctx, llc_tsend(ctx, peer, 0, uint64_t(k), &out[size_t(k) * len], len, 0, &reqs[size_t(k)]));
                }
                started_now += started(ctx, llc_trecv(ctx, peer, 99, 0, &go, 8, &ack));
                progress_until(ctx, [&] { return started_now + done.count == kBatch + 1; });
                EXPECT_EQ(go, uint64_t(i));
            } else {
                // wait until the whole batch has arrived, then receive it
                progress_until(ctx, [&] {
                    int flag = 0;
                    llc_treq_t info{};
                    EXPECT_EQ(llc_tprobe(ctx, peer, kBatch - 1, 0, &flag, &info), LLC_OK);
                    return flag != 0;
                });
                for (int k = 0; k < kBatch; k++)
                    started_now +=
                        started(ctx, llc_trecv(ctx, peer, uint64_t(k), 0, &in[size_t(k) * len], len, &reqs[size_t(k)]));
                progress_until(ctx, [&] { return started_now + done.count == kBatch; });
                for (int k = 0; k < kBatch; k++)
                    EXPECT_EQ(in[size_t(k) * len + len - 1], char(i + k)) << "message " << k << " of round " << i;
                go = uint64_t(i);
                done.count = 0;
                int sent = started(ctx, llc_tsend(ctx, peer, 1, 99, &go, 8, 0, &ack));
                progress_until(ctx, [&] { return sent + done.count == 1; });
            }
        };
        for (int i = 0; i < kWarm; i++)
            round(i);
        CountAllocations counter;
        for (int i = kWarm; i < kWarm + kRounds; i++)
            round(i);
        EXPECT_EQ(counter.count(), 0u) << "heap allocations in " << kRounds << " rounds of " << kBatch
                                       << " unexpected messages on rank " << p.rank;
        finalize_ok(ctx);
    });
}

namespace {
// The tagged_unexpected row of the memory report: {bytes, items}.
std::pair<uint64_t, uint64_t> unexpected_memory(const llc_context_t *ctx)
{
    std::vector<llc_mem_entry_t> rows(size_t(llc_mem_report(ctx, nullptr, 0)));
    llc_mem_report(ctx, rows.data(), int(rows.size()));
    for (const llc_mem_entry_t &e : rows)
        if (std::strcmp(e.name, "tagged_unexpected") == 0)
            return {e.bytes, e.items};
    ADD_FAILURE() << "no tagged_unexpected row in the memory report";
    return {0, 0};
}
} // namespace

// Messages that wait for their receive, and the records kept for reuse once
// received, are in the memory report with their payload buffers.
TEST(Tagged, UnexpectedRecordsAreInTheMemoryReport)
{
    LLC_EXPECT_JOB_OK(job({0, 0}), [](TestProcess &p) {
        constexpr int kMsgs = 3;
        constexpr size_t kLen = 1000;
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        const int peer = 1 - p.rank;
        std::vector<char> buf(kLen * kMsgs, char(p.rank + 1));
        std::vector<llc_treq_t> reqs(kMsgs);
        Completed done;
        for (auto &q : reqs) {
            q.cb = count_cb;
            q.user = &done;
        }
        int started_now = 0;
        if (p.rank == 0) {
            for (int k = 0; k < kMsgs; k++)
                started_now += started(
                    ctx, llc_tsend(ctx, peer, 0, uint64_t(k), &buf[size_t(k) * kLen], kLen, 0, &reqs[size_t(k)]));
            progress_until(ctx, [&] { return started_now + done.count == kMsgs; });
        } else {
            // nothing yet but the pool's (reserved) lists of records to keep
            auto [lists, none] = unexpected_memory(ctx);
            EXPECT_EQ(none, 0u);
            progress_until(ctx, [&] {
                int flag = 0;
                llc_treq_t info{};
                EXPECT_EQ(llc_tprobe(ctx, peer, kMsgs - 1, 0, &flag, &info), LLC_OK);
                return flag != 0;
            });
            auto [waiting, records] = unexpected_memory(ctx);
            EXPECT_EQ(records, uint64_t(kMsgs));
            EXPECT_GE(waiting, lists + kMsgs * kLen);
            for (int k = 0; k < kMsgs; k++)
                started_now +=
                    started(ctx, llc_trecv(ctx, peer, uint64_t(k), 0, &buf[size_t(k) * kLen], kLen, &reqs[size_t(k)]));
            progress_until(ctx, [&] { return started_now + done.count == kMsgs; });
            EXPECT_EQ(buf[kLen * kMsgs - 1], char(1));
            // received: the same records, kept for the next ones (with the
            // pool's list of them)
            auto [kept_bytes, kept] = unexpected_memory(ctx);
            EXPECT_EQ(kept, records);
            EXPECT_GE(kept_bytes, waiting);
        }
        finalize_ok(ctx);
    });
}
