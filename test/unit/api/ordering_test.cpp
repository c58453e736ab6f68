// ordering_test.cpp - per-pair ordering and content of many messages of random
// sizes (0 B .. 8 MiB) over shm, tcp and mixed node layouts.
#include "common/test_util.hpp"
#include "common/traffic.hpp"

using namespace llctest;

namespace {

bool all_pairs(int, int) { return true; } // includes self-sends

void run(JobOptions options, TrafficPlan plan, std::function<void(const llc_stats_t &, int rank)> check = nullptr)
{
    LLC_EXPECT_JOB_OK(options, [&](TestProcess &p) {
        llc_stats_t st{};
        run_traffic(p, plan, &st);
        if (check)
            check(st, p.rank);
    });
}

TrafficPlan plan_all(int msgs = 24, size_t max_size = 8u << 20)
{
    TrafficPlan plan;
    plan.msgs_per_pair = msgs;
    plan.max_size = max_size;
    plan.sends = all_pairs;
    return plan;
}

} // namespace

TEST(Ordering, ShmAllToAllWithCma)
{
    run(job({0, 0, 0}), plan_all(), [](const llc_stats_t &st, int) {
        EXPECT_GT(st.shm_msgs, 0u);
        EXPECT_EQ(st.tcp_msgs, 0u);
    });
}

TEST(Ordering, ShmAllToAllStreamedWithoutCma)
{
    JobOptions o = job({0, 0, 0});
    o.env = {{"LLC_CMA", "0"}};
    run(o, plan_all(), [](const llc_stats_t &st, int) { EXPECT_EQ(st.cma_msgs, 0u); });
}

TEST(Ordering, ShmTinyRingStreamsFragments)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_CMA", "0"}, {"LLC_SHM_RING_BYTES", "4096"}};
    run(o, plan_all(20, 1u << 20));
}

TEST(Ordering, TcpAllToAll)
{
    JobOptions o = job({0, 1, 2});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    run(o, plan_all(), [](const llc_stats_t &st, int) {
        EXPECT_GT(st.tcp_msgs, 0u);
        EXPECT_EQ(st.shm_msgs, 0u);
    });
}

TEST(Ordering, TcpAutoDetectedAddress)
{
    run(job({0, 1}), plan_all(12, 1u << 20));
}

TEST(Ordering, MixedNodes)
{
    run(job({0, 0, 1, 1}), plan_all(16, 4u << 20), [](const llc_stats_t &st, int) {
        EXPECT_GT(st.tcp_msgs, 0u);
        EXPECT_GT(st.shm_msgs, 0u);
        EXPECT_GT(st.self_msgs, 0u);
    });
}

TEST(Ordering, IovWithSeveralSegmentsEverywhere)
{
    TrafficPlan plan = plan_all(16, 2u << 20);
    plan.iov_segments = 5;
    run(job({0, 0, 1}), plan);
    JobOptions o = job({0, 0, 1});
    o.env = {{"LLC_CMA", "0"}};
    run(o, plan);
}

TEST(Traffic, ManyToOne)
{
    TrafficPlan plan;
    plan.msgs_per_pair = 80;
    plan.max_size = 512 * 1024;
    plan.sends = [](int src, int dst) { return dst == 0 && src != 0; };
    run(job({0, 0, 0, 1, 1, 2, 2}), plan);
}

TEST(Traffic, EightProcessesOnTwoCoresAllToAll)
{
    TrafficPlan plan = plan_all(12, 256 * 1024);
    run(job({0, 0, 0, 0, 1, 1, 1, 1}, 90), plan);
}
