// Learned Alltoall decisions kept across runs (alltoall/decision_cache.hpp):
// the file's lines, Tuner::resume, and two "runs" end to end through
// llc_coll_alltoall on the fake clock of the in-process transport.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "alltoall/alltoall_state.hpp"
#include "alltoall/decision_cache.hpp"
#include "alltoall/tuner.hpp"
#include "alltoall_net.hpp"

using llc::coll::alltoall::Alg;
using llc::coll::alltoall::Decision;
using llc::coll::alltoall::DecisionKey;
using llc::coll::alltoall::Tuner;
using llc::coll::alltoall::TunerConfig;

namespace {

std::string temp_file(const char *what) { return ::testing::TempDir() + what + std::to_string(getpid()); }

DecisionKey key_of(int per_node_a, int per_node_b, std::vector<Alg> cands)
{
    std::vector<int> nodes;
    nodes.insert(nodes.end(), per_node_a, 0);
    nodes.insert(nodes.end(), per_node_b, 1);
    return DecisionKey::of_job("hostA", per_node_a + per_node_b, nodes, 14, cands);
}

} // namespace

TEST(AlltoallDecisions, FileKeepsOneLinePerKey)
{
    const std::string path = temp_file("a2a_decisions_");
    std::remove(path.c_str());
    const std::vector<Alg> cands{Alg::native, Alg::pairwise, Alg::ring_ob};
    const DecisionKey k44 = key_of(4, 4, cands), k53 = key_of(5, 3, cands);
    EXPECT_EQ(k44.nodes, 2);
    EXPECT_EQ(k44.per_node, 4);
    EXPECT_EQ(k53.per_node, 5);
    Decision d;
    EXPECT_FALSE(load_decision(path, k44, &d)); // no file yet

    ASSERT_TRUE(store_decision(path, k44, {Alg::ring_ob, 1.5e-4}));
    ASSERT_TRUE(store_decision(path, k53, {Alg::native, 2.5e-4}));
    ASSERT_TRUE(load_decision(path, k44, &d));
    EXPECT_EQ(d.alg, Alg::ring_ob);
    EXPECT_DOUBLE_EQ(d.learned, 1.5e-4);
    ASSERT_TRUE(load_decision(path, k53, &d));
    EXPECT_EQ(d.alg, Alg::native); // the MPI's own, stored as "mpich"

    // a new round of the same key replaces its line, the other stays
    ASSERT_TRUE(store_decision(path, k44, {Alg::pairwise, 9e-5}));
    ASSERT_TRUE(load_decision(path, k44, &d));
    EXPECT_EQ(d.alg, Alg::pairwise);
    EXPECT_DOUBLE_EQ(d.learned, 9e-5);
    int lines = 0;
    {
        std::ifstream in(path);
        for (std::string l; std::getline(in, l);)
            lines++;
    }
    EXPECT_EQ(lines, 2);

    // race times and times in a row, one per candidate, come back; a line
    // whose lists do not fit the candidates still gives its winner
    ASSERT_TRUE(store_decision(path, k44, {Alg::ring_ob, 1e-4, {2e-4, 1.5e-4, 1e-4}, {0, 0, 9e-5}}));
    ASSERT_TRUE(load_decision(path, k44, &d));
    EXPECT_EQ(d.alg, Alg::ring_ob);
    EXPECT_EQ(d.race, (std::vector<double>{2e-4, 1.5e-4, 1e-4}));
    EXPECT_EQ(d.steady, (std::vector<double>{0, 0, 9e-5}));
    {
        std::ofstream app(path, std::ios::app);
        app << k53.text() << " alg=pairwise t=3e-4 race=1,2 steady=0,0\n";
    }
    ASSERT_TRUE(load_decision(path, k53, &d));
    EXPECT_EQ(d.alg, Alg::pairwise);
    EXPECT_TRUE(d.race.empty());
    EXPECT_TRUE(d.steady.empty());
    {
        // three values and a trailing comma: not a list of three
        std::ofstream app(path, std::ios::app);
        app << k44.text() << " alg=ring_ob t=1e-4 race=2e-4,1.5e-4,1e-4, steady=0,0,9e-5\n";
    }
    ASSERT_TRUE(load_decision(path, k44, &d));
    EXPECT_EQ(d.alg, Alg::ring_ob);
    EXPECT_TRUE(d.race.empty());
    ASSERT_TRUE(store_decision(path, k44, {Alg::pairwise, 9e-5}));

    // another candidate list, size class, host or process count is another key
    Decision untouched{Alg::bruck, 7};
    EXPECT_FALSE(load_decision(path, key_of(4, 4, {Alg::pairwise, Alg::ring_ob}), &untouched));
    DecisionKey other = k44;
    other.size_class = 15;
    EXPECT_FALSE(load_decision(path, other, &untouched));
    other = k44;
    other.host = "hostB";
    EXPECT_FALSE(load_decision(path, other, &untouched));
    EXPECT_EQ(untouched.alg, Alg::bruck);
    EXPECT_EQ(untouched.learned, 7);

    // lines it cannot use are skipped: a winner that is not a candidate, a
    // time that is not a positive number, an unknown name
    {
        std::ofstream app(path, std::ios::app);
        const std::string p = key_of(6, 2, cands).text();
        app << p << " alg=bruck t=1e-4\n";
        app << p << " alg=ring_ob t=-1\n";
        app << p << " alg=ring_ob t=fast\n";
        app << p << " alg=nosuch t=1e-4\n";
        app << "garbage\n";
    }
    EXPECT_FALSE(load_decision(path, key_of(6, 2, cands), &untouched));
    ASSERT_TRUE(load_decision(path, k44, &d)); // the good lines still read
    EXPECT_EQ(d.alg, Alg::pairwise);

    // the setting: a path, off, or the default file under the cache directory
    setenv("LLC_ALLTOALL_DECISIONS", path.c_str(), 1);
    EXPECT_EQ(llc::coll::alltoall::decision_cache_path(), path);
    setenv("LLC_ALLTOALL_DECISIONS", "off", 1);
    EXPECT_EQ(llc::coll::alltoall::decision_cache_path(), "");
    EXPECT_FALSE(store_decision("", k44, {Alg::ring, 1}));
    setenv("LLC_ALLTOALL_DECISIONS", "auto", 1);
    setenv("XDG_CACHE_HOME", "/nonexistent-cache", 1);
    EXPECT_EQ(llc::coll::alltoall::decision_cache_path(), "/nonexistent-cache/mpich-llc/alltoall-decisions");
    unsetenv("XDG_CACHE_HOME");
    setenv("LLC_ALLTOALL_DECISIONS", "off", 1); // as alltoall_main.cpp left it
    std::remove(path.c_str());
}

