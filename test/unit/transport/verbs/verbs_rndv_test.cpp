// verbs_rndv_test.cpp - the verbs transport's zero-copy rendezvous
// (VerbsEngine with rndv_bytes > 0) over the in-memory fake device of
// verbs_fake_fabric.hpp, which emulates RDMA READ with real memory copies
// between the engines of this process, and a fake registrar whose
// registrations are the only thing a READ may touch: a READ whose rkey is
// not live, names another process's region, or reaches outside the
// registered range fails, as does one whose local lkey does not cover the
// landing range.
//
// Checked: large messages arrive intact (pattern-checked, one or several
// spans, one or several READs) with small copied ones interleaved and the
// pair's order kept, also while READs are held back; sends complete once
// read (callbacks once each) and leave nothing pinned; repeated sends of one
// buffer are registered once (cache hits), on both sides; the cache bound
// holds with many distinct buffers (evictions), and is exceeded only while
// everything is pinned (overflows); a failed READ or a dead peer completes
// the send with an error and unpins; a failed registration falls back to
// the copy path; RC promotion moves the READs to the RC QP.
// Not tested: the ibv calls (verbs_transport.cpp), never run on hardware.
#include "core/config.hpp"
#include "core/errors.hpp"
#include "common/test_util.hpp"
#include "transport/verbs/verbs_engine.hpp"
#include "common/verbs_fake_fabric.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace llctest::verbs_fake;

constexpr uint32_t kTag = 0x7e57;

struct Job : FakeJob {
    explicit Job(int n, const std::function<void(Job &)> &before_start = {}) : FakeJob(n, rndv_params())
    {
        if (before_start)
            before_start(*this);
        start();
    }
    static llc::VerbsEngineParams rndv_params()
    {
        llc::VerbsEngineParams p;
        p.recv_buffers = 32;
        p.recv_post_bound = 16;
        p.credits_per_peer = 8;
        p.credit_batch = 2;
        p.max_peers = 64;
        p.job_tag = kTag;
        p.rndv_bytes = 16 * 1024;
        p.rndv_chunk = 32 * 1024; // large messages take several READs
        p.reg_cache_max = 1024;
        return p;
    }
};

void expect_clean(Job &job)
{
    for (size_t r = 0; r < job.nodes.size(); r++) {
        EXPECT_TRUE(job.nodes[r].host->errors.empty()) << "rank " << r << ": " << job.nodes[r].host->errors[0];
        EXPECT_FALSE(job.nodes[r].engine->failed());
        ASSERT_NE(job.nodes[r].engine->reg_cache(), nullptr);
        EXPECT_EQ(job.nodes[r].engine->reg_cache()->pinned(), 0u) << "rank " << r;
        EXPECT_EQ(job.nodes[r].engine->reg_cache()->check(), "");
        EXPECT_EQ(job.nodes[r].engine->rndv_sends_pending(), 0u);
    }
}

} // namespace

