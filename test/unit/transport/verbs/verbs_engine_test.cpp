// verbs_engine_test.cpp - the verbs transport's logic (VerbsEngine) over an
// in-memory fake of the device (verbs_fake_fabric.hpp): several engines in
// this process, each with a FakeFabric whose sends land in the target's
// posted receive buffers (or wait, in order, while it has none posted: the
// adapter's receiver-not-ready retry).  Checked: every message arrives once,
// in order, with its bytes (small ones packed, large ones fragmented);
// credits stall a fast sender and never overrun the receiver; never more
// than the bound posted; completion callbacks once each; goodbyes make
// finalize's quiet test pass; peers are evicted under a small cap and
// traffic goes on; a failed post or a failed send completion fails the
// engine with a message; stray frames are dropped.
// What this does not test: the ibv/mlx5dv calls themselves (verbs_transport.cpp).
#include "core/errors.hpp"
#include "common/test_util.hpp"
#include "transport/verbs/verbs_engine.hpp"
#include "common/verbs_fake_fabric.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace llctest::verbs_fake;

constexpr uint32_t kTag = 0x600d;

struct Job : FakeJob {
    Job(int n, size_t recv_buffers, size_t bound, uint32_t credits, size_t send_slots = 64, size_t max_peers = 64,
        uint32_t batch = 0, const std::function<void(Job &)> &before_start = {})
        : FakeJob(n, params_for(recv_buffers, bound, credits, max_peers, batch), send_slots)
    {
        if (before_start)
            before_start(*this);
        start();
    }
    static llc::VerbsEngineParams params_for(size_t recv_buffers, size_t bound, uint32_t credits, size_t max_peers,
                                             uint32_t batch)
    {
        llc::VerbsEngineParams p;
        p.recv_buffers = recv_buffers;
        p.recv_post_bound = bound;
        p.credits_per_peer = credits;
        p.credit_batch = batch ? batch : std::max<uint32_t>(1, credits / 4);
        p.max_peers = max_peers;
        p.job_tag = kTag;
        return p;
    }
};

} // namespace

TEST(VerbsEngine, MessagesArriveInOrderWithTheirBytes)
{
    Job job(2, 16, 8, 4);
    std::vector<size_t> sizes;
    for (int i = 0; i < 400; i++)
        sizes.push_back(size_t(i * 997 % 20000) * (i % 3 == 0 ? 0 : 1)); // 0 .. 20 KB, many small
    int inprogress = 0;
    for (size_t i = 0; i < sizes.size(); i++) {
        if (job.send(0, 1, "h" + std::to_string(i), sizes[i]) == LLC_INPROGRESS)
            inprogress++;
        job.progress_all();
    }
    job.run_until_idle();
    const auto &got = job.nodes[1].host->got;
    ASSERT_EQ(got.size(), sizes.size());
    for (size_t i = 0; i < sizes.size(); i++) {
        EXPECT_EQ(got[i].src, 0);
        EXPECT_EQ(got[i].seq, i);
        EXPECT_EQ(got[i].hdr, "h" + std::to_string(i));
        EXPECT_TRUE(got[i].payload == expected_payload(0, i, sizes[i])) << "message " << i;
    }
    EXPECT_GT(inprogress, 0);
    EXPECT_EQ(job.nodes[0].host->callbacks(), inprogress); // once each
    EXPECT_GT(job.nodes[0].engine->credit_stalls(), 0u); // 4 credits: the sender had to wait
    EXPECT_TRUE(job.nodes[0].host->errors.empty());
    EXPECT_TRUE(job.nodes[1].host->errors.empty());
    EXPECT_LE(job.nodes[1].fabric->max_posted, 8u);
    EXPECT_FALSE(job.nodes[0].engine->has_pending_sends());
}

// Three senders into one receiver with fewer buffers than their credits: the
// receive queue runs dry (frames wait, as with RNR retries), nothing is lost.
TEST(VerbsEngine, ManySendersIntoFewBuffers)
{
    Job job(4, 6, 3, 8);
    for (int round = 0; round < 200; round++) {
        for (int src = 1; src < 4; src++)
            job.send(src, 0, "x", size_t(round % 7) * 1500);
        job.progress_all();
    }
    job.run_until_idle();
    const auto &got = job.nodes[0].host->got;
    ASSERT_EQ(got.size(), 600u);
    std::map<int, uint64_t> next;
    for (const Delivery &d : got) {
        EXPECT_EQ(d.seq, next[d.src]++) << "from " << d.src;
        EXPECT_TRUE(d.payload == expected_payload(d.src, d.seq, d.payload.size()));
    }
    EXPECT_LE(job.nodes[0].fabric->max_posted, 3u);
    EXPECT_TRUE(job.nodes[0].host->errors.empty());
}

