// Per-step link analysis (model/step_links): schedules, flow counting on the
// fabric's links and the per-step predictions, on small hand-checked cases;
// the sharing-mode switch and the per-rank node override of the C API.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <unistd.h>

#include "alltoall/alltoall_state.hpp"
#include "alltoall_net.hpp"
#include "model/alltoall_model.hpp"
#include "model/step_links.hpp"

using namespace llc::coll::model;
using llc::coll::alltoall::Alg;

namespace {

// 2 leaves x 4 node numbers, 2 uplinks per leaf (uplink = dest mod 2)
Fabric small_fabric(double uplink_speed = 1.0)
{
    Fabric f;
    f.name = "small";
    f.levels = 2;
    f.leaves = 2;
    f.hosts_per_leaf = 4;
    f.uplinks_per_leaf = 2;
    f.uplink_speed = uplink_speed;
    return f;
}

Params hockney_params()
{
    Params p;
    p.L = 1e-6;
    p.B = 1e-9;
    derive(&p);
    return p;
}

}  // namespace

TEST(AlltoallSteps, Schedules)
{
    // Bruck, P = 5: rounds to r+1, r+2, r+4 with 2, 2, 1 blocks
    auto b = alltoall_schedule(Alg::bruck, 5);
    ASSERT_EQ(b.size(), 3u);
    EXPECT_EQ(b[0].blocks, 2);
    EXPECT_EQ(b[1].blocks, 2);
    EXPECT_EQ(b[2].blocks, 1);
    EXPECT_EQ(b[2].dst, (std::vector<int>{4, 0, 1, 2, 3}));
    // pairwise, P = 4: XOR
    auto pw = alltoall_schedule(Alg::pairwise_mb, 4);
    ASSERT_EQ(pw.size(), 3u);
    EXPECT_EQ(pw[2].dst, (std::vector<int>{3, 2, 1, 0}));
    EXPECT_EQ(pw[0].blocks, 1);
    // ring, P = 4: shift
    auto rg = alltoall_schedule(Alg::ring, 4);
    EXPECT_EQ(rg[0].dst, (std::vector<int>{1, 2, 3, 0}));
    EXPECT_TRUE(alltoall_schedule(Alg::ring, 1).empty());
}

TEST(AlltoallSteps, FlatAndTwoPerNode)
{
    Fabric flat;
    // one rank per node on one switch: every step has sharing 1
    for (int a = 0; a < llc::coll::alltoall::kNumAlgs; a++)
        for (double s : alltoall_step_sharing(flat, {0, 1, 2, 3, 4, 5, 6, 7}, Alg(a)))
            EXPECT_DOUBLE_EQ(s, 1.0);
    // two ranks per node: XOR step 1 stays on the node (no link: 1), steps 2
    // and 3 put both ranks of a node on its link (2)
    EXPECT_EQ(alltoall_step_sharing(flat, {0, 0, 1, 1}, Alg::pairwise),
              (std::vector<double>{1, 2, 2}));
    // ring step 1: 0->1 on node 0, 1->2 and 3->0 leave their nodes: 1 flow per link
    EXPECT_EQ(alltoall_step_sharing(flat, {0, 0, 1, 1}, Alg::ring),
              (std::vector<double>{1, 2, 1}));
}

TEST(AlltoallSteps, UplinkSharing)
{
    Fabric f = small_fabric();
    // nodes 0, 2 (leaf 0) and 4, 6 (leaf 1): every receiver behind uplink 0
    const std::vector<int> same_up = {0, 2, 4, 6};
    // XOR step 1 stays in the leaves; steps 2, 3: both flows into a leaf on uplink 0
    EXPECT_EQ(alltoall_step_sharing(f, same_up, Alg::pairwise), (std::vector<double>{1, 2, 2}));
    // Bruck: round 1 (r+1) has one inter-leaf flow per leaf, round 2 (r+2) two
    EXPECT_EQ(alltoall_step_sharing(f, same_up, Alg::bruck), (std::vector<double>{1, 2}));
    // nodes 0, 1, 4, 5: receivers spread over both uplinks -> no sharing
    EXPECT_EQ(alltoall_step_sharing(f, {0, 1, 4, 5}, Alg::pairwise),
              (std::vector<double>{1, 1, 1}));
    // half-speed uplinks count double
    Fabric slow = small_fabric(0.5);
    EXPECT_EQ(alltoall_step_sharing(slow, same_up, Alg::pairwise), (std::vector<double>{1, 4, 4}));
    EXPECT_EQ(alltoall_step_sharing(slow, {0, 1, 4, 5}, Alg::pairwise),
              (std::vector<double>{1, 2, 2}));
    // one level: the uplinks do not exist
    Fabric one = f;
    one.levels = 1;
    EXPECT_EQ(alltoall_step_sharing(one, same_up, Alg::pairwise), (std::vector<double>{1, 1, 1}));
}