// Large messages (one or several spans, one or several READs) and small
// copied ones, interleaved, from two senders: every message arrives once,
// in order, with its bytes; the large ones' bytes never went through the
// send slots; every send completes once and nothing stays pinned.
TEST(VerbsRndv, LargeMessagesArriveIntactAndInOrderWithSmallOnes)
{
    Job job(3);
    std::vector<size_t> sizes;
    std::vector<int> spans;
    size_t large_bytes = 0, large = 0;
    for (int i = 0; i < 120; i++) {
        size_t s = i % 4 == 0 ? size_t(16 * 1024 + (i * 7919) % (200 * 1024)) : size_t((i * 389) % 9000);
        sizes.push_back(s);
        spans.push_back(i % 8 == 0 ? 3 : 1);
        if (s >= job.params.rndv_bytes) {
            large_bytes += s;
            large++;
        }
    }
    int inprogress[2] = {0, 0};
    for (size_t i = 0; i < sizes.size(); i++) {
        for (int src = 0; src < 2; src++)
            if (job.send(src, 2, sizes[i], spans[i]) == LLC_INPROGRESS)
                inprogress[src]++;
        if (i % 3 == 2)
            job.progress_all();
    }
    job.run_until_idle();
    const auto &got = job.host(2).got;
    ASSERT_EQ(got.size(), 2 * sizes.size());
    std::map<int, uint64_t> next;
    for (const Delivery &d : got) {
        ASSERT_EQ(d.seq, next[d.src]++) << "from " << d.src;
        EXPECT_TRUE(d.payload == expected_payload(d.src, d.seq, sizes[d.seq])) << "message " << d.seq << " from " << d.src;
    }
    for (int src = 0; src < 2; src++) {
        EXPECT_EQ(job.host(src).callbacks(LLC_OK), inprogress[src]);
        EXPECT_EQ(int(job.host(src).statuses.size()), inprogress[src]);
        EXPECT_EQ(job.engine(src).rndv_stats().sends, large);
        EXPECT_EQ(job.engine(src).rndv_stats().sends_completed, large);
        EXPECT_LT(job.fabric(src).slot_bytes_sent, large_bytes / 2) << "large payloads were copied";
    }
    EXPECT_EQ(job.engine(2).rndv_stats().recvs, 2 * large);
    EXPECT_EQ(job.engine(2).rndv_stats().bytes_read, 2 * large_bytes);
    EXPECT_GT(job.engine(2).rndv_stats().reads, 2 * large); // chunks of 32 KB and several spans
    expect_clean(job);
}

// While the READ of a large message is held back, the small messages sent
// after it are received but not delivered; once the READ is done they are,
// after it.  Their frames' credits come back only then.
TEST(VerbsRndv, SmallMessagesWaitBehindALargeOneBeingRead)
{
    Job job(2);
    job.net.hold_reads = true;
    job.send(0, 1, 100);
    job.send(0, 1, 100 * 1024);
    for (int i = 0; i < 5; i++)
        job.send(0, 1, 200);
    job.progress_all(10);
    ASSERT_EQ(job.host(1).got.size(), 1u); // only the one before the large message
    EXPECT_GE(job.engine(1).rndv_stats().held_records, 5u);
    EXPECT_FALSE(job.net.reads.empty());
    EXPECT_EQ(job.engine(0).rndv_sends_pending(), 1u);
    EXPECT_EQ(job.engine(0).reg_cache()->pinned(), 1u); // the payload, until the FIN
    // Many more behind it than 8 credits carry: the sender stalls, so the
    // receiver holds at most what 8 frames hold.
    int inprogress = 1; // the large one
    for (int i = 0; i < 40; i++)
        inprogress += job.send(0, 1, 3000) == LLC_INPROGRESS;
    job.progress_all(20);
    ASSERT_EQ(job.host(1).got.size(), 1u);
    EXPECT_GT(job.engine(0).credit_stalls(), 0u);
    EXPECT_LE(job.engine(1).rndv_stats().held_records, 5u + 2 * 8); // 3000-byte messages: at most 2 per frame
    job.net.hold_reads = false;
    job.net.run_reads();
    job.run_until_idle();
    const auto &got = job.host(1).got;
    ASSERT_EQ(got.size(), 47u);
    for (size_t i = 0; i < got.size(); i++)
        EXPECT_EQ(got[i].seq, i);
    EXPECT_TRUE(got[1].payload == expected_payload(0, 1, 100 * 1024));
    for (size_t i = 7; i < got.size(); i++)
        EXPECT_TRUE(got[i].payload == expected_payload(0, i, 3000)) << i;
    EXPECT_EQ(job.host(0).callbacks(LLC_OK), inprogress);
    EXPECT_EQ(int(job.host(0).statuses.size()), inprogress);
    EXPECT_EQ(job.engine(0).pending_report(), "0 sends in flight"); // every credit came back
    expect_clean(job);
}

