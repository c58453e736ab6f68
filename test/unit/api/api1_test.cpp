// api1_test.cpp - the ABI across LLC_API_VERSION: a client built against the
// version-1 header is refused by llc_init with a clear message, and a client
// built against an older version-2 header (a shorter llc_stats_t) gets its
// own prefix of the counters and nothing written beyond it.
#include "common/test_util.hpp"

#include "api/api1_client.h"

#include <cstddef>
#include <cstring>

using namespace llctest;

TEST(Api1, ClientOfTheVersion1HeaderIsRefusedByLlcInit)
{
    int used = 0;
    char message[512] = "";
    int rc = api1_client_init(&used, message, sizeof(message));
    EXPECT_EQ(used, 1) << "api1_client.c was not built against the version-1 header";
    EXPECT_NE(LLC_API_VERSION, 1);
    EXPECT_EQ(rc, LLC_ERR_INVALID);
    EXPECT_TRUE(contains(message, "api_version is 1 but this libllc implements " + std::to_string(LLC_API_VERSION)))
        << message;
}

TEST(Api1, OlderStatsStructGetsItsPrefixOnly)
{
    LLC_EXPECT_JOB_OK(job({0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        // some counters that are not zero: a message to itself
        int got = 0;
        ASSERT_EQ(llc_am_register(ctx, 0, count_message, &got), LLC_OK);
        ASSERT_EQ(llc_am_send(ctx, 0, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
        while (got == 0)
            ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK) << llc_last_error(ctx);
        llc_stats_t full;
        ASSERT_EQ(llc_get_stats(ctx, &full), LLC_OK);
        ASSERT_GT(full.msgs_sent, 0u);
        // the struct as a header of version 2 declared it before the last counter was appended
        const size_t older = offsetof(llc_stats_t, tag_data_in_place);
        unsigned char buf[sizeof(llc_stats_t)];
        std::memset(buf, 0xab, sizeof(buf));
        ASSERT_EQ(llc_get_stats_sized(ctx, reinterpret_cast<llc_stats_t *>(buf), older), LLC_OK);
        EXPECT_EQ(std::memcmp(buf, &full, older), 0) << "the prefix differs from the counters";
        for (size_t i = older; i < sizeof(buf); i++)
            ASSERT_EQ(buf[i], 0xab) << "byte " << i << " beyond the caller's struct was written";
        finalize_ok(ctx);
    });
}
