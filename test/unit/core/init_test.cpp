// init_test.cpp - llc_init argument checking and the informational calls.
#include "common/test_util.hpp"

#include <string>

using namespace llctest;

namespace {

void expect_invalid(const llc_init_params_t &p, const std::string &needle)
{
    llc_context_t *ctx = reinterpret_cast<llc_context_t *>(0x1);
    EXPECT_EQ(llc_init(&p, &ctx), LLC_ERR_INVALID);
    EXPECT_EQ(ctx, nullptr);
    EXPECT_NE(std::string(llc_last_error(nullptr)).find(needle), std::string::npos)
        << "message was: " << llc_last_error(nullptr);
}

} // namespace

TEST(Init, SingleProcessInitAndQueries)
{
    int nodes[1] = {0};
    llc_init_params_t p = solo_params(nodes);
    llc_context_t *ctx = nullptr;
    ASSERT_EQ(llc_init(&p, &ctx), LLC_OK) << llc_last_error(nullptr);
    EXPECT_EQ(llc_rank(ctx), 0);
    EXPECT_EQ(llc_size(ctx), 1);
    EXPECT_EQ(llc_node_of(ctx, 0), 0);
    EXPECT_EQ(llc_node_of(ctx, 1), -1);
    EXPECT_EQ(llc_node_of(ctx, -1), -1);
    EXPECT_TRUE(llc_caps(ctx) & LLC_CAP_AM);
    EXPECT_TRUE(llc_caps(ctx) & LLC_CAP_RMA) << "one-sided put/get (rma/)";
    llc_stats_t st;
    ASSERT_EQ(llc_get_stats(ctx, &st), LLC_OK);
    EXPECT_EQ(st.msgs_sent, 0u);
    EXPECT_EQ(llc_finalize(ctx), LLC_OK);
}

// A caller of LLC_API_VERSION 2 passed a struct without `endpoint`: whatever
// lies where it would be is not read, and the context is endpoint 0.
TEST(Init, CallerOfVersion2IsServedAsEndpointZero)
{
    int nodes[1] = {0};
    llc_init_params_t p = solo_params(nodes);
    p.api_version = 2;
    p.endpoint = 12345; // beyond a version-2 struct: garbage to this libllc
    llc_context_t *ctx = nullptr;
    ASSERT_EQ(llc_init(&p, &ctx), LLC_OK) << llc_last_error(nullptr);
    EXPECT_EQ(llc_rank(ctx), 0);
    EXPECT_EQ(llc_finalize(ctx), LLC_OK);
}

// Two endpoints of one process are two contexts with their own shared
// segments and bootstrap keys: both come up, a message to itself on each
// arrives on that one only.
TEST(Init, TwoEndpointsInOneProcess)
{
    int nodes[1] = {0};
    llc_context_t *ctx[2] = {nullptr, nullptr};
    int got[2] = {0, 0};
    for (int e = 0; e < 2; e++) {
        llc_init_params_t p = solo_params(nodes, "two-endpoints");
        p.endpoint = e;
        ASSERT_EQ(llc_init(&p, &ctx[e]), LLC_OK) << "endpoint " << e << ": " << llc_last_error(nullptr);
        ASSERT_EQ(llc_am_register(ctx[e], 3, count_message, &got[e]), LLC_OK);
    }
    ASSERT_EQ(llc_am_send(ctx[1], 0, 3, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
    ASSERT_TRUE(progress_until(ctx[1], [&] { return got[1] == 1; }));
    ASSERT_EQ(llc_progress(ctx[0], nullptr), LLC_OK);
    EXPECT_EQ(got[0], 0);
    EXPECT_EQ(llc_finalize(ctx[1]), LLC_OK);
    EXPECT_EQ(llc_finalize(ctx[0]), LLC_OK);
}

TEST(Init, RejectsBadParameters)
{
    int nodes[2] = {0, 0};
    llc_init_params_t p = solo_params(nodes);

    llc_init_params_t q = p;
    q.api_version = 99;
    expect_invalid(q, "api_version");

    q = p;
    q.rank = 1;
    expect_invalid(q, "valid ranks are 0..0");

    q = p;
    q.endpoint = LLC_MAX_ENDPOINTS;
    expect_invalid(q, "endpoint " + std::to_string(LLC_MAX_ENDPOINTS) + " is out of range: valid endpoints are 0..");

    q = p;
    q.endpoint = -1;
    expect_invalid(q, "endpoint -1 is out of range");

    q = p;
    q.size = 0;
    expect_invalid(q, "size");

    q = p;
    q.node_of_rank = nullptr;
    expect_invalid(q, "node_of_rank");

    int bad_nodes[1] = {-3};
    q = p;
    q.node_of_rank = bad_nodes;
    expect_invalid(q, "negative");

    q = p;
    q.job_id = nullptr;
    expect_invalid(q, "job_id");

    std::string long_id(65, 'x');
    q = p;
    q.job_id = long_id.c_str();
    expect_invalid(q, "64 bytes");

    q = p;
    q.boot.fence = nullptr;
    expect_invalid(q, "fence");

    llc_context_t *ctx = nullptr;
    EXPECT_EQ(llc_init(nullptr, &ctx), LLC_ERR_INVALID);
    EXPECT_EQ(llc_init(&p, nullptr), LLC_ERR_INVALID);
}

TEST(Init, RejectsBadEnvironmentValue)
{
    int nodes[1] = {0};
    llc_init_params_t p = solo_params(nodes);
    setenv("LLC_SPIN_COUNT", "lots", 1);
    llc_context_t *ctx = nullptr;
    EXPECT_EQ(llc_init(&p, &ctx), LLC_ERR_INVALID);
    unsetenv("LLC_SPIN_COUNT");
    EXPECT_NE(std::string(llc_last_error(nullptr)).find("LLC_SPIN_COUNT"), std::string::npos);
}

TEST(Init, BootstrapFenceFailureIsReported)
{
    int nodes[1] = {0};
    llc_init_params_t p = solo_params(nodes);
    p.boot.fence = [](void *) { return 1; };
    llc_context_t *ctx = nullptr;
    EXPECT_EQ(llc_init(&p, &ctx), LLC_ERR_BOOTSTRAP);
    EXPECT_EQ(ctx, nullptr);
}

TEST(Init, StrerrorNamesEveryStatus)
{
    for (int s : {LLC_OK, LLC_INPROGRESS, LLC_ERR_INVALID, LLC_ERR_NOMEM, LLC_ERR_SYSTEM, LLC_ERR_PEER,
                  LLC_ERR_BOOTSTRAP, LLC_ERR_UNSUPPORTED, LLC_ERR_TIMEOUT, LLC_ERR_STATE})
        EXPECT_STRNE(llc_strerror(s), "unknown status code") << s;
    EXPECT_STREQ(llc_strerror(12345), "unknown status code");
    EXPECT_NE(llc_last_error(nullptr), nullptr);
}

TEST(Init, NullContextIsRejected)
{
    EXPECT_EQ(llc_progress(nullptr, nullptr), LLC_ERR_INVALID);
    EXPECT_EQ(llc_am_send(nullptr, 0, 0, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_ERR_INVALID);
    EXPECT_EQ(llc_finalize(nullptr), LLC_ERR_INVALID);
    EXPECT_EQ(llc_get_stats(nullptr, nullptr), LLC_ERR_INVALID);
}
