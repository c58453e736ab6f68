// connected_slots_test.cpp - the node's connected-class (tcp) slots, the
// paper's RC slots (LLC_MAX_RC_PER_NODE), shared by its processes: the
// count's lifecycle and bounds, the private share fallback, and in hybrid
// jobs that one busy receiver may use the slots of its quiet neighbours
// while the node as a whole stays within the cap.
#include "hybrid/connected_slots.hpp"

#include "common/numbered_stream.hpp"
#include "common/test_util.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

using namespace llctest;
using llc::ConnectedDir;
using llc::ConnectedSlots;

constexpr ConnectedDir kOut = ConnectedDir::Out;
constexpr ConnectedDir kIn = ConnectedDir::In;

namespace {

std::string unique_job(const char *what)
{
    static int counter = 0;
    return std::string("rcslots-") + what + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

bool shm_name_exists(const std::string &name) { return access(("/dev/shm" + name).c_str(), F_OK) == 0; }

// Node 0 with `processes` processes, ranks 0..processes-1, rank 0 the leader.
std::vector<std::unique_ptr<ConnectedSlots>> node_of(size_t cap, int processes, const std::string &job, bool share = true)
{
    std::vector<std::unique_ptr<ConnectedSlots>> v;
    for (int r = 0; r < processes; r++)
        v.push_back(std::make_unique<ConnectedSlots>(cap, 0, r, 0, processes, job, share));
    for (auto &s : v)
        s->attach(); // "after the first fence": the leader has created the count
    return v;
}

} // namespace

TEST(ConnectedSlots, OneCountForTheWholeNode)
{
    std::string job = unique_job("count");
    auto node = node_of(3, 3, job);
    ConnectedSlots &a = *node[0], &b = *node[1], &c = *node[2];
    for (auto &s : node) {
        EXPECT_TRUE(s->shared()) << s->describe();
        EXPECT_EQ(s->cap(), 3u);
    }
    EXPECT_TRUE(a.created_here());
    EXPECT_FALSE(b.created_here());
    EXPECT_TRUE(shm_name_exists(a.name()));

    EXPECT_TRUE(a.try_take(kOut));
    EXPECT_TRUE(a.try_take(kOut)); // one process may use more than its third
    EXPECT_TRUE(b.try_take(kOut));
    EXPECT_FALSE(c.try_take(kOut)) << "the node's 3 slots are in use";
    EXPECT_TRUE(c.try_take(kIn)) << "incoming slots are counted apart";
    EXPECT_EQ(a.in_use(kIn), 1u);
    c.give(kIn);
    EXPECT_EQ(a.in_use(kIn), 0u);
    EXPECT_EQ(c.free_slots(kOut), 0u);
    EXPECT_EQ(c.in_use(kOut), 3u);
    b.give(kOut);
    EXPECT_EQ(c.free_slots(kOut), 1u);
    EXPECT_TRUE(c.try_take(kOut));
    EXPECT_EQ(a.held(kOut), 2u);
    EXPECT_EQ(b.held(kOut), 0u);
    EXPECT_EQ(c.held(kOut), 1u);
    b.give(kOut); // holds none: no effect on the node's count
    EXPECT_EQ(a.in_use(kOut), 3u);
    EXPECT_EQ(a.high_water(kOut), 3u);

    a.release_name(); // after the second fence
    EXPECT_FALSE(shm_name_exists(a.name()));
    node[2].reset(); // a process that finalizes gives back what it held
    EXPECT_EQ(a.in_use(kOut), 2u);
    node[0].reset();
    EXPECT_EQ(b.in_use(kOut), 0u) << "the leader's slots were given back too; the mapping stays valid";
}

// What a receiver may hold now (the cap its switch policy decides within):
// its own slots plus the node's free ones, and after take_anyway beyond the
// node's cap, less the excess, so that the policy sends sources back.
TEST(ConnectedSlots, MayHoldLeavesOutSlotsBeyondTheCap)
{
    std::string job = unique_job("mayhold");
    auto node = node_of(3, 2, job);
    ConnectedSlots &a = *node[0], &b = *node[1];
    EXPECT_EQ(a.may_hold(kIn), 3u) << "nothing held: the whole node's cap";
    EXPECT_TRUE(a.try_take(kIn));
    EXPECT_TRUE(b.try_take(kIn));
    EXPECT_EQ(a.may_hold(kIn), 2u) << "its own slot and the one free";
    EXPECT_EQ(b.may_hold(kIn), 2u);
    EXPECT_TRUE(a.try_take(kIn));
    EXPECT_EQ(a.may_hold(kIn), 2u) << "full: what it holds";
    EXPECT_EQ(b.may_hold(kIn), 1u);
    a.take_anyway(kIn); // a late grant: the node holds 4 of 3
    EXPECT_EQ(a.in_use(kIn), 4u);
    EXPECT_EQ(a.may_hold(kIn), 2u) << "3 held, 1 beyond the cap";
    b.take_anyway(kIn);
    b.take_anyway(kIn); // 6 of 3: b holds 3, 3 beyond the cap
    EXPECT_EQ(b.may_hold(kIn), 0u);
    EXPECT_EQ(a.may_hold(kIn), 0u);
    EXPECT_EQ(a.may_hold(kOut), 3u) << "the directions are counted apart";
    for (int i = 0; i < 3; i++)
        b.give(kIn);
    EXPECT_EQ(a.may_hold(kIn), 3u) << "back at the cap: all a holds";
}

TEST(ConnectedSlots, PrivateShareWithoutSharing)
{
    std::string job = unique_job("private");
    auto node = node_of(8, 3, job, false);
    for (auto &s : node) {
        EXPECT_FALSE(s->shared());
        EXPECT_EQ(s->cap(), 2u) << "8 / 3 processes";
        EXPECT_NE(s->describe().find("LLC_NODE_SHARED=0"), std::string::npos) << s->describe();
    }
    EXPECT_FALSE(shm_name_exists(node[0]->name()));
    EXPECT_TRUE(node[0]->try_take(kOut));
    EXPECT_TRUE(node[0]->try_take(kOut));
    EXPECT_FALSE(node[0]->try_take(kOut));
    EXPECT_TRUE(node[1]->try_take(kOut)) << "the shares are independent";
    EXPECT_EQ(node[0]->in_use(kOut), 2u);

    auto tiny = node_of(2, 3, unique_job("tiny"), false);
    EXPECT_EQ(tiny[0]->cap(), 1u) << "every process gets at least one";

    ConnectedSlots alone(5, 0, 0, 0, 1, unique_job("alone"), true);
    alone.attach();
    EXPECT_FALSE(alone.shared());
    EXPECT_EQ(alone.cap(), 5u) << "alone on its node: the whole cap";
    EXPECT_NE(alone.describe().find("alone on its node"), std::string::npos) << alone.describe();
}

TEST(ConnectedSlots, MissingLeaderCountFallsBackToAPrivateShare)
{
    // A process whose leader created nothing (LLC_NODE_SHARED=0 there).
    ConnectedSlots lone(6, 4, 9, 8, 3, unique_job("missing"), true);
    lone.attach();
    EXPECT_FALSE(lone.shared());
    EXPECT_EQ(lone.cap(), 2u);
    EXPECT_NE(lone.describe().find("could not be opened"), std::string::npos) << lone.describe();
    EXPECT_TRUE(lone.try_take(kOut));
}

TEST(ConnectedSlots, MismatchedCapFallsBackToAPrivateShare)
{
    std::string job = unique_job("mismatch");
    ConnectedSlots leader(4, 0, 0, 0, 2, job, true);
    leader.attach();
    ConnectedSlots other(6, 0, 1, 0, 2, job, true); // another LLC_MAX_RC_PER_NODE
    other.attach();
    EXPECT_TRUE(leader.shared());
    EXPECT_FALSE(other.shared());
    EXPECT_NE(other.describe().find("LLC_MAX_RC_PER_NODE"), std::string::npos) << other.describe();
}

// Four processes' worth of takers hammer the count through their own
// mappings: the node never holds more than the cap at once.
TEST(ConnectedSlots, ConcurrentTakersNeverExceedTheCap)
{
    std::string job = unique_job("race");
    auto node = node_of(3, 4, job);
    std::atomic<uint64_t> granted{0};
    std::vector<std::thread> takers;
    for (auto &slots : node) {
        takers.emplace_back([&granted, s = slots.get()] {
            for (int i = 0; i < 20000; i++) {
                if (s->try_take(kOut))
                    granted++;
                if (s->held(kOut) > 0 && (i % 3 != 0 || s->held(kOut) > 1))
                    s->give(kOut);
            }
        });
    }
    for (auto &t : takers)
        t.join();
    EXPECT_GT(granted.load(), 1000u);
    EXPECT_EQ(node[0]->high_water(kOut), 3u) << "reached, never exceeded";
    size_t held = 0;
    for (auto &s : node)
        held += s->held(kOut);
    EXPECT_EQ(node[0]->in_use(kOut), held);
    EXPECT_LE(held, 3u);
}

namespace {

JobOptions slot_job(std::vector<int> nodes, const char *cap, const char *node_shared)
{
    JobOptions o = job(std::move(nodes), 120);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},       {"LLC_NET", "hybrid"},
             {"LLC_HYBRID_DRIVER", "receiver"},   {"LLC_HYBRID_PERIOD_MS", "50"},
             {"LLC_HYBRID_PROMOTE_MSGS", "20"},   {"LLC_MAX_RC_PER_NODE", cap},
             {"LLC_NODE_SHARED", node_shared}};
    return o;
}

