// Performance models on hand-computed cases: RCV_ij / BS_ij of Kurokawa's report on
// the RICC fat tree, Hockney / LogGP / LogPQ formulas (LogPQ against the CM-5
// numbers of Touyama and Horiguchi), fabric files, cache file, pruning decisions.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "alltoall/alltoall_state.hpp"
#include "alltoall_net.hpp"
#include "model/alltoall_model.hpp"
#include "model/cost.hpp"
#include "model/params.hpp"
#include "model/topology.hpp"

using namespace llc::coll::model;
using llc::coll::alltoall::Alg;

#ifndef LLC_SRCDIR
#define LLC_SRCDIR "."
#endif

TEST(AlltoallModel, RcvAndBsFormulas)
{
    // RCV_ij = 1 + (NUL*Pn - 1)(Nnode - Ni) Pn / (Nnode maxn - 1)
    EXPECT_NEAR(rcv(4, 1, 64, 4, 1), 1 + 3.0 * 60 / 63, 1e-12);
    EXPECT_NEAR(rcv(1, 2, 4, 2, 2), 1 + 4.0 / 7, 1e-12);
    // B/BS = (Pn - 1 + (Ni-1) Pn^2 + (Nnode-Ni) RCV) / (Nnode Pn - 1)
    EXPECT_NEAR(bs_divisor(1, 4, 64, 1, BsVariant::paper), 1.0, 1e-12);
    EXPECT_NEAR(bs_divisor(2, 2, 4, 1 + 4.0 / 7, BsVariant::paper), (1 + 4 + 2 * (1 + 4.0 / 7)) / 7,
                1e-12);
    EXPECT_NEAR(bs_divisor(2, 2, 4, 1 + 4.0 / 7, BsVariant::process),
                (1 + 4 + 2 * 2 * (1 + 4.0 / 7)) / 7, 1e-12);
}

TEST(AlltoallModel, RiccPlacementsOf64)
{
    Fabric f = ricc_fabric();
    // hand-computed divisors (B / min BS) for the five placements, 64 nodes x 1 process
    const double expect[5] = {
        (3 + 60 * (1 + 3.0 * 60 / 63)) / 63,  // 0: multiples of 4: NUL_i0 = 4
        (3 + 60 * (1 + 1.0 * 60 / 63)) / 63,  // 1: multiples of 2: NUL_i0 = NUL_i2 = 2
        1.0,                                  // 2: first 4 of each leaf: NUL_ij = 1
        (7 + 56 * (1 + 1.0 * 56 / 63)) / 63,  // 3: first 8: Ni = 8, NUL = 2
        (15 + 48 * (1 + 3.0 * 48 / 63)) / 63, // 4: first 16: Ni = 16, NUL = 4
    };
    for (int pat = 0; pat < 5; pat++) {
        std::vector<int> nodes = paper_placement(f, pat, 64);
        ASSERT_EQ(nodes.size(), 64u);
        Analysis a = analyze(f, nodes);
        EXPECT_EQ(a.nnode, 64);
        EXPECT_NEAR(a.sharing, expect[pat], 1e-9) << "pattern " << pat;
    }
    EXPECT_NEAR((3 + 60 * (1 + 3.0 * 60 / 63)) / 63, 3.7210884, 1e-6);
    // pattern 0 uses node numbers 0, 4, 8, 12 of leaf 0, then 20, 24, ...
    std::vector<int> p0 = paper_placement(f, 0, 8);
    EXPECT_EQ(p0, (std::vector<int>{0, 4, 8, 12, 20, 24, 28, 32}));
    // 256 processes: 5 per leaf for patterns 0..2
    EXPECT_EQ(paper_placement(f, 2, 256)[5], 20);
    EXPECT_EQ(paper_placement(f, 4, 256).back(), 15 * 20 + 15);
}