// The same buffer sent again and again is registered once on the sender,
// and the receiver's landing buffer once too: the rest are cache hits.
// The counters reach llc_stats_t through export_stats.
TEST(VerbsRndv, RepeatedSendsOfOneBufferHitTheCache)
{
    Job job(2);
    Buf buf(64 * 1024);
    for (int i = 0; i < 20; i++) {
        job.send_buf(0, 1, buf, buf.n);
        job.run_until_idle(); // buf is rewritten by the next send: wait for the read
    }
    ASSERT_EQ(job.host(1).got.size(), 20u);
    for (size_t i = 0; i < 20; i++)
        EXPECT_TRUE(job.host(1).got[i].payload == expected_payload(0, i, buf.n)) << i;
    EXPECT_EQ(job.fabric(0).registrar_.registrations, 1);
    EXPECT_EQ(job.engine(0).reg_cache()->stats().misses, 1u);
    EXPECT_EQ(job.engine(0).reg_cache()->stats().hits, 19u);
    EXPECT_EQ(job.fabric(1).registrar_.registrations, 1); // one landing buffer, reused
    EXPECT_EQ(job.engine(1).reg_cache()->stats().hits, 19u);
    EXPECT_EQ(job.engine(1).rndv_stats().landing_allocs, 1u);
    llc_stats_t st{};
    job.engine(0).export_stats(st);
    EXPECT_EQ(st.verbs_rndv_sends, 20u);
    EXPECT_EQ(st.reg_cache_hits, 19u);
    EXPECT_EQ(st.reg_cache_misses, 1u);
    EXPECT_EQ(st.reg_cache_entries, 1u);
    EXPECT_EQ(st.reg_cache_pinned, 0u);
    llc_stats_t rs{};
    job.engine(1).export_stats(rs);
    EXPECT_EQ(rs.verbs_rndv_recvs, 20u);
    EXPECT_EQ(rs.verbs_rndv_bytes_read, 20u * buf.n);
    expect_clean(job);
}

// With a bound of 4 registrations, 24 distinct buffers sent one at a time:
// the sender never holds more than 4, the least recently used go
// (evictions, deregistered), every message arrives intact.  Sent all at
// once (every one pinned until read) the cache goes above the bound
// (overflows) and comes back under it once they are released.
TEST(VerbsRndv, CacheBoundHoldsWithManyDistinctBuffers)
{
    Job job(2, [](Job &j) { j.params.reg_cache_max = 4; });
    for (int i = 0; i < 24; i++) {
        job.send(0, 1, 20 * 1024);
        job.run_until_idle();
        EXPECT_LE(job.engine(0).reg_cache()->size(), 4u);
    }
    EXPECT_EQ(job.fabric(0).registrar_.registrations, 24);
    EXPECT_EQ(job.engine(0).reg_cache()->stats().evictions, 20u);
    EXPECT_EQ(job.fabric(0).registrar_.deregistrations, 20);
    EXPECT_EQ(job.engine(0).reg_cache()->stats().overflows, 0u);

    job.net.hold_reads = true;
    for (int i = 0; i < 10; i++)
        job.send(0, 1, 20 * 1024);
    job.progress_all(5);
    EXPECT_EQ(job.engine(0).reg_cache()->pinned(), 10u);
    EXPECT_GT(job.engine(0).reg_cache()->stats().overflows, 0u);
    job.net.hold_reads = false;
    job.run_until_idle();
    EXPECT_LE(job.engine(0).reg_cache()->size(), 4u);
    ASSERT_EQ(job.host(1).got.size(), 34u);
    for (size_t i = 0; i < 34; i++)
        EXPECT_TRUE(job.host(1).got[i].payload == expected_payload(0, i, 20 * 1024)) << i;
    expect_clean(job);
}