TEST(VerbsEngine, GoodbyesMakeTheReceiverQuiet)
{
    Job job(3, 16, 8, 4);
    job.send(0, 2, "a", 100);
    job.send(1, 2, "b", 9000);
    job.run_until_idle();
    EXPECT_FALSE(job.nodes[2].engine->incoming_quiet()); // heard from 0 and 1, no goodbye yet
    EXPECT_TRUE(job.nodes[0].engine->incoming_quiet());  // heard from nobody
    job.nodes[0].engine->say_goodbye();
    job.run_until_idle();
    EXPECT_FALSE(job.nodes[2].engine->incoming_quiet()); // 1 has not said goodbye
    job.nodes[1].engine->say_goodbye();
    job.nodes[2].engine->say_goodbye(); // sent nothing: no goodbye to send
    job.run_until_idle();
    EXPECT_TRUE(job.nodes[2].engine->incoming_quiet());
    EXPECT_EQ(job.nodes[2].host->got.size(), 2u);
    for (Node &nd : job.nodes)
        EXPECT_FALSE(nd.engine->has_pending_sends());
}

// A cap of 2 peers: a sender talking to 5 destinations in turn keeps at most
// 2 (plus any that may not go yet), evicts idle ones, and every message
// still arrives in order; address handles are released with their peers.
TEST(VerbsEngine, PeersAreEvictedUnderTheCap)
{
    Job job(6, 16, 8, 4, 64, 2);
    for (int round = 0; round < 20; round++) {
        for (int dest = 1; dest < 6; dest++) {
            job.send(0, dest, "m", 300);
            job.run_until_idle();
        }
    }
    EXPECT_GT(job.nodes[0].engine->peer_evictions(), 0u);
    EXPECT_LE(job.nodes[0].engine->peer_count(), 3u);
    EXPECT_EQ(job.nodes[0].fabric->routes, int(job.nodes[0].engine->peer_count())); // evicted peers released theirs
    for (int dest = 1; dest < 6; dest++) {
        const auto &got = job.nodes[size_t(dest)].host->got;
        ASSERT_EQ(got.size(), 20u);
        for (size_t i = 0; i < got.size(); i++)
            EXPECT_EQ(got[i].seq, i);
    }
    for (Node &nd : job.nodes)
        EXPECT_TRUE(nd.host->errors.empty());
}

// Credits below the batch come back once the receiver's receive side is
// idle: without that, one message to each of several destinations would
// leave each with an unreturned credit, and no peer could ever be evicted.
TEST(VerbsEngine, LeftoverCreditsComeBackWhenTheReceiverIdles)
{
    Job job(6, 16, 8, 8, 64, 2, 4); // batch 4, one frame per destination
    for (int round = 0; round < 3; round++)
        for (int dest = 1; dest < 6; dest++) {
            job.send(0, dest, "m", 10);
            job.run_until_idle();
        }
    EXPECT_GT(job.nodes[0].engine->peer_evictions(), 0u);
    EXPECT_LE(job.nodes[0].engine->peer_count(), 3u);
    EXPECT_EQ(job.nodes[0].engine->pending_report(), "0 sends in flight"); // every credit back
}

// RC promotion: a destination that gets most of the frames is asked for an
// RC queue pair; the receiver creates and connects its end, the sender
// connects, closes the DC stream with a LastOnDc frame and sends the rest on
// RC.  The fake lets RC frames overtake the slow DC lane: the receiver holds
// them until LastOnDc, so every message still arrives once, in order.
TEST(VerbsEngine, BusyDestinationMovesToRcInOrder)
{
    Job job(2, 64, 32, 16, 64, 64, 0, [](Job &j) {
        j.params.rc_max = 4;
        j.params.rc_promote_frames = 8;
        j.params.rc_window_frames = 32;
        j.net.slow_dc = true;
    });
    std::vector<size_t> sizes;
    for (int i = 0; i < 300; i++)
        sizes.push_back(size_t(i * 389 % 9000));
    for (size_t i = 0; i < sizes.size(); i++) {
        job.send(0, 1, "r" + std::to_string(i), sizes[i]);
        if (i % 10 == 9) // bursts: data is queued when the RC answer comes
            job.progress_all();
    }
    job.run_until_idle();
    const auto &got = job.nodes[1].host->got;
    ASSERT_EQ(got.size(), sizes.size());
    for (size_t i = 0; i < sizes.size(); i++) {
        EXPECT_EQ(got[i].seq, i);
        EXPECT_EQ(got[i].hdr, "r" + std::to_string(i));
        EXPECT_TRUE(got[i].payload == expected_payload(0, i, sizes[i])) << "message " << i;
    }
    EXPECT_EQ(job.nodes[0].engine->rc_promotions(), 1u);
    EXPECT_EQ(job.nodes[0].engine->rc_count(), 1u);
    EXPECT_EQ(job.nodes[1].engine->rc_count(), 1u);
    EXPECT_GT(job.nodes[0].fabric->rc_posts, 0);
    EXPECT_GT(job.nodes[1].engine->rc_frames_held(), 0u); // the overtaking did happen
    for (Node &nd : job.nodes)
        EXPECT_TRUE(nd.host->errors.empty());
    // Finalize over RC: goodbyes ride the RC stream.
    job.nodes[0].engine->say_goodbye();
    job.nodes[1].engine->say_goodbye();
    job.run_until_idle();
    EXPECT_TRUE(job.nodes[1].engine->incoming_quiet());
    EXPECT_TRUE(job.nodes[0].engine->incoming_quiet());
    // The RC QPs go with the engines.
    job.nodes[0].engine.reset();
    job.nodes[1].engine.reset();
    EXPECT_EQ(job.nodes[0].fabric->rc_live, 0);
    EXPECT_EQ(job.nodes[1].fabric->rc_live, 0);
}