TEST(AlltoallModel, TwoProcessesPerNode)
{
    Fabric f = ricc_fabric();
    // nodes 0, 1 (leaf 0) and 20, 21 (leaf 1), two processes each
    std::vector<int> nodes = {0, 0, 1, 1, 20, 20, 21, 21};
    Analysis a = analyze(f, nodes);
    EXPECT_EQ(a.nnode, 4);
    EXPECT_DOUBLE_EQ(a.pn, 2);
    EXPECT_EQ(a.maxn, 2);
    EXPECT_EQ(a.links.size(), 4u);
    EXPECT_NEAR(a.sharing, (1 + 4 + 2 * (1 + 4.0 / 7)) / 7, 1e-12);
    Analysis b = analyze(f, nodes, BsVariant::process);
    EXPECT_NEAR(b.sharing, (1 + 4 + 4 * (1 + 4.0 / 7)) / 7, 1e-12);
    // one node, 4 processes: no sharing
    EXPECT_DOUBLE_EQ(analyze(Fabric(), {3, 3, 3, 3}).sharing, 1.0);
    // flat switch, 4 nodes x 2 processes: (1 + 3*4) / 7
    EXPECT_NEAR(analyze(Fabric(), {0, 0, 1, 1, 2, 2, 3, 3}).sharing, 13.0 / 7, 1e-12);
}

TEST(AlltoallModel, FabricFile)
{
    Fabric f;
    std::string err;
    ASSERT_TRUE(load_fabric(std::string(LLC_SRCDIR) + "/src/coll/model/ricc.fabric", &f, &err))
        << err;
    EXPECT_EQ(f.levels, 2);
    EXPECT_EQ(f.leaves, 52);
    EXPECT_EQ(f.hosts_per_leaf, 20);
    EXPECT_EQ(f.uplinks_per_leaf, 4);
    EXPECT_EQ(f.leaf_of(45), 2);
    EXPECT_EQ(f.uplink_of(45), 1);
    std::istringstream good("levels 2\nhosts_per_leaf 4 # c\nuplinks_per_leaf 2\nhost a 7\n");
    ASSERT_TRUE(parse_fabric(good, &f, &err));
    EXPECT_EQ(f.host_numbers.at("a"), 7);
    std::istringstream bad("levels 2\nroute random\n");
    EXPECT_FALSE(parse_fabric(bad, &f, &err));
    EXPECT_NE(err.find("line 2"), std::string::npos);
}

TEST(AlltoallModel, LogPQRelations)
{
    // eq. (2) with the CM-5 LogP numbers of Touyama and Horiguchi (m = 16 words)
    LogPQ q = logpq_from_logp(1.25e-4, 1.71e-4, 5.50e-5, 16, 9.75e-5);
    EXPECT_NEAR(q.L, 2.96e-4, 1e-9);
    EXPECT_NEAR(q.o, 4.59e-6, 1e-8);
    EXPECT_NEAR(q.g, 3.44e-6, 1e-8);
    // eq. (1)
    LogPQ w = logpq_from_words(1.77e-4, 1.19e-5, 3.44e-6, 4, 0);
    EXPECT_NEAR(w.L, 1.77e-4 + 1.19e-5 + 3 * 3.44e-6, 1e-15);
    EXPECT_NEAR(w.o, 1.19e-5 + 3 * 3.44e-6, 1e-15);
    EXPECT_NEAR(w.g, 4 * 3.44e-6, 1e-15);
}

TEST(AlltoallModel, MessageCosts)
{
    Params p;
    p.L = 2e-6;
    p.B = 1e-9;
    p.o = 0.5e-6;
    p.g = 1e-6;
    derive(&p);
    EXPECT_DOUBLE_EQ(p.Lw, 1e-6);
    EXPECT_DOUBLE_EQ(msg_time(Kind::hockney, p, 1000, 2), 2e-6 + 2e-6);
    EXPECT_DOUBLE_EQ(msg_time(Kind::loggp, p, 1001, 1), 1e-6 + 1e-6 + 1000 * 1e-9);
    // LogPQ: r = 1, w = 8: L = L0 + o0, o = o0, g = 8 B, n = o
    LogPQ q = logpq(p);
    EXPECT_DOUBLE_EQ(q.L, 1.5e-6);
    EXPECT_DOUBLE_EQ(q.g, 8e-9);
    EXPECT_DOUBLE_EQ(msg_time(Kind::logpq, p, 80, 1), q.L + q.n + 9 * 0.5e-6);
    // beyond the queues (SQ+TQ+RQ = 192 KiB): a 2L handshake unless the receive is posted
    double big = 256 * 1024, words = big / 8;
    EXPECT_DOUBLE_EQ(msg_time(Kind::logpq, p, big, 1, true), q.L + q.n + (words - 1) * 0.5e-6);
    EXPECT_DOUBLE_EQ(msg_time(Kind::logpq, p, big, 1), 3 * q.L + q.n + (words - 1) * 0.5e-6);
    EXPECT_DOUBLE_EQ(barrier_time(Kind::hockney, p, 5), 3 * 2e-6);
}

