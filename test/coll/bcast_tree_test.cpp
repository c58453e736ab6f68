// Tree shape, virtual-rank mapping, table, profile rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "bcast/bcast.hpp"

using namespace llc::coll::bcast;

TEST(BcastTree, EveryPositionReachedOnceSizes1To70)
{
    for (int size = 1; size <= 70; size++) {
        std::vector<int> seen(size, 0);
        std::vector<int> stack{0};
        seen[0] = 1;
        while (!stack.empty()) {
            int v = stack.back();
            stack.pop_back();
            int prev = 1 << 30;
            tree_for_children(v, size, [&](int c) {
                ASSERT_LT(c, size);
                ASSERT_GT(c, v);
                EXPECT_EQ(tree_parent(c), v) << "size " << size << " child " << c;
                EXPECT_LT(c, prev) << "children must come largest subtree first";
                prev = c;
                seen[c]++;
                stack.push_back(c);
            });
        }
        for (int v = 0; v < size; v++)
            EXPECT_EQ(seen[v], 1) << "size " << size << " pos " << v;
        // parent/children agree, depth = number of receives on the path
        for (int v = 1; v < size; v++) {
            int p = tree_parent(v);
            bool found = false;
            tree_for_children(p, size, [&](int c) { found |= c == v; });
            EXPECT_TRUE(found);
            int d = 0;
            for (int u = v; u; u = tree_parent(u))
                d++;
            EXPECT_EQ(tree_depth(v), d);
        }
        // receive steps: ceil(log2(size)) steps in all
        auto steps = tree_steps(size);
        int mx = *std::max_element(steps.begin(), steps.end());
        int expect = 0;
        while ((1 << expect) < size)
            expect++;
        EXPECT_EQ(mx, expect) << "size " << size;
    }
}

TEST(BcastTree, PaperShape16)
{
    // root 0 sends to 8, 4, 2, 1; 8 serves 8..15: sends to 12, 10, 9
    std::vector<int> c0, c8;
    tree_for_children(0, 16, [&](int c) { c0.push_back(c); });
    tree_for_children(8, 16, [&](int c) { c8.push_back(c); });
    EXPECT_EQ(c0, (std::vector<int>{8, 4, 2, 1}));
    EXPECT_EQ(c8, (std::vector<int>{12, 10, 9}));
    EXPECT_EQ(tree_nchildren(15, 16), 0);
    EXPECT_EQ(tree_nchildren(64, 128), 6);
    EXPECT_EQ(tree_nchildren(0, 128), 7);
}

TEST(BcastTree, MappingIsABijectionForEveryRoot)
{
    std::mt19937 rng(1);
    for (int size : {1, 2, 3, 5, 8, 13, 64, 70}) {
        for (int trial = 0; trial < 5; trial++) {
            std::vector<int> perm(size);
            for (int i = 0; i < size; i++)
                perm[i] = i;
            std::shuffle(perm.begin(), perm.end(), rng);
            Table t(size);
            ASSERT_TRUE(t.assign(perm));
            for (int root = 0; root < size; root++) {
                std::set<int> pos;
                for (int r = 0; r < size; r++) {
                    int p = t.position(r, root);
                    EXPECT_EQ(t.real_at(p, root), r);
                    pos.insert(p);
                }
                EXPECT_EQ(static_cast<int>(pos.size()), size);
                EXPECT_EQ(t.position(root, root), 0);
            }
        }
    }
}

TEST(BcastTree, SwapOfNonRootsSwapsPositionsForAnyRoot)
{
    Table t(16), u(16);
    u.swap(3, 9);
    for (int root = 0; root < 16; root++) {
        if (root == 3 || root == 9)
            continue;
        EXPECT_EQ(u.position(3, root), t.position(9, root));
        EXPECT_EQ(u.position(9, root), t.position(3, root));
    }
}