TEST(AlltoallDecisions, ResumeMonitorsTheWinnerWithoutLearning)
{
    TunerConfig cfg;
    cfg.period = 4;
    cfg.relearn = 0.5;
    Tuner t({Alg::pairwise, Alg::ring, Alg::ring_ob}, cfg);
    EXPECT_EQ(t.phase(), Tuner::Phase::learning);
    EXPECT_FALSE(t.resume(Alg::bruck, 1e-4)); // not a candidate
    EXPECT_FALSE(t.resume(Alg::ring, 0));     // no time
    EXPECT_EQ(t.phase(), Tuner::Phase::learning);
    ASSERT_TRUE(t.resume(Alg::ring, 2.0));
    EXPECT_EQ(t.phase(), Tuner::Phase::monitoring);
    EXPECT_EQ(t.current(), Alg::ring);
    EXPECT_EQ(t.learnings(), 0);
    EXPECT_DOUBLE_EQ(t.learned_time(), 2.0);
    EXPECT_EQ(t.learned_means(), (std::vector<double>{0.0, 2.0, 0.0}));
    // a period near the cached time keeps it ...
    for (int i = 0; i < 3; i++)
        EXPECT_FALSE(t.record(2.2));
    ASSERT_TRUE(t.record(2.2));
    t.apply(t.decide(t.summary(), 1));
    EXPECT_EQ(t.phase(), Tuner::Phase::monitoring);
    // ... one far from it (the machine changed since) learns again
    for (int i = 0; i < 3; i++)
        EXPECT_FALSE(t.record(5.0));
    ASSERT_TRUE(t.record(5.0));
    t.apply(t.decide(t.summary(), 1));
    EXPECT_EQ(t.phase(), Tuner::Phase::learning);
    EXPECT_EQ(t.relearns(), 1);
    EXPECT_EQ(t.learnings(), 1);
}

namespace {

std::vector<double> g_msg_cost(llc::coll::alltoall::kNumAlgs, 1.0);

double msg_cost(int tag, size_t)
{
    int a = llc::coll::alltoall::alg_of_tag(tag);
    return a < 0 ? 0.0 : g_msg_cost[a];
}

} // namespace

