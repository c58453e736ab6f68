// traffic.cpp - implementation of the checked message exchange.
#include "common/traffic.hpp"

#include "common/test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace llctest {

namespace {

constexpr unsigned kHandler = 3;

struct MsgHeader {
    uint32_t src;
    uint32_t index;
    uint64_t len;
    uint64_t seed;
};

uint64_t message_seed(int src, int dst, int i) { return mix64((uint64_t(src) << 40) ^ (uint64_t(dst) << 20) ^ uint64_t(i)); }

size_t message_size(uint64_t seed, int i, size_t max_size)
{
    if (i == 0)
        return 0;
    if (i == 1)
        return max_size;
    if (i == 2)
        return 1;
    uint64_t r = mix64(seed ^ 0x5555);
    unsigned cls = unsigned(r % 10);
    r >>= 8;
    size_t size;
    if (cls < 5) {
        size = r % 257;
    } else if (cls < 8) {
        size = r % (64 * 1024 + 1);
    } else {
        // log-uniform between 64 KiB and max_size
        double lo = 16, hi = 0;
        for (size_t m = max_size; m > 1; m >>= 1)
            hi += 1;
        double e = lo + double(r % 1000) / 1000.0 * (hi > lo ? hi - lo : 0);
        size = size_t(std::pow(2.0, e));
    }
    return std::min(size, max_size);
}

struct SendSlot {
    std::vector<char> buf;
    int rc = 0;
    int cb_calls = 0;
    int cb_status = 0;
    int *outstanding = nullptr;
};

void on_send_complete(void *arg, int status)
{
    auto *slot = static_cast<SendSlot *>(arg);
    slot->cb_calls++;
    slot->cb_status = status;
    (*slot->outstanding)--;
    // The library promised it is done with the buffer: prove it.
    std::fill(slot->buf.begin(), slot->buf.end(), char(0x5a));
}

struct Receiver {
    const TrafficPlan *plan;
    int me;
    std::vector<uint32_t> next_index;
    unsigned long long received = 0;
    unsigned long long expected = 0;
};

void on_message(llc_context_t *, void *arg, int src, const void *hdr, size_t hdr_len, const void *data, size_t len)
{
    auto *r = static_cast<Receiver *>(arg);
    ASSERT_EQ(hdr_len, sizeof(MsgHeader));
    ASSERT_EQ(reinterpret_cast<uintptr_t>(hdr) % 8, 0u) << "header not 8-byte aligned";
    MsgHeader h;
    std::memcpy(&h, hdr, sizeof(h));
    ASSERT_EQ(int(h.src), src);
    ASSERT_TRUE(r->plan->sends(src, r->me)) << "unexpected message from " << src;
    EXPECT_EQ(h.index, r->next_index[src]) << "out of order from rank " << src;
    r->next_index[src] = h.index + 1;
    uint64_t seed = message_seed(src, r->me, int(h.index));
    EXPECT_EQ(h.seed, seed);
    EXPECT_EQ(len, message_size(seed, int(h.index), r->plan->max_size));
    EXPECT_EQ(len, h.len);
    EXPECT_TRUE(check_pattern(data, len, seed)) << "corrupt payload from rank " << src << " index " << h.index
                                                << " len " << len;
    r->received++;
}

} // namespace

TrafficResult run_traffic(TestProcess &proc, const TrafficPlan &plan, llc_stats_t *stats_out)
{
    TrafficResult result;
    llc_context_t *ctx = init_or_fail(proc);
    if (!ctx)
        return result;
    Receiver recv{&plan, proc.rank, std::vector<uint32_t>(proc.size, 0), 0, 0};
    for (int s = 0; s < proc.size; s++)
        if (plan.sends(s, proc.rank))
            recv.expected += plan.msgs_per_pair;
    EXPECT_EQ(llc_am_register(ctx, kHandler, on_message, &recv), LLC_OK);

    std::vector<int> dests;
    for (int d = 0; d < proc.size; d++)
        if (plan.sends(proc.rank, d))
            dests.push_back(d);

    int outstanding = 0;
    std::vector<std::unique_ptr<SendSlot>> slots;
    double end = now_s() + plan.timeout_s;
    for (int i = 0; i < plan.msgs_per_pair && !::testing::Test::HasFailure(); i++) {
        for (int d : dests) {
            auto slot = std::make_unique<SendSlot>();
            slot->outstanding = &outstanding;
            uint64_t seed = message_seed(proc.rank, d, i);
            size_t len = message_size(seed, i, plan.max_size);
            slot->buf.resize(len);
            fill_pattern(slot->buf.data(), len, seed);
            MsgHeader h{uint32_t(proc.rank), uint32_t(i), len, seed};
            // Split the payload into iov_segments pieces (some possibly empty).
            std::vector<llc_iov_t> iov;
            size_t off = 0;
            for (int k = 0; k < plan.iov_segments; k++) {
                size_t piece = k + 1 == plan.iov_segments ? len - off : size_t(mix64(seed + k) % (len - off + 1));
                iov.push_back({slot->buf.data() + off, piece});
                off += piece;
            }
            slot->rc = llc_am_send(ctx, d, kHandler, &h, sizeof(h), iov.data(), int(iov.size()), on_send_complete,
                                   slot.get());
            if (slot->rc == LLC_INPROGRESS) {
                outstanding++;
                result.inprogress++;
            } else if (slot->rc == LLC_OK) {
                std::fill(slot->buf.begin(), slot->buf.end(), char(0xa5)); // buffer is ours again
            } else {
                ADD_FAILURE() << "llc_am_send to " << d << ": " << llc_strerror(slot->rc) << ": " << llc_last_error(ctx);
            }
            result.sent++;
            slots.push_back(std::move(slot));
            int rc = llc_progress(ctx, nullptr);
            EXPECT_EQ(rc, LLC_OK) << llc_last_error(ctx);
        }
        // Bound memory held by in-flight sends.
        progress_until(ctx, [&] { return outstanding < 8; }, std::max(1.0, end - now_s()));
    }
    progress_until(ctx, [&] { return recv.received >= recv.expected && outstanding == 0; },
                   std::max(1.0, end - now_s()));
    EXPECT_EQ(recv.received, recv.expected);
    for (const auto &slot : slots) {
        if (slot->rc == LLC_OK)
            EXPECT_EQ(slot->cb_calls, 0) << "callback called for a send that returned LLC_OK";
        else if (slot->rc == LLC_INPROGRESS) {
            EXPECT_EQ(slot->cb_calls, 1) << "callback not called exactly once";
            EXPECT_EQ(slot->cb_status, LLC_OK);
        }
    }
    llc_stats_t st;
    llc_get_stats(ctx, &st);
    EXPECT_EQ(st.msgs_sent, result.sent);
    EXPECT_EQ(st.msgs_received, recv.received);
    if (stats_out)
        *stats_out = st;
    result.received = recv.received;
    if (getenv("LLC_TEST_VERBOSE"))
        fprintf(stderr, "rank %d: sent %llu msgs %llu bytes, received %llu msgs %llu bytes, inprogress %llu, cma %llu, yields %llu sleeps %llu\n",
                proc.rank, (unsigned long long)st.msgs_sent, (unsigned long long)st.bytes_sent,
                (unsigned long long)st.msgs_received, (unsigned long long)st.bytes_received,
                result.inprogress, (unsigned long long)st.cma_msgs, (unsigned long long)st.idle_yields,
                (unsigned long long)st.idle_sleeps);
    finalize_ok(ctx);
    return result;
}

} // namespace llctest