TEST(BcastTree, TableChecksumVersionAndParse)
{
    Table a(8), b(8);
    EXPECT_EQ(a.checksum(), b.checksum());
    a.swap(1, 7);
    EXPECT_NE(a.checksum(), b.checksum());
    EXPECT_EQ(a.version(), 1u);
    b.swap(7, 1);
    EXPECT_EQ(a.checksum(), b.checksum());
    a.swap(1, 7);
    EXPECT_EQ(a.checksum(), Table(8).checksum());
    EXPECT_FALSE(a.assign({0, 1, 2}));
    EXPECT_FALSE(a.assign({0, 1, 1, 3, 4, 5, 6, 7}));

    Table t(128);
    ASSERT_TRUE(parse_table("64:127", 128, t));
    EXPECT_EQ(t.vrank(64), 127);
    EXPECT_EQ(t.vrank(127), 64);
    ASSERT_TRUE(parse_table("3,2,1,0", 4, t));
    EXPECT_EQ(t.vrank(0), 3);
    EXPECT_FALSE(parse_table("3,2,1", 4, t));
    EXPECT_FALSE(parse_table("1:9", 4, t));
    EXPECT_FALSE(parse_table("x", 4, t));
}

TEST(BcastProfile, WeightedAverage)
{
    Params p;
    p.weight_i = 2;
    Profile f(p);
    EXPECT_DOUBLE_EQ(f.sample(8.0), 8.0);  // first sample
    EXPECT_DOUBLE_EQ(f.sample(0.0), 6.0);  // (3*8 + 0)/4
    EXPECT_DOUBLE_EQ(f.sample(2.0), 5.0);  // (3*6 + 2)/4
    p.weight_i = 1;                        // the paper's max-effect setting
    Profile h(p);
    h.sample(4.0);
    EXPECT_DOUBLE_EQ(h.sample(2.0), 3.0);
    f.reset_history();
    EXPECT_DOUBLE_EQ(f.sample(1.0), 1.0);
}

TEST(BcastProfile, MeanOfThreeStableSamples)
{
    Params p;
    p.weight_i = 3;
    p.mean3 = true;
    Profile f(p);
    f.sample(10.0);
    f.sample(10.5);
    // 10, 10.5, 10.2 within 6.25 %: the arithmetic mean
    EXPECT_NEAR(f.sample(10.2), (10.0 + 10.5 + 10.2) / 3, 1e-12);
    // 10.5, 10.2, 20: not stable -> weighted average
    double prev = f.value();
    EXPECT_NEAR(f.sample(20.0), (7 * prev + 20.0) / 8, 1e-12);
}

TEST(BcastProfile, ReportOnlyAfterFiftyPercentChange)
{
    Params p;
    p.weight_i = 0;  // value = last wait, to test the rule alone
    p.floor = 1e-6;
    Profile f(p);
    f.sample(0.5e-6);
    EXPECT_FALSE(f.should_report());  // below the floor: zero
    f.sample(100e-6);
    EXPECT_TRUE(f.should_report());
    f.take_report();
    f.sample(140e-6);  // +40 %
    EXPECT_FALSE(f.should_report());
    f.sample(151e-6);  // +51 %
    EXPECT_TRUE(f.should_report());
    f.take_report();
    f.sample(76e-6);  // -49 %
    EXPECT_FALSE(f.should_report());
    f.sample(0.0);  // -100 %
    EXPECT_TRUE(f.should_report());
    EXPECT_DOUBLE_EQ(f.take_report(), 0.0);
    EXPECT_DOUBLE_EQ(f.reported(), 0.0);
}

// The noise estimate: a one-off hiccup raises the value and the noise alike
// (so the gap it makes is never significant against its own noise), a
// steady wait leaves the noise decaying towards zero, and a history reset
// (the process moved) keeps the noise.
TEST(BcastProfile, NoiseFollowsSpreadNotLevel)
{
    Params p;  // i = 2
    Profile f(p);
    f.sample(100e-6);
    EXPECT_DOUBLE_EQ(f.noise(), 100e-6);  // one sample: as uncertain as it is large
    for (int k = 0; k < 40; k++)
        f.sample(100e-6);
    EXPECT_NEAR(f.value(), 100e-6, 1e-12);
    EXPECT_LT(f.noise(), 1e-8);  // steady: the noise decays by 3/4 per sample
    f.sample(10e-3);             // one hiccup of 10 ms
    const double base = 100e-6;
    for (int k = 0; k < 20; k++) {
        EXPECT_GE(f.noise(), f.value() - base) << "after " << k << " steady samples";
        f.sample(base);
    }
    const double before = f.noise();
    f.reset_history();
    f.sample(3e-3);  // new position: the value restarts, the noise stays
    EXPECT_DOUBLE_EQ(f.value(), 3e-3);
    EXPECT_DOUBLE_EQ(f.noise(), before);
}