TEST(AlltoallSteps, HockneyPerStepPredictions)
{
    Fabric f = small_fabric();
    const std::vector<int> nodes = {0, 2, 4, 6};
    Params p = hockney_params();
    const double L = 1e-6, MB = 1000 * 1e-9;  // M = 1000 bytes
    auto t = predict_alltoall_all_steps(Kind::hockney, f, nodes, 1000, p);
    // pairwise: steps with sharing 1, 2, 2 -> 3L + 5 MB
    EXPECT_NEAR(t[int(Alg::pairwise)], 3 * L + 5 * MB, 1e-15);
    // Bruck: 2 blocks per round, sharing 1 then 2 -> 2L + (2 + 4) MB
    EXPECT_NEAR(t[int(Alg::bruck)], 2 * L + 6 * MB, 1e-15);
    // ring: r+1 (one inter-leaf flow per leaf: 1), r+2 (2), r+3 (1)
    EXPECT_NEAR(t[int(Alg::ring)], 3 * L + 4 * MB, 1e-15);
    // variants: + 3 tokens (L each), + 3 barriers (2 rounds of L), + 1 barrier
    EXPECT_NEAR(t[int(Alg::pairwise_lb)], 6 * L + 5 * MB, 1e-15);
    EXPECT_NEAR(t[int(Alg::pairwise_mb)], 9 * L + 5 * MB, 1e-15);
    EXPECT_NEAR(t[int(Alg::pairwise_ob)], 5 * L + 5 * MB, 1e-15);
    EXPECT_NEAR(t[int(Alg::ring_ob)], 5 * L + 4 * MB, 1e-15);
    // LogGP: Lw + 2o + (M-1) G s per step
    auto g = predict_alltoall_all_steps(Kind::loggp, f, nodes, 1000, p);
    const double step0 = p.Lw + 2 * p.o + 999 * p.G;
    EXPECT_NEAR(g[int(Alg::pairwise)], 3 * step0 + 2 * 999 * p.G, 1e-15);  // sharing 1 + 2 + 2
}

TEST(AlltoallSteps, UniformSharingEqualsPaperForm)
{
    Params p = hockney_params();
    for (Kind k : {Kind::hockney, Kind::loggp, Kind::logpq})
        for (int a = 0; a < llc::coll::alltoall::kNumAlgs; a++)
            for (double M : {8.0, 16384.0, 1048576.0}) {
                double s = 1.7;
                double paper = predict_alltoall(k, Alg(a), 12, M, p, s);
                double steps = predict_alltoall_steps(k, Alg(a), 12, M, p, std::vector<double>(11, s));
                EXPECT_NEAR(paper, steps, 1e-12 * paper) << kind_name(k) << " " << a << " " << M;
            }
}

TEST(AlltoallSteps, RiccPattern4KeepsBruckOnlyPerStep)
{
    // 64 processes, first 16 nodes of 4 leaves, 16 KB, L = 2 us, 1.5 GB/s:
    // the paper's single factor (2.74) prunes Bruck at threshold 2; per step
    // Bruck's rounds 1..8 stay mostly inside the leaves, and it is kept.
    Fabric f = ricc_fabric();
    auto nodes = paper_placement(f, 4, 64);
    Params p;
    p.L = 2e-6;
    p.B = 1.0 / 1.5e9;
    derive(&p);
    auto paper = predict_alltoall_all(Kind::hockney, 64, 16384, p, analyze(f, nodes).sharing);
    auto steps = predict_alltoall_all_steps(Kind::hockney, f, nodes, 16384, p);
    auto has_bruck = [](const std::vector<Alg> &v) {
        for (Alg a : v)
            if (a == Alg::bruck)
                return true;
        return false;
    };
    EXPECT_FALSE(has_bruck(prune(paper, 2.0)));
    EXPECT_TRUE(has_bruck(prune(steps, 2.0)));
    // pairwise XOR: 15 steps inside the leaf (1), 48 across: 16 flows into a
    // leaf over 4 uplinks (4)
    auto s = alltoall_step_sharing(f, nodes, Alg::pairwise);
    ASSERT_EQ(s.size(), 63u);
    EXPECT_DOUBLE_EQ(s[14], 1.0);
    EXPECT_DOUBLE_EQ(s[15], 4.0);
    EXPECT_DOUBLE_EQ(s[62], 4.0);
}