// A READ that fails (the sender's registration is gone: the fake refuses
// the rkey) completes the send with an error on the sender, which unpins;
// the receiver, which cannot deliver the message in its place, fails with a
// message.
TEST(VerbsRndv, FailedReadCompletesTheSendWithAnError)
{
    Job job(2);
    job.net.hold_reads = true;
    ASSERT_EQ(job.send(0, 1, 50 * 1024), LLC_INPROGRESS);
    job.progress_all(4);
    ASSERT_FALSE(job.net.reads.empty());
    job.net.revoke(0);
    job.net.hold_reads = false;
    job.net.run_reads();
    job.progress_all(6);
    EXPECT_EQ(job.host(0).callbacks(LLC_ERR_PEER), 1);
    EXPECT_EQ(job.host(0).statuses.size(), 1u);
    EXPECT_EQ(job.engine(0).reg_cache()->pinned(), 0u);
    EXPECT_EQ(job.engine(0).rndv_sends_pending(), 0u);
    EXPECT_EQ(job.engine(0).rndv_stats().send_errors, 1u);
    ASSERT_FALSE(job.host(0).errors.empty());
    EXPECT_TRUE(llctest::contains(job.host(0).errors[0], "could not read")) << job.host(0).errors[0];
    EXPECT_FALSE(job.engine(0).failed()); // the sender's queue pairs are fine
    EXPECT_TRUE(job.engine(1).failed());
    EXPECT_EQ(job.engine(1).rndv_stats().read_failures, 2u); // 50 KB: two READs of at most 32 KB
    ASSERT_FALSE(job.host(1).errors.empty());
    EXPECT_TRUE(llctest::contains(job.host(1).errors[0], "remote access error")) << job.host(1).errors[0];
    EXPECT_TRUE(job.host(1).got.empty());
}

// A READ outside the registered range fails in the fake (the test of the
// fake itself: a forged RTS whose segment runs past the registration).
TEST(VerbsRndv, ReadOutsideTheRegisteredRangeFails)
{
    Job job(2);
    Buf buf(8192);
    llc::Registration reg = job.fabric(0).registrar_.register_region(buf.p, 4096).reg;
    llc::Registration land = job.fabric(1).registrar_.register_region(buf.p + 4096, 4096).reg;
    llc::VerbsRead r;
    r.id = 1;
    r.local = buf.p + 4096;
    r.lkey = land.lkey;
    r.remote = reinterpret_cast<uintptr_t>(buf.p) + 1;
    r.rkey = reg.rkey;
    r.len = 4096; // one byte past the registration
    job.net.reads.push_back(PendingRead{1, 0, 0, r});
    r.len = 4095; // inside
    job.net.reads.push_back(PendingRead{1, 0, 0, r});
    r.rkey = land.rkey; // another process's key
    job.net.reads.push_back(PendingRead{1, 0, 0, r});
    job.net.run_reads();
    auto &done = job.fabric(1).send_done[0];
    ASSERT_EQ(done.size(), 3u);
    EXPECT_FALSE(done[0].ok);
    EXPECT_TRUE(done[1].ok);
    EXPECT_FALSE(done[2].ok);
    done.clear();
}

// A peer that dies while its READ of our payload is pending: our next send
// to it fails, the engine fails, and the pending rendezvous sends complete
// with an error, unpinned.
TEST(VerbsRndv, DeadPeerCompletesPendingSendsWithAnError)
{
    Job job(2);
    job.net.hold_reads = true;
    job.send(0, 1, 40 * 1024);
    job.send(0, 1, 90 * 1024);
    job.progress_all(4);
    EXPECT_EQ(job.engine(0).reg_cache()->pinned(), 2u);
    job.fabric(1).dead = true;
    job.net.reads.clear(); // it died with them
    job.send(0, 1, 10); // its frame fails: retry counter exceeded
    job.progress_all(4);
    EXPECT_TRUE(job.engine(0).failed());
    EXPECT_EQ(job.host(0).callbacks(LLC_ERR_PEER), 2);
    EXPECT_EQ(job.engine(0).reg_cache()->pinned(), 0u);
    EXPECT_EQ(job.engine(0).rndv_sends_pending(), 0u);
    EXPECT_EQ(job.engine(0).rndv_stats().send_errors, 2u);
    EXPECT_FALSE(job.engine(0).has_pending_sends());
}