// What stream_rounds saw of the senders on tcp, summed over the job at the
// end of each round.
struct OnTcp {
    uint64_t most = 0; // the most at any round's end
    uint64_t last = 0; // at the last round's end
};

// Streams in rounds of 0.4 s (ranks with a destination send to it, the
// others only progress) until stop(total senders on tcp, round) says so or
// 25 rounds went by.  Every message is checked, and finalize delivers the
// rest.  *last holds this process's stats at the last round's end.
template <class Stop>
OnTcp stream_rounds(TestProcess &p, int dest, Stop stop, llc_stats_t *last)
{
    StreamRun run(p);
    OnTcp seen;
    if (!run.ctx)
        return seen;
    for (int round = 0; round < 25 && !::testing::Test::HasFailure(); round++) {
        double end = now_s() + 0.4;
        while (now_s() < end && !::testing::Test::HasFailure()) {
            if (dest >= 0 && run.s.room())
                run.s.send(dest);
            EXPECT_TRUE(run.progress());
        }
        llc_get_stats(run.ctx, last);
        seen.last = job_sum(p, ("tcp" + std::to_string(round)).c_str(), last->rc_active);
        seen.most = std::max(seen.most, seen.last);
        if (stop(seen.last, round))
            break;
    }
    EXPECT_TRUE(run.drain());
    run.finish();
    return seen;
}

} // namespace