TEST(AlltoallSteps, PaperFormulaWithSlowUplinks)
{
    // uplink_speed divides the inter-leaf term of B/BS_ij
    EXPECT_NEAR(bs_divisor(1, 2, 8, 1.5, BsVariant::paper, 0.5), (0 + 1 + 6 * 1.5 * 2) / 7, 1e-12);
    std::istringstream in("levels 2\nhosts_per_leaf 8\nuplinks_per_leaf 4\nuplink_speed 0.5\n");
    Fabric f;
    std::string err;
    ASSERT_TRUE(parse_fabric(in, &f, &err)) << err;
    EXPECT_DOUBLE_EQ(f.uplink_speed, 0.5);
    std::istringstream bad("uplink_speed 0\n");
    EXPECT_FALSE(parse_fabric(bad, &f, &err));
    std::string path = std::string(LLC_SRCDIR) + "/bench/alltoall/emu8.fabric";
    ASSERT_TRUE(load_fabric(path, &f, &err)) << err;
    EXPECT_EQ(f.hosts_per_leaf, 8);
    EXPECT_DOUBLE_EQ(f.uplink_speed, 0.5);
}

TEST(AlltoallSteps, SharingModeAndNodeOverrideThroughTheCApi)
{
    SharingMode m;
    EXPECT_TRUE(sharing_mode_from_name("paper", &m));
    EXPECT_EQ(m, SharingMode::paper);
    EXPECT_FALSE(sharing_mode_from_name("bogus", &m));
    EXPECT_EQ(llc::coll::alltoall::config_from_env().sharing, SharingMode::steps);  // default
    setenv("LLC_ALLTOALL_MODEL_SHARING", "paper", 1);
    EXPECT_EQ(llc::coll::alltoall::config_from_env().sharing, SharingMode::paper);
    unsetenv("LLC_ALLTOALL_MODEL_SHARING");

    // LLC_COLL_NODES applies to communicators of its length only
    setenv("LLC_COLL_NODES", "0,2,4,6", 1);
    llc_coll_state_t *s4 = llc_coll_state_create(1, 4);
    llc_coll_state_t *s3 = llc_coll_state_create(1, 3);
    ASSERT_EQ(llc_coll_set_topology(s4, nullptr, nullptr), 0);
    ASSERT_EQ(llc_coll_set_topology(s3, nullptr, nullptr), 0);
    EXPECT_EQ(llc::coll::alltoall_state(s4)->node_of_rank, (std::vector<int>{0, 2, 4, 6}));
    EXPECT_EQ(llc::coll::alltoall_state(s3)->node_of_rank, (std::vector<int>{0, 1, 2}));
    unsetenv("LLC_COLL_NODES");
    llc_coll_state_free(s4);
    llc_coll_state_free(s3);
}

TEST(AlltoallSteps, LearningCounters)
{
    // auto without pruning, 4 ranks, TRIALS 1: 9 x (warm-up + 1) learning
    // calls, one phase
    setenv("LLC_ALLTOALL", "auto", 1);
    setenv("LLC_ALLTOALL_PRUNE", "0", 1);
    setenv("LLC_ALLTOALL_TRIALS", "1", 1);
    double s0, s1;
    long c0, c1, p0, p1;
    llc_coll_alltoall_learning(&s0, &c0, &p0);
    const int P = 4;
    a2a_test::Net net(P);
    std::vector<llc_coll_state_t *> st(P);
    for (int r = 0; r < P; r++)
        st[r] = llc_coll_state_create(r, P);
    net.run([&](int r) {
        std::vector<char> s(P * 64), d(P * 64);
        for (int i = 0; i < 21; i++)
            ASSERT_EQ(llc_coll_alltoall(st[r], net.p2p(r), s.data(), d.data(), 64), 0);
    });
    llc_coll_alltoall_learning(&s1, &c1, &p1);
    EXPECT_EQ(c1 - c0, 9 * 2 * P);  // every rank counts its own calls
    EXPECT_EQ(p1 - p0, P);
    EXPECT_GE(s1, s0);
    for (int r = 0; r < P; r++)
        llc_coll_state_free(st[r]);
    for (const char *v : {"LLC_ALLTOALL", "LLC_ALLTOALL_PRUNE", "LLC_ALLTOALL_TRIALS"})
        unsetenv(v);
}