// Registration refused (locked-memory limit): the large messages go by the
// copy path, counted, and arrive intact; nothing is pinned.
TEST(VerbsRndv, RegistrationFailureFallsBackToCopy)
{
    Job job(2, [](Job &j) { j.nodes[0].fabric->registrar_.fail = true; });
    for (int i = 0; i < 6; i++)
        job.send(0, 1, 30 * 1024 + size_t(i));
    job.run_until_idle();
    ASSERT_EQ(job.host(1).got.size(), 6u);
    for (size_t i = 0; i < 6; i++)
        EXPECT_TRUE(job.host(1).got[i].payload == expected_payload(0, i, 30 * 1024 + i)) << i;
    EXPECT_EQ(job.engine(0).rndv_stats().reg_fallbacks, 6u);
    EXPECT_EQ(job.engine(0).rndv_stats().sends, 0u);
    EXPECT_EQ(job.engine(1).rndv_stats().recvs, 0u);
    EXPECT_GE(job.fabric(0).slot_bytes_sent, 6u * 30 * 1024); // copied
    EXPECT_EQ(job.engine(0).reg_cache()->stats().failures, 6u);
    llc_stats_t st{};
    job.engine(0).export_stats(st);
    EXPECT_EQ(st.verbs_rndv_fallbacks, 6u);
    expect_clean(job);
}

// Threshold 0 (or no registrar): no cache, everything copied.
TEST(VerbsRndv, ThresholdZeroTurnsItOff)
{
    Job job(2, [](Job &j) { j.params.rndv_bytes = 0; });
    EXPECT_EQ(job.engine(0).reg_cache(), nullptr);
    job.send(0, 1, 200 * 1024);
    job.run_until_idle();
    ASSERT_EQ(job.host(1).got.size(), 1u);
    EXPECT_TRUE(job.host(1).got[0].payload == expected_payload(0, 0, 200 * 1024));
    EXPECT_EQ(job.fabric(0).reads_posted + job.fabric(1).reads_posted, 0);
    EXPECT_EQ(job.fabric(0).registrar_.registrations, 0);
}

// A busy destination moved to RC: the receiver reads on the RC QP the sender
// connected to it, and order still holds across the move.
TEST(VerbsRndv, ReadsGoOnRcOnceThePeerIsOnRc)
{
    Job job(2, [](Job &j) {
        j.params.rc_max = 4;
        j.params.rc_promote_frames = 8;
        j.params.rc_window_frames = 32;
    });
    std::vector<size_t> sizes;
    for (int i = 0; i < 80; i++) {
        sizes.push_back(i % 5 == 4 ? size_t(40 * 1024 + i) : size_t(i * 97 % 3000));
        job.send(0, 1, sizes.back());
        job.progress_all();
    }
    job.run_until_idle();
    ASSERT_EQ(job.host(1).got.size(), sizes.size());
    for (size_t i = 0; i < sizes.size(); i++)
        EXPECT_TRUE(job.host(1).got[i].payload == expected_payload(0, i, sizes[i])) << i;
    EXPECT_EQ(job.engine(0).rc_promotions(), 1u);
    EXPECT_GT(job.fabric(1).rc_reads, 0);
    expect_clean(job);
}

TEST(VerbsRndv, ConfigVariable)
{
    unsetenv("LLC_VERBS_RNDV_BYTES");
    EXPECT_EQ(llc::Config::from_environment().verbs_rndv_bytes, 64u * 1024);
    setenv("LLC_VERBS_RNDV_BYTES", "0", 1);
    EXPECT_EQ(llc::Config::from_environment().verbs_rndv_bytes, 0u);
    setenv("LLC_VERBS_RNDV_BYTES", "1m", 1);
    EXPECT_EQ(llc::Config::from_environment().verbs_rndv_bytes, 1024u * 1024);
    setenv("LLC_VERBS_RNDV_BYTES", "big", 1);
    EXPECT_THROW(llc::Config::from_environment(), llc::Error);
    unsetenv("LLC_VERBS_RNDV_BYTES");
    bool listed = false;
    for (const auto &v : llc::env_vars())
        listed |= std::string(v.name) == "LLC_VERBS_RNDV_BYTES" && std::string(v.default_text) == "64k";
    EXPECT_TRUE(listed);
}

