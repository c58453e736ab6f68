// checked_messages.cpp - see checked_messages.hpp.
#include "common/checked_messages.hpp"

#include "common/test_util.hpp"

#include <cstring>

namespace llctest {

uint64_t pair_seed(uint32_t src, uint32_t dst, uint32_t seq)
{
    return (uint64_t(src) << 44) ^ (uint64_t(dst) << 24) ^ (uint64_t(seq) * 0x9e37u);
}

size_t mostly_small_size(uint32_t src, uint32_t seq)
{
    uint64_t h = mix64((uint64_t(src) << 32) | seq);
    if (seq % 7 == 5)
        return 70000 + size_t(h % 200000);
    return size_t(h % 500);
}

CheckedHeader make_message(const MessageShape &shape, int me, int dst, uint32_t seq, uint32_t flag,
                           std::vector<char> &payload, size_t len)
{
    CheckedHeader h{uint32_t(me), uint32_t(dst), seq, 0, flag, 0};
    h.len = uint32_t(shape.size ? shape.size(h.src, h.seq) : len);
    payload.resize(h.len);
    fill_pattern(payload.data(), payload.size(), shape.seed(h.src, h.dst, h.seq));
    return h;
}

CheckedArrival check_message(const MessageShape &shape, int me, int src, uint32_t &expect, const void *hdr,
                             size_t hdr_len, const void *data, size_t len)
{
    CheckedArrival a;
    CheckedHeader h{};
    if (hdr_len != sizeof(h)) {
        a.problem = "header of " + std::to_string(hdr_len) + " bytes";
        return a;
    }
    std::memcpy(&h, hdr, sizeof(h));
    if (int(h.src) != src || int(h.dst) != me) {
        a.problem = "message " + std::to_string(h.src) + "->" + std::to_string(h.dst) + " arrived at rank " +
                    std::to_string(me) + " from rank " + std::to_string(src);
        return a;
    }
    if (h.seq != expect) {
        a.problem = "from rank " + std::to_string(src) + ": message " + std::to_string(h.seq) + " where " +
                    std::to_string(expect) + " was due (lost, duplicated or reordered)";
        expect = h.seq + 1;
        return a;
    }
    expect++;
    a.counted = true;
    a.flag = h.flag;
    if (len != h.len || (shape.size && len != shape.size(h.src, h.seq)) || !check_pattern(data, len, shape.seed(h.src, h.dst, h.seq)))
        a.problem = "from rank " + std::to_string(src) + ": message " + std::to_string(h.seq) + " has wrong bytes";
    return a;
}

int send_one(llc_context_t *ctx, Outbox &out, int me, int dst, uint32_t flag)
{
    out.payloads.emplace_back();
    std::vector<char> &buf = out.payloads.back();
    CheckedHeader h = make_message(*out.shape, me, dst, out.next_seq[size_t(dst)]++, flag, buf);
    llc_iov_t iov{buf.data(), buf.size()};
    int rc = llc_am_send(ctx, dst, out.shape->handler, &h, sizeof(h), &iov, 1,
                         [](void *arg, int status) {
                             Outbox &o = *static_cast<Outbox *>(arg);
                             o.callbacks++;
                             if (status != LLC_OK)
                                 o.callback_errors++;
                         },
                         &out);
    if (rc == LLC_INPROGRESS)
        out.callbacks_owed++;
    return rc;
}

namespace {
// The inbox's handler (arg: the Inbox).
void on_checked_message(llc_context_t *, void *arg, int src, const void *hdr, size_t hdr_len, const void *data,
                        size_t len)
{
    Inbox &in = *static_cast<Inbox *>(arg);
    CheckedArrival a = check_message(*in.shape, in.me, src, in.next_seq[size_t(src)], hdr, hdr_len, data, len);
    if (!a.problem.empty())
        in.problem(a.problem);
    if (!a.counted)
        return;
    in.last_flag[size_t(src)] = a.flag;
    in.received++;
    if (a.flag == kPing && in.replies) {
        int rc = send_one(in.ctx, *in.replies, in.me, src);
        if (rc != LLC_OK && rc != LLC_INPROGRESS)
            in.problem("the answer from the handler failed: " + std::string(llc_last_error(in.ctx)));
    }
}

} // namespace

CheckedRun::CheckedRun(TestProcess &p, const MessageShape &shape)
    : ctx(init_or_fail(p)), in(shape, p.rank, p.size), out(shape, p.size)
{
    EXPECT_NE(ctx, nullptr);
    if (!ctx)
        return;
    in.ctx = ctx;
    int rc = llc_am_register(ctx, shape.handler, on_checked_message, &in);
    EXPECT_EQ(rc, LLC_OK);
    started_ = rc == LLC_OK;
}

} // namespace llctest