TEST(AlltoallModel, HockneyPredictionsAndPruning)
{
    Params p;
    p.L = 1e-6;
    p.B = 1e-9;
    std::vector<double> t = predict_alltoall_all(Kind::hockney, 4, 1500, p, 1);
    EXPECT_DOUBLE_EQ(t[int(Alg::pairwise)], 3 * (1e-6 + 1.5e-6));
    EXPECT_DOUBLE_EQ(t[int(Alg::bruck)], 2 * (1e-6 + 3e-6));  // 2 rounds of 2 blocks
    EXPECT_DOUBLE_EQ(t[int(Alg::ring_lb)], 3 * (1e-6 + 2.5e-6));
    EXPECT_DOUBLE_EQ(t[int(Alg::ring_mb)], 3 * (2e-6 + 2.5e-6));  // barrier: 2 rounds
    EXPECT_DOUBLE_EQ(t[int(Alg::pairwise_ob)], 2e-6 + 7.5e-6);
    // best 7.5 us; threshold 1.5 (11.25 us) drops the MPI-barrier variants (13.5 us)
    std::vector<Alg> keep = prune(t, 1.5);
    EXPECT_EQ(keep, (std::vector<Alg>{Alg::bruck, Alg::pairwise, Alg::pairwise_lb,
                                      Alg::pairwise_ob, Alg::ring, Alg::ring_lb, Alg::ring_ob}));
    EXPECT_EQ(prune(t, 2.0).size(), 9u);
    EXPECT_EQ(prune(t, 0).size(), 9u);
    EXPECT_EQ(prune(t, 1.0), (std::vector<Alg>{Alg::pairwise, Alg::ring}));
    // the copy term: Bruck packs and unpacks every round's blocks and rotates
    // the P blocks in and out: (2 x 4 + 2 x (2 + 2)) x 1500 bytes for P = 4
    p.C = 1e-10;
    std::vector<double> tc = predict_alltoall_all(Kind::hockney, 4, 1500, p, 1);
    EXPECT_DOUBLE_EQ(tc[int(Alg::bruck)], 2 * (1e-6 + 3e-6) + 1e-10 * 16 * 1500);
    EXPECT_DOUBLE_EQ(tc[int(Alg::pairwise)], t[int(Alg::pairwise)]);  // no copies
    // 8 ranks, 1 MiB, this machine's measured order of magnitude: the copies
    // take Bruck past twice the best, so pruning drops it
    p.L = 4e-7;
    p.B = 4e-10;
    p.C = 2e-10;
    tc = predict_alltoall_all(Kind::hockney, 8, 1048576, p, 1);
    keep = prune(tc, 2.0);
    EXPECT_EQ(std::count(keep.begin(), keep.end(), Alg::bruck), 0);
    p.C = 0;
    p.L = 1e-6;
    p.B = 1e-9;

    // paper scale, 16 KB: bandwidth bound, Bruck's log2(P) x P/2 blocks lose
    // against P-1 blocks once the bandwidth is shared (pattern 0, 64 nodes)
    Fabric f = ricc_fabric();
    p.L = 2e-6;
    p.B = 1.0 / 1.5e9;
    double s0 = analyze(f, paper_placement(f, 0, 64)).sharing;
    t = predict_alltoall_all(Kind::hockney, 64, 16384, p, s0);
    keep = prune(t, 2.0);
    EXPECT_EQ(std::count(keep.begin(), keep.end(), Alg::bruck), 0);
    EXPECT_EQ(std::count(keep.begin(), keep.end(), Alg::pairwise), 1);
    // tiny messages: latency bound, Bruck (6 rounds) beats 63 steps by > 2x
    t = predict_alltoall_all(Kind::hockney, 64, 8, p, s0);
    EXPECT_EQ(prune(t, 2.0), (std::vector<Alg>{Alg::bruck}));
}

