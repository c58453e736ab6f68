// counters_test.cpp - llc_counters.h: every counter has a unique
// "llc_<component>_<counter>" name, a class and a description; bad indices
// and ranges are refused; the values read by index are llc_get_stats's.
#include "common/test_util.hpp"
#include "llc_counters.h"

#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace llctest;

TEST(Counters, EveryCounterIsNamedDescribedAndClassed)
{
    const int n = llc_counter_count();
    EXPECT_EQ(size_t(n), sizeof(llc_stats_t) / sizeof(uint64_t));
    EXPECT_GE(n, 50);
    std::set<std::string> names;
    for (int i = 0; i < n; i++) {
        llc_counter_info_t info{};
        ASSERT_EQ(llc_counter_info(i, &info), LLC_OK) << i;
        ASSERT_NE(info.name, nullptr);
        ASSERT_NE(info.component, nullptr);
        ASSERT_NE(info.help, nullptr);
        std::string prefix = std::string("llc_") + info.component + "_";
        EXPECT_EQ(std::string(info.name).rfind(prefix, 0), 0u) << info.name << " does not start with " << prefix;
        EXPECT_GT(std::strlen(info.name), prefix.size()) << info.name;
        EXPECT_GE(std::strlen(info.help), 10u) << info.name;
        EXPECT_TRUE(info.counter_class == LLC_COUNTER_COUNT || info.counter_class == LLC_COUNTER_LEVEL ||
                    info.counter_class == LLC_COUNTER_HIGH_WATER)
            << info.name;
        EXPECT_TRUE(names.insert(info.name).second) << "two counters named " << info.name;
    }
}

TEST(Counters, BadIndicesAndRangesAreRefused)
{
    const int n = llc_counter_count();
    llc_counter_info_t info{};
    EXPECT_EQ(llc_counter_info(-1, &info), LLC_ERR_INVALID);
    EXPECT_EQ(llc_counter_info(n, &info), LLC_ERR_INVALID);
    EXPECT_EQ(llc_counter_info(0, nullptr), LLC_ERR_INVALID);
    uint64_t v[4] = {7, 7, 7, 7};
    EXPECT_EQ(llc_counter_read(nullptr, 0, 1, v), LLC_ERR_INVALID);
    EXPECT_EQ(v[0], 7u);

    int nodes[1] = {0};
    llc_init_params_t p = solo_params(nodes, "counters-test");
    llc_context_t *ctx = nullptr;
    ASSERT_EQ(llc_init(&p, &ctx), LLC_OK) << llc_last_error(nullptr);
    EXPECT_EQ(llc_counter_read(ctx, n - 1, 2, v), LLC_ERR_INVALID);
    EXPECT_EQ(llc_counter_read(ctx, -1, 1, v), LLC_ERR_INVALID);
    EXPECT_EQ(llc_counter_read(ctx, 0, -1, v), LLC_ERR_INVALID);
    EXPECT_EQ(llc_counter_read(ctx, 0, 1, nullptr), LLC_ERR_INVALID);
    EXPECT_EQ(v[0], 7u);
    EXPECT_EQ(llc_counter_read(ctx, n, 0, v), LLC_OK); // an empty range at the end
    finalize_ok(ctx);
}

// Messages to ourselves move the counters; every value read by index is the
// member of llc_stats_t the table maps it to.
TEST(Counters, ValuesAreTheStatsMembers)
{
    int nodes[1] = {0};
    llc_init_params_t p = solo_params(nodes, "counters-test");
    llc_context_t *ctx = nullptr;
    ASSERT_EQ(llc_init(&p, &ctx), LLC_OK) << llc_last_error(nullptr);
    int got = 0;
    ASSERT_EQ(llc_am_register(ctx, 0,
                              [](llc_context_t *, void *arg, int, const void *, size_t, const void *, size_t) {
                                  ++*static_cast<int *>(arg);
                              },
                              &got),
              LLC_OK);
    char payload[100] = {};
    llc_iov_t iov{payload, sizeof(payload)};
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(llc_am_send(ctx, 0, 0, nullptr, 0, &iov, 1, nullptr, nullptr), LLC_OK) << llc_last_error(ctx);
    progress_until(ctx, [&] { return got == 3; });

    const int n = llc_counter_count();
    std::vector<uint64_t> values(size_t(n), ~uint64_t(0));
    ASSERT_EQ(llc_counter_read(ctx, 0, n, values.data()), LLC_OK);
    llc_stats_t st{};
    ASSERT_EQ(llc_get_stats(ctx, &st), LLC_OK);
    auto at = [&](const char *name) {
        for (int i = 0; i < n; i++) {
            llc_counter_info_t info{};
            llc_counter_info(i, &info);
            if (!std::strcmp(info.name, name))
                return values[size_t(i)];
        }
        ADD_FAILURE() << "no counter " << name;
        return ~uint64_t(0);
    };
    EXPECT_EQ(at("llc_core_msgs_sent"), 3u);
    EXPECT_EQ(at("llc_core_msgs_received"), 3u);
    EXPECT_EQ(at("llc_core_self_msgs"), 3u);
    EXPECT_EQ(at("llc_core_bytes_sent"), 300u);
    EXPECT_EQ(at("llc_core_bytes_received"), 300u);
    EXPECT_EQ(at("llc_core_msgs_sent"), st.msgs_sent);
    EXPECT_EQ(at("llc_tagged_eager_sends"), st.tag_eager_sends);
    EXPECT_EQ(at("llc_tagged_offers_sent"), st.tag_offers_sent);
    // one at a time, from the middle, gives the same values
    uint64_t one = 0;
    ASSERT_EQ(llc_counter_read(ctx, n / 2, 1, &one), LLC_OK);
    EXPECT_EQ(one, values[size_t(n / 2)]);
    finalize_ok(ctx);
}
