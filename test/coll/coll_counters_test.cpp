// coll_counters_test.cpp - llc_coll_counter_*: every counter named
// llc_coll_* with a description; bad arguments refused; per-communicator
// values read from the state move with the calls made on it, process-wide
// ones with the calls of every state.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "alltoall_net.hpp"
#include "llc_coll.h"

namespace {

int index_of(const char *name)
{
    llc_coll_counter_info_t info{};
    for (int i = 0; llc_coll_counter_info(i, &info) == 0; i++)
        if (!std::strcmp(info.name, name))
            return i;
    ADD_FAILURE() << "no counter " << name;
    return -1;
}

// Environment variables set for the life of the object, then unset.
class ScopedSettings {
public:
    ScopedSettings(std::initializer_list<std::pair<const char *, const char *>> settings) : settings_(settings)
    {
        for (const auto &kv : settings_)
            setenv(kv.first, kv.second, 1);
    }
    ~ScopedSettings()
    {
        for (const auto &kv : settings_)
            unsetenv(kv.first);
    }

private:
    std::vector<std::pair<const char *, const char *>> settings_;
};

uint64_t value(const llc_coll_state_t *st, const char *name)
{
    uint64_t v = ~uint64_t(0);
    EXPECT_EQ(llc_coll_counter_read(st, index_of(name), &v), 0) << name;
    return v;
}

}  // namespace

TEST(CollCounters, EveryCounterIsNamedAndDescribed)
{
    const int n = llc_coll_counter_count();
    EXPECT_GE(n, 8);
    std::set<std::string> names;
    for (int i = 0; i < n; i++) {
        llc_coll_counter_info_t info{};
        ASSERT_EQ(llc_coll_counter_info(i, &info), 0);
        EXPECT_EQ(std::string(info.name).rfind("llc_coll_", 0), 0u) << info.name;
        EXPECT_GE(std::strlen(info.help), 10u) << info.name;
        EXPECT_TRUE(info.counter_class == LLC_COLL_COUNTER_COUNT || info.counter_class == LLC_COLL_COUNTER_LEVEL);
        EXPECT_TRUE(info.per_comm == 0 || info.per_comm == 1);
        EXPECT_TRUE(names.insert(info.name).second) << "two counters named " << info.name;
    }
    llc_coll_counter_info_t info{};
    EXPECT_EQ(llc_coll_counter_info(n, &info), LLC_COLL_ERR_ARG);
    EXPECT_EQ(llc_coll_counter_info(-1, &info), LLC_COLL_ERR_ARG);
    EXPECT_EQ(llc_coll_counter_info(0, nullptr), LLC_COLL_ERR_ARG);
    uint64_t v = 7;
    EXPECT_EQ(llc_coll_counter_read(nullptr, n, &v), LLC_COLL_ERR_ARG);
    EXPECT_EQ(llc_coll_counter_read(nullptr, 0, nullptr), LLC_COLL_ERR_ARG);
    EXPECT_EQ(v, 7u);
    // a communicator on which no collective ran yet
    EXPECT_EQ(value(nullptr, "llc_coll_alltoall_calls"), 0u);
    EXPECT_EQ(value(nullptr, "llc_coll_bcast_calls"), 0u);
}

// 4 ranks (threads), 3 Alltoalls of one size in auto mode without pruning
// or warm-up: each state counts its 3 calls and one size class, still
// learning (9 candidates, one trial each); the process-wide learning calls
// grow by the calls made while learning.
TEST(CollCounters, AlltoallCountsPerCommunicatorAndPerProcess)
{
    const ScopedSettings settings{
        {"LLC_ALLTOALL", "auto"}, {"LLC_ALLTOALL_WARMUP", "0"}, {"LLC_ALLTOALL_PRUNE", "0"}, {"LLC_ALLTOALL_TRIALS", "1"}};
    const int P = 4;
    const uint64_t learning_before = value(nullptr, "llc_coll_alltoall_learning_calls");
    a2a_test::Net net(P);
    uint64_t calls[P], classes[P], learning[P], bcasts[P];
    net.run([&](int r) {
        llc_coll_state_t *st = llc_coll_state_create(r, P);
        const llc_coll_p2p_t *p = net.p2p(r);
        std::string send(size_t(P) * 64, char('a' + r)), recv(size_t(P) * 64, 0);
        for (int k = 0; k < 3; k++)
            EXPECT_EQ(llc_coll_alltoall(st, p, send.data(), &recv[0], 64), 0);
        calls[r] = value(st, "llc_coll_alltoall_calls");
        classes[r] = value(st, "llc_coll_alltoall_size_classes");
        learning[r] = value(st, "llc_coll_alltoall_size_classes_learning");
        bcasts[r] = value(st, "llc_coll_bcast_calls");
        llc_coll_state_free(st);
    });
    for (int r = 0; r < P; r++) {
        EXPECT_EQ(calls[r], 3u) << "rank " << r;
        EXPECT_EQ(classes[r], 1u) << "rank " << r;
        EXPECT_EQ(learning[r], 1u) << "rank " << r;
        EXPECT_EQ(bcasts[r], 0u) << "rank " << r;
    }
    EXPECT_GE(value(nullptr, "llc_coll_alltoall_learning_calls") - learning_before, uint64_t(3 * P));
}
