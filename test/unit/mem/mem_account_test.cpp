// mem_account_test.cpp - each transport reports its own memory through
// Transport::account, and the figures move when it allocates.
#include "core/context.hpp"
#include "mem/mem_accounting.hpp"
#include "transport/transport.hpp"

#include "common/test_util.hpp"

using namespace llctest;
using llc::MemComponent;

namespace {

llc::MemRegistry account_of(llc::Transport &t)
{
    llc::MemRegistry r;
    t.account(r);
    return r;
}

} // namespace

// A message to itself waits in the self transport's queue until the next
// progress: its record is there, then gone; nothing of the context's own is
// in the transport's figures.
TEST(MemAccount, SelfTransportCountsTheRecordItQueues)
{
    LLC_EXPECT_JOB_OK(job({0}), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        int got = 0;
        ASSERT_EQ(llc_am_register(ctx, 0, count_message, &got), LLC_OK);
        llc::Transport &self = llc::context_of(ctx).transport_to(p.rank);
        const llc::StructSizes s = llc::MemWalk::struct_sizes();

        const llc::MemRegistry before = account_of(self);
        EXPECT_EQ(before.get(MemComponent::SelfTransport).items, 1u);
        EXPECT_GE(before.get(MemComponent::SelfTransport).bytes, s.self_transport);
        EXPECT_EQ(before.get(MemComponent::SendQueues).items, 0u);
        EXPECT_EQ(before.get(MemComponent::HandlerTable).bytes, 0u) << "the context's, not the transport's";

        char payload[64] = {};
        llc_iov_t iov{payload, sizeof(payload)};
        ASSERT_EQ(llc_am_send(ctx, p.rank, 0, nullptr, 0, &iov, 1, nullptr, nullptr), LLC_OK) << llc_last_error(ctx);
        const llc::MemRegistry queued = account_of(self);
        EXPECT_EQ(got, 0) << "delivered by the next progress, not inside the send";
        EXPECT_EQ(queued.get(MemComponent::SendQueues).items, 1u);
        EXPECT_GE(queued.get(MemComponent::SendQueues).bytes, s.outgoing_message);

        ASSERT_TRUE(progress_until(ctx, [&] { return got == 1; }));
        const llc::MemRegistry after = account_of(self);
        EXPECT_EQ(after.get(MemComponent::SendQueues).items, 0u);
        EXPECT_EQ(after.get(MemComponent::SendQueues).bytes, 0u);
        finalize_ok(ctx);
    });
}

// The network transport's figures (the router with tcp) grow by a
// connection once a peer has been talked to.
TEST(MemAccount, NetworkTransportCountsTheConnectionItOpens)
{
    JobOptions o = job({0, 1});
    o.env = {{"LLC_NET", "tcp"}, {"LLC_TCP_ADDR", "127.0.0.1"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        int got = 0;
        ASSERT_EQ(llc_am_register(ctx, 0, count_message, &got), LLC_OK);
        const int peer = 1 - p.rank;
        llc::Transport &net = llc::context_of(ctx).transport_to(peer);
        const llc::StructSizes s = llc::MemWalk::struct_sizes();

        const llc::MemRegistry before = account_of(net);
        ASSERT_EQ(TestProcess::fence(&p), 0); // nobody sends before both have measured
        EXPECT_EQ(before.get(MemComponent::TcpConnState).items, 0u);
        EXPECT_EQ(before.get(MemComponent::TcpRankTable).items, 0u);
        EXPECT_GE(before.get(MemComponent::Context).bytes, s.tcp_transport + s.net_router);

        char payload[100] = {};
        llc_iov_t iov{payload, sizeof(payload)};
        ASSERT_EQ(llc_am_send(ctx, peer, 0, nullptr, 0, &iov, 1, nullptr, nullptr), LLC_OK) << llc_last_error(ctx);
        ASSERT_TRUE(progress_until(ctx, [&] { return got == 1; }));
        const llc::MemRegistry after = account_of(net);
        EXPECT_GE(after.get(MemComponent::TcpConnState).items, 1u);
        EXPECT_GE(after.get(MemComponent::TcpConnState).bytes - before.get(MemComponent::TcpConnState).bytes,
                  s.tcp_out_conn);
        EXPECT_EQ(after.get(MemComponent::TcpRankTable).items, 1u) << "one destination sent to";
        EXPECT_EQ(after.get(MemComponent::SelfTransport).bytes, 0u) << "the self transport's, not this one's";
        EXPECT_EQ(after.get(MemComponent::ShmSegment).bytes, 0u);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(ctx);
    });
}
