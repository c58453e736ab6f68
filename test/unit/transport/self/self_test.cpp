// self_test.cpp - messages to oneself are queued and delivered by the next
// llc_progress, never re-entrantly inside llc_am_send.
#include "common/test_util.hpp"

using namespace llctest;

namespace {

struct SelfState {
    int delivered = 0;
    bool resend_from_handler = false;
    std::vector<size_t> lengths;
};

void self_handler(llc_context_t *ctx, void *arg, int src, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    auto *s = static_cast<SelfState *>(arg);
    EXPECT_EQ(src, llc_rank(ctx));
    EXPECT_EQ(hdr_len, 8u);
    uint64_t seed;
    std::memcpy(&seed, hdr, 8);
    EXPECT_TRUE(check_pattern(data, len, seed));
    s->delivered++;
    s->lengths.push_back(len);
    if (s->resend_from_handler) {
        s->resend_from_handler = false;
        uint64_t h = 7;
        EXPECT_EQ(llc_am_send(ctx, src, 0, &h, 8, nullptr, 0, nullptr, nullptr), LLC_OK);
        // A nested llc_progress is refused.
        EXPECT_EQ(llc_progress(ctx, nullptr), LLC_ERR_STATE);
    }
}

void count_cb(void *arg, int status)
{
    EXPECT_EQ(status, LLC_OK);
    ++*static_cast<int *>(arg);
}

} // namespace

TEST(Self, DeliveredInNextProgressNotInsideSend)
{
    LLC_EXPECT_JOB_OK(job({0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        SelfState s;
        ASSERT_EQ(llc_am_register(ctx, 0, self_handler, &s), LLC_OK);

        // Small: copied, LLC_OK, no callback.
        std::vector<char> small(100);
        uint64_t seed = 1;
        fill_pattern(small.data(), small.size(), seed);
        llc_iov_t iov{small.data(), small.size()};
        int cb_calls = 0;
        ASSERT_EQ(llc_am_send(ctx, 0, 0, &seed, 8, &iov, 1, count_cb, &cb_calls), LLC_OK);
        std::fill(small.begin(), small.end(), 0); // buffer is free after LLC_OK
        EXPECT_EQ(s.delivered, 0) << "delivered inside llc_am_send";

        int progressed = 0;
        ASSERT_EQ(llc_progress(ctx, &progressed), LLC_OK);
        EXPECT_EQ(progressed, 1);
        EXPECT_EQ(s.delivered, 1);
        EXPECT_EQ(cb_calls, 0);

        // Large with three segments: referenced, LLC_INPROGRESS, callback once after delivery.
        std::vector<char> big(3 << 20);
        seed = 2;
        fill_pattern(big.data(), big.size(), seed);
        llc_iov_t segs[3] = {{big.data(), 1000}, {big.data() + 1000, 0}, {big.data() + 1000, big.size() - 1000}};
        ASSERT_EQ(llc_am_send(ctx, 0, 0, &seed, 8, segs, 3, count_cb, &cb_calls), LLC_INPROGRESS);
        EXPECT_EQ(cb_calls, 0);
        ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
        EXPECT_EQ(s.delivered, 2);
        EXPECT_EQ(cb_calls, 1);
        EXPECT_EQ(s.lengths.back(), big.size());

        // A handler sending to itself: delivered by the following progress only.
        s.resend_from_handler = true;
        seed = 3;
        ASSERT_EQ(llc_am_send(ctx, 0, 0, &seed, 8, nullptr, 0, nullptr, nullptr), LLC_OK);
        ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
        EXPECT_EQ(s.delivered, 3);
        ASSERT_EQ(llc_progress(ctx, nullptr), LLC_OK);
        EXPECT_EQ(s.delivered, 4);

        llc_stats_t st;
        llc_get_stats(ctx, &st);
        EXPECT_EQ(st.self_msgs, 4u);
        EXPECT_EQ(st.msgs_received, 4u);
        EXPECT_EQ(cb_calls, 1);
        finalize_ok(ctx);
    });
}