// A receiver that cannot (no RC on its device) refuses; the sender stays on
// DC, asks once, and nothing is lost.
TEST(VerbsEngine, RefusedRcStaysOnDc)
{
    Job job(2, 64, 32, 16, 64, 64, 0, [](Job &j) {
        j.params.rc_max = 4;
        j.params.rc_promote_frames = 8;
        j.params.rc_window_frames = 32;
        j.nodes[1].fabric->rc = false;
    });
    for (int i = 0; i < 200; i++) {
        job.send(0, 1, "s", size_t(i % 5) * 1000);
        job.progress_all();
    }
    job.run_until_idle();
    ASSERT_EQ(job.nodes[1].host->got.size(), 200u);
    for (size_t i = 0; i < 200; i++)
        EXPECT_EQ(job.nodes[1].host->got[i].seq, i);
    EXPECT_EQ(job.nodes[0].engine->rc_refusals(), 1u);
    EXPECT_EQ(job.nodes[0].engine->rc_promotions(), 0u);
    EXPECT_EQ(job.nodes[0].engine->rc_count(), 0u);
    EXPECT_EQ(job.nodes[0].fabric->rc_live, 0);
    EXPECT_EQ(job.nodes[0].fabric->rc_posts, 0);
}

// The cap: with rc_max 1, only the first busy destination gets RC.
TEST(VerbsEngine, RcCapIsRespected)
{
    Job job(3, 64, 32, 16, 64, 64, 0, [](Job &j) {
        j.params.rc_max = 1;
        j.params.rc_promote_frames = 4;
        j.params.rc_window_frames = 16;
    });
    for (int i = 0; i < 200; i++) {
        job.send(0, 1 + i % 2, "c", 2000);
        job.progress_all();
    }
    job.run_until_idle();
    EXPECT_EQ(job.nodes[0].engine->rc_count(), 1u);
    EXPECT_EQ(job.nodes[0].engine->rc_promotions(), 1u);
    EXPECT_EQ(job.nodes[1].host->got.size() + job.nodes[2].host->got.size(), 200u);
    for (Node &nd : job.nodes)
        EXPECT_TRUE(nd.host->errors.empty());
}

TEST(VerbsEngine, FailedPostFailsTheEngineWithAMessage)
{
    Job job(2, 16, 8, 4);
    job.nodes[0].fabric->fail_posts_after = 0;
    try {
        job.send(0, 1, "h", 10);
        ADD_FAILURE() << "a failed post did not throw";
    } catch (const llc::Error &e) {
        EXPECT_TRUE(llctest::contains(e.what(), "posting a send to rank 1")) << e.what();
    }
    EXPECT_TRUE(job.nodes[0].engine->failed());
    ASSERT_FALSE(job.nodes[0].host->errors.empty());
    EXPECT_THROW(job.send(0, 1, "h", 10), llc::Error);
    EXPECT_FALSE(job.nodes[0].engine->has_pending_sends()); // finalize does not wait for a failed engine
}

TEST(VerbsEngine, FailedSendCompletionFailsTheEngine)
{
    Job job(2, 16, 8, 4);
    job.nodes[0].fabric->fail_completions = true;
    job.send(0, 1, "h", 10);
    job.progress_all(3);
    EXPECT_TRUE(job.nodes[0].engine->failed());
    ASSERT_FALSE(job.nodes[0].host->errors.empty());
    EXPECT_TRUE(llctest::contains(job.nodes[0].host->errors[0], "retry counter exceeded")) << job.nodes[0].host->errors[0];
}

TEST(VerbsEngine, StrayFramesAreDropped)
{
    Job job(2, 16, 8, 4);
    llc::VerbsFrame f{};
    f.job_tag = kTag + 1; // another job
    f.type = uint8_t(llc::VerbsFrameType::Data);
    f.src = 0;
    job.nodes[1].fabric->arrive(Parked{0, 0, 0, std::string(reinterpret_cast<const char *>(&f), sizeof(f))});
    f.job_tag = kTag;
    f.src = 7; // no such rank
    job.nodes[1].fabric->arrive(Parked{0, 0, 0, std::string(reinterpret_cast<const char *>(&f), sizeof(f))});
    job.nodes[1].fabric->arrive(Parked{0, 0, 0, std::string(5, 'x')}); // too short
    job.nodes[0].fabric->send_done.assign(3, {}); // drop the send completions the fake made for these
    job.nodes[1].engine->progress();
    EXPECT_EQ(job.nodes[1].engine->stray_frames(), 3u);
    EXPECT_TRUE(job.nodes[1].host->got.empty());
    EXPECT_TRUE(job.nodes[1].host->errors.empty());
    EXPECT_EQ(job.nodes[1].engine->pool().consumed(), 0u); // their buffers were released
}
