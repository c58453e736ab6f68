// numbered_stream.cpp - see numbered_stream.hpp.
#include "common/numbered_stream.hpp"

#include "common/checked_messages.hpp"
#include "common/test_util.hpp"

#include <unistd.h>

namespace llctest {

namespace {

uint64_t stream_seed(uint32_t src, uint32_t dst, uint32_t index)
{
    return mix64((uint64_t(src) << 44) ^ (uint64_t(dst) << 24) ^ index ^ 0x5eedull);
}

constexpr MessageShape kStreamShape{
    kStreamHandler, [](uint32_t, uint32_t index) { return stream_message_size(index); }, stream_seed};

} // namespace

const MessageShape &stream_shape() { return kStreamShape; }

size_t stream_message_size(uint32_t index)
{
    return index % 16 == 3 ? 20000 + size_t(mix64(index) % 50000) : size_t(mix64(index) % 256);
}

int rotating_destination(int rank, int size, double elapsed_s, double period_s, unsigned k, unsigned other_every)
{
    int phase = int(elapsed_s / period_s);
    int favourite = (rank + 1 + phase % (size - 1)) % size;
    int other = (rank + 1 + int(k % unsigned(size - 1))) % size;
    return k % other_every != 0 ? favourite : other;
}

JobOptions hybrid_receiver_job(std::vector<int> nodes, unsigned timeout_s, const char *period_ms,
                               const char *promote_msgs, std::vector<std::pair<std::string, std::string>> more)
{
    JobOptions o = job(std::move(nodes), timeout_s);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},
             {"LLC_NET", "hybrid"},
             {"LLC_HYBRID_DRIVER", "receiver"},
             {"LLC_HYBRID_PERIOD_MS", period_ms},
             {"LLC_HYBRID_PROMOTE_MSGS", promote_msgs}};
    o.env.insert(o.env.end(), more.begin(), more.end());
    return o;
}

void on_stream_message(llc_context_t *, void *checker, int src, const void *hdr, size_t hdr_len, const void *data,
                       size_t len)
{
    auto *c = static_cast<StreamChecker *>(checker);
    CheckedArrival a = check_message(*c->shape, c->me, src, c->next[size_t(src)], hdr, hdr_len, data, len);
    if (a.counted)
        c->received++;
    if (!a.problem.empty()) {
        c->bad++;
        ADD_FAILURE() << "rank " << c->me << ": " << a.problem;
    }
}

void Streamer::send(int dest, size_t len)
{
    inflight.emplace_back();
    Buffer &b = inflight.back();
    CheckedHeader h = make_message(*shape, me, dest, sent[size_t(dest)]++, 0, b.bytes, len);
    llc_iov_t iov{b.bytes.data(), b.bytes.size()};
    int rc = llc_am_send(ctx, dest, shape->handler, &h, sizeof(h), &iov, 1,
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

StreamRun::StreamRun(TestProcess &proc, const MessageShape &shape)
    : p(proc), ctx(init_or_fail(proc)), c(proc.rank, proc.size, shape), s(ctx, proc.rank, proc.size, shape)
{
    EXPECT_NE(ctx, nullptr);
    if (!ctx)
        return;
    int rc = llc_am_register(ctx, shape.handler, on_stream_message, &c);
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

bool StreamRun::fence()
{
    bool ok = true;
    int rc = TestProcess::fence_polling(&p, [&] {
        if (ok)
            ok = progress();
        else
            usleep(50); // after a failed progress call, wait as the plain barrier does
    });
    EXPECT_EQ(rc, 0) << "the job's barrier timed out";
    return ok && rc == 0;
}

void StreamRun::finish()
{
    finalize_ok(ctx);
    check_counts_after_finalize(p, s, c);
}

} // namespace llctest