// Run 1 learns and writes its winner; run 2 (fresh states, as a new job)
// starts monitoring that winner: no learning call, every rank alike, the data
// right.  With LLC_ALLTOALL_DECISIONS=off a run learns again.
TEST(AlltoallDecisions, SecondRunStartsWithTheFirstRunsWinner)
{
    const std::string path = temp_file("a2a_decisions_run_");
    std::remove(path.c_str());
    setenv("LLC_ALLTOALL_DECISIONS", path.c_str(), 1);
    setenv("LLC_ALLTOALL_PRUNE", "0", 1);
    setenv("LLC_ALLTOALL_TRIALS", "2", 1);
    setenv("LLC_ALLTOALL_SETTLE", "0", 1); // the call counts below have no settling calls
    setenv("LLC_ALLTOALL_CUTOFF", "0", 1);
    setenv("LLC_ALLTOALL_MONITOR_PERIOD", "5", 1);
    const int P = 4;
    const size_t M = 100;
    a2a_test::Net net(P);
    net.set_cost(msg_cost);
    g_msg_cost.assign(llc::coll::alltoall::kNumAlgs, 1.0);
    g_msg_cost[int(Alg::pairwise_lb)] = 0.1;
    auto run = [&](int calls) {
        std::vector<llc_coll_state_t *> st(P);
        for (int r = 0; r < P; r++)
            st[r] = llc_coll_state_create(r, P);
        net.run([&](int r) {
            for (int i = 0; i < calls; i++) {
                std::vector<char> s(P * M), d(P * M, 0);
                for (int j = 0; j < P; j++)
                    s[j * M + M - 1] = char(r * 16 + j + i);
                ASSERT_EQ(llc_coll_alltoall(st[r], net.p2p(r), s.data(), d.data(), M), 0);
                for (int j = 0; j < P; j++)
                    ASSERT_EQ(d[j * M + M - 1], char(j * 16 + r + i)) << "rank " << r;
            }
        });
        return st;
    };
    auto sclass = [&](llc_coll_state_t *s) -> const llc::coll::alltoall::SizeClass & {
        return llc::coll::alltoall_state(s)->classes.at(llc::coll::alltoall_size_class(M));
    };
    auto free_all = [](std::vector<llc_coll_state_t *> &st) {
        for (auto *s : st)
            llc_coll_state_free(s);
    };

    auto first = run(9 * 3 + 2); // one learning round (a warm-up and 2 trials each), 2 more
    for (int r = 0; r < P; r++) {
        EXPECT_EQ(sclass(first[r]).tuner.learnings(), 1);
        EXPECT_FALSE(sclass(first[r]).resumed);
        EXPECT_EQ(sclass(first[r]).tuner.chosen(), Alg::pairwise_lb);
    }
    const double learned = sclass(first[0]).tuner.learned_time();
    Decision d; // rank 0 wrote the round's result
    ASSERT_TRUE(load_decision(path, sclass(first[0]).key, &d));
    EXPECT_EQ(d.alg, Alg::pairwise_lb);
    EXPECT_NEAR(d.learned, learned, learned * 1e-5);
    free_all(first);

    auto second = run(3);
    for (int r = 0; r < P; r++) {
        EXPECT_TRUE(sclass(second[r]).resumed) << "rank " << r;
        EXPECT_EQ(sclass(second[r]).tuner.learnings(), 0);
        EXPECT_EQ(sclass(second[r]).tuner.phase(), Tuner::Phase::monitoring);
        EXPECT_EQ(sclass(second[r]).tuner.chosen(), Alg::pairwise_lb);
        EXPECT_NEAR(sclass(second[r]).tuner.learned_time(), learned, learned * 1e-5); // 6 digits in the file
    }
    free_all(second);

    setenv("LLC_ALLTOALL_DECISIONS", "off", 1);
    auto third = run(3);
    for (int r = 0; r < P; r++) {
        EXPECT_FALSE(sclass(third[r]).resumed);
        EXPECT_EQ(sclass(third[r]).tuner.phase(), Tuner::Phase::learning);
    }
    free_all(third);
    EXPECT_EQ(net.pending(), 0u);
    EXPECT_EQ(net.errors(), 0);
    for (const char *v : {"LLC_ALLTOALL_PRUNE", "LLC_ALLTOALL_TRIALS", "LLC_ALLTOALL_SETTLE", "LLC_ALLTOALL_CUTOFF",
                          "LLC_ALLTOALL_MONITOR_PERIOD"})
        unsetenv(v);
    std::remove(path.c_str());
}