TEST(AlltoallModel, CacheFileRoundTrip)
{
    std::string dir = ::testing::TempDir() + "a2a_cache_" + std::to_string(getpid());
    std::string path = dir + "/sub/model-params";
    Params p;
    p.L = 3.5e-6;
    p.B = 2.5e-10;
    p.o = 1e-7;
    p.g = 2e-7;
    p.C = 1.5e-10;
    ASSERT_TRUE(cache_store(path, "hostA", p));
    p.L = 9e-6;
    ASSERT_TRUE(cache_store(path, "hostB", p));
    Params q;
    ASSERT_TRUE(cache_load(path, "hostA", &q));
    EXPECT_DOUBLE_EQ(q.L, 3.5e-6);
    EXPECT_DOUBLE_EQ(q.B, 2.5e-10);
    EXPECT_DOUBLE_EQ(q.C, 1.5e-10);
    ASSERT_TRUE(cache_load(path, "hostB", &q));
    EXPECT_DOUBLE_EQ(q.L, 9e-6);
    EXPECT_FALSE(cache_load(path, "hostC", &q));
    // a line of an older version (no copy term) is not taken: measured again
    {
        std::ofstream old(path, std::ios::app);
        old << "hostD L=1e-06 B=1e-09 o=1e-07 g=2e-07\n";
    }
    EXPECT_FALSE(cache_load(path, "hostD", &q));
    setenv("LLC_MODEL_CACHE", path.c_str(), 1);
    EXPECT_EQ(cache_path(), path);
    setenv("LLC_MODEL_CACHE", "off", 1);
    EXPECT_EQ(cache_path(), "");
    std::remove(path.c_str());
}

// acquire(): rank 0 measures against the last rank, stores the cache, and
// every rank gets the same numbers; the second time they come from the cache.
TEST(AlltoallModel, AcquireMeasuresOnceThenCaches)
{
    std::string path = ::testing::TempDir() + "a2a_acq_" + std::to_string(getpid());
    std::remove(path.c_str());
    setenv("LLC_MODEL_CACHE", path.c_str(), 1);
    for (const char *expect_src : {"measured", "cache"}) {
        a2a_test::Net net(3);
        std::vector<Params> got(3);
        std::vector<int> rc(3);
        net.run([&](int r) { rc[r] = acquire(net.p2p(r), &got[r]); });
        for (int r = 0; r < 3; r++) {
            EXPECT_EQ(rc[r], 0);
            EXPECT_EQ(got[r].source, expect_src);
            EXPECT_DOUBLE_EQ(got[r].L, got[0].L);
            EXPECT_DOUBLE_EQ(got[r].B, got[0].B);
            EXPECT_GT(got[r].L, 0);
            EXPECT_GT(got[r].B, 0);
            EXPECT_GT(got[r].C, 0);  // measured by rank 0, broadcast with the rest
            EXPECT_DOUBLE_EQ(got[r].C, got[0].C);
        }
        EXPECT_EQ(net.pending(), 0u);
    }
    // environment beats the cache
    setenv("LLC_MODEL_L", "7e-6", 1);
    setenv("LLC_MODEL_B", "1e-10", 1);
    setenv("LLC_MODEL_SQ", "4096", 1);
    a2a_test::Net net(2);
    std::vector<Params> got(2);
    net.run([&](int r) { acquire(net.p2p(r), &got[r]); });
    EXPECT_EQ(got[1].source, "env");
    EXPECT_DOUBLE_EQ(got[1].L, 7e-6);
    EXPECT_DOUBLE_EQ(got[1].SQ, 4096);
    unsetenv("LLC_MODEL_L");
    unsetenv("LLC_MODEL_B");
    unsetenv("LLC_MODEL_SQ");
    setenv("LLC_MODEL_CACHE", "off", 1);
    std::remove(path.c_str());
}