// Node 0 holds ranks 0 and 1, node 1 ranks 2 and 3; ranks 2 and 3 stream
// hard to rank 0, rank 1 receives nothing.  With the node's 2 slots shared,
// rank 0 takes both and both senders move to tcp; with a private share of
// 2 / 2 = 1 per process (LLC_NODE_SHARED=0) only one does.  Both senders
// may be on tcp for a moment in the private case (rank 0 evicts one for the
// other and the victim has not left yet, or a source moves back unasked):
// rank 0 must then send one back, so the test waits for four rounds in a
// row that end with one sender on tcp, and fails if they never come.
class BusyNeighbour : public ::testing::TestWithParam<bool> {};

TEST_P(BusyNeighbour, UsesTheQuietProcessSlot)
{
    const bool shared = GetParam();
    JobOptions o = slot_job({0, 0, 1, 1}, "2", shared ? "1" : "0");
    LLC_EXPECT_JOB_OK(o, [shared](TestProcess &p) {
        llc_stats_t st{};
        int dest = p.rank >= 2 ? 0 : -1;
        int settled = 0; // private: rounds in a row that ended with one sender on tcp
        OnTcp seen = stream_rounds(
            p, dest,
            [shared, &settled](uint64_t on_tcp, int) {
                if (shared)
                    return on_tcp == 2;
                settled = on_tcp == 1 ? settled + 1 : 0;
                return settled >= 4;
            },
            &st);
        EXPECT_EQ(st.rc_slots_cap, shared ? 2u : 1u) << "rank " << p.rank;
        EXPECT_LE(st.rc_out_slots_in_use, 2u);
        EXPECT_LE(st.rc_out_slots_high_water, 2u) << "senders take outgoing slots only within the cap";
        if (p.rank == 0) {
            EXPECT_EQ(st.rc_sources, seen.last) << "one incoming slot per source on tcp";
            EXPECT_EQ(st.rc_in_slots_in_use, seen.last) << "node 0's incoming slots are all rank 0's";
        }
        if (shared) {
            EXPECT_EQ(seen.last, 2u) << "rank 0 should have used rank 1's slot";
        } else {
            EXPECT_EQ(seen.last, 1u) << "a private share of one slot (the most seen at a round's end: "
                                     << seen.most << ")";
        }
        if (p.rank == 1) {
            EXPECT_EQ(st.rc_sources, 0u);
        }
    });
}

INSTANTIATE_TEST_SUITE_P(ConnectedSlots, BusyNeighbour, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &info) {
                             return std::string(info.param ? "Shared" : "PrivateShare");
                         });

// Three receivers on node 0, each with its own busy sender on node 1, and 2
// slots per node: the senders' node never has more than 2 of them on tcp
// (the count is checked at every round's end and by its high-water mark),
// and both slots do get used.
TEST(ConnectedSlots, NodeStaysWithinTheCapWhenEveryProcessWantsASlot)
{
    JobOptions o = slot_job({0, 0, 0, 1, 1, 1}, "2", "1");
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_stats_t st{};
        int dest = p.rank >= 3 ? p.rank - 3 : -1;
        int full = 0; // rounds that ended with both slots in use: keep going for 4 of them
        OnTcp seen = stream_rounds(p, dest, [&full](uint64_t on_tcp, int) { return on_tcp == 2 && ++full >= 4; }, &st);
        EXPECT_EQ(seen.most, 2u);
        EXPECT_EQ(st.rc_slots_cap, 2u);
        if (p.rank >= 3) {
            EXPECT_LE(st.rc_out_slots_high_water, 2u) << "the senders take slots only within the cap";
        }
    });
}
