// numbered_stream.cpp - see numbered_stream.hpp.
#include "numbered_stream.hpp"

#include "test_util.hpp"

#include <cstring>

namespace llctest {

namespace {

struct StreamHeader {
    uint32_t src;
    uint32_t index; // per (src, dst) pair, from 0
    uint64_t len;
};

uint64_t stream_seed(int src, int dst, uint32_t index)
{
    return mix64((uint64_t(src) << 44) ^ (uint64_t(dst) << 24) ^ index ^ 0x5eedull);
}

} // namespace

size_t stream_message_size(uint32_t index)
{
    return index % 16 == 3 ? 20000 + size_t(mix64(index) % 50000) : size_t(mix64(index) % 256);
}

void on_stream_message(llc_context_t *, void *checker, int src, const void *hdr, size_t hdr_len, const void *data,
                       size_t len)
{
    auto *c = static_cast<StreamChecker *>(checker);
    StreamHeader h{};
    if (hdr_len == sizeof(h))
        std::memcpy(&h, hdr, sizeof(h));
    bool ok = hdr_len == sizeof(h) && int(h.src) == src && h.index == c->next[src] && len == h.len &&
              len == stream_message_size(h.index) && check_pattern(data, len, stream_seed(src, c->me, h.index));
    if (!ok) {
        c->bad++;
        ADD_FAILURE() << "rank " << c->me << ": from " << src << " got index " << h.index << " (" << len
                      << " bytes), expected index " << c->next[src];
    }
    c->next[src] = h.index + 1;
}

void Streamer::send(int dest)
{
    uint32_t index = sent[dest]++;
    size_t len = stream_message_size(index);
    inflight.emplace_back();
    Buffer &b = inflight.back();
    b.bytes.resize(len);
    fill_pattern(b.bytes.data(), len, stream_seed(me, dest, index));
    StreamHeader h{uint32_t(me), index, len};
    llc_iov_t iov{b.bytes.data(), len};
    int rc = llc_am_send(ctx, dest, kStreamHandler, &h, sizeof(h), &iov, 1,
                         [](void *arg, int status) {
                             EXPECT_EQ(status, LLC_OK);
                             static_cast<Buffer *>(arg)->done = true;
                         },
                         &b);
    ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_strerror(rc) << ": " << llc_last_error(ctx);
    if (rc == LLC_OK)
        b.done = true;
}

void Streamer::reap()
{
    while (!inflight.empty() && inflight.front().done)
        inflight.pop_front();
}

void check_counts_after_finalize(TestProcess &p, const Streamer &s, const StreamChecker &c)
{
    ASSERT_EQ(TestProcess::put(&p, "sent", s.sent.data(), s.sent.size() * sizeof(uint32_t)), 0);
    ASSERT_EQ(TestProcess::fence(&p), 0);
    for (int src = 0; src < p.size; src++) {
        if (src == p.rank)
            continue;
        std::vector<uint32_t> theirs(size_t(p.size), 0);
        size_t len = theirs.size() * sizeof(uint32_t);
        ASSERT_EQ(TestProcess::get(&p, src, "sent", theirs.data(), &len), 0);
        EXPECT_EQ(c.next[src], theirs[p.rank]) << "rank " << p.rank << " from " << src;
    }
    EXPECT_EQ(c.bad, 0u);
}

StreamRun::StreamRun(TestProcess &proc)
    : p(proc), ctx(init_or_fail(proc)), c(proc.rank, proc.size), s(ctx, proc.rank, proc.size)
{
    EXPECT_NE(ctx, nullptr);
    if (!ctx)
        return;
    int rc = llc_am_register(ctx, kStreamHandler, on_stream_message, &c);
    EXPECT_EQ(rc, LLC_OK);
    started_ = rc == LLC_OK;
}

bool StreamRun::progress()
{
    int rc = llc_progress(ctx, nullptr);
    EXPECT_EQ(rc, LLC_OK) << llc_last_error(ctx);
    s.reap();
    return rc == LLC_OK;
}

bool StreamRun::drain(double timeout_s)
{
    return progress_until(ctx, [&] { s.reap(); return s.inflight.empty(); }, timeout_s);
}

void StreamRun::finish()
{
    finalize_ok(ctx);
    check_counts_after_finalize(p, s, c);
}

} // namespace llctest