// A payload of more than rndv_max_segments spans goes by copy (counted).
TEST(VerbsRndv, TooManySpansGoByCopy)
{
    Job job(2, [](Job &j) { j.params.rndv_max_segments = 2; });
    job.send(0, 1, 60 * 1024, 3);
    job.send(0, 1, 60 * 1024, 2);
    job.run_until_idle();
    ASSERT_EQ(job.host(1).got.size(), 2u);
    for (size_t i = 0; i < 2; i++)
        EXPECT_TRUE(job.host(1).got[i].payload == expected_payload(0, i, 60 * 1024)) << i;
    EXPECT_EQ(job.engine(0).rndv_stats().iov_fallbacks, 1u);
    EXPECT_EQ(job.engine(0).rndv_stats().sends, 1u);
    expect_clean(job);
}

// Under a cap of 2 peers, a sender with rendezvous to 5 destinations in
// turn: a destination whose RndvFin is outstanding is not evicted, idle ones
// are, and every message arrives; a Goodbye sent behind a rendezvous being
// read is seen only after it (the receiver is not quiet before).
TEST(VerbsRndv, EvictionAndGoodbyeWithRendezvous)
{
    Job job(6, [](Job &j) { j.params.max_peers = 2; });
    for (int round = 0; round < 4; round++)
        for (int dest = 1; dest < 6; dest++) {
            job.send(0, dest, 24 * 1024);
            job.send(0, dest, 10);
            job.progress_all();
        }
    job.run_until_idle();
    EXPECT_GT(job.engine(0).peer_evictions(), 0u);
    for (int dest = 1; dest < 6; dest++) {
        const auto &got = job.host(dest).got;
        ASSERT_EQ(got.size(), 8u) << dest;
        for (size_t i = 0; i < got.size(); i++)
            EXPECT_TRUE(got[i].payload == expected_payload(0, i, i % 2 ? 10 : 24 * 1024)) << dest << " " << i;
    }
    expect_clean(job);

    job.net.hold_reads = true;
    job.send(0, 1, 24 * 1024);
    job.engine(0).say_goodbye();
    job.progress_all(6);
    EXPECT_FALSE(job.engine(1).incoming_quiet()); // its Goodbye waits behind the READ
    job.net.hold_reads = false;
    job.run_until_idle();
    EXPECT_EQ(job.host(1).got.size(), 9u);
    EXPECT_TRUE(job.engine(1).incoming_quiet());
}

// The receiver cannot register a landing buffer: it tells the sender (whose
// send completes with an error, unpinned) and fails, naming the variable
// that turns the rendezvous off.
TEST(VerbsRndv, LandingRegistrationFailureFailsTheSendAndTheReceiver)
{
    Job job(2, [](Job &j) { j.nodes[1].fabric->registrar_.fail = true; });
    ASSERT_EQ(job.send(0, 1, 40 * 1024), LLC_INPROGRESS);
    job.progress_all(6);
    EXPECT_TRUE(job.engine(1).failed());
    ASSERT_FALSE(job.host(1).errors.empty());
    EXPECT_TRUE(llctest::contains(job.host(1).errors[0], "LLC_VERBS_RNDV_BYTES=0")) << job.host(1).errors[0];
    EXPECT_EQ(job.host(0).callbacks(LLC_ERR_PEER), 1);
    EXPECT_EQ(job.engine(0).reg_cache()->pinned(), 0u);
    EXPECT_FALSE(job.engine(0).failed());
    EXPECT_TRUE(job.host(1).got.empty());
}
