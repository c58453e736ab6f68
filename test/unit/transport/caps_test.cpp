// caps_test.cpp - each route of a Context gets the transport its job layout
// and LLC_NET ask for, and each transport declares the capabilities
// (transport/transport.hpp) that the policy above reads.
#include "common/test_util.hpp"

#include "core/context.hpp"
#include "core/errors.hpp"
#include "core/open_transports.hpp"
#include "transport/transport.hpp"

using namespace llctest;
using llc::CapOrdered;
using llc::CapReliable;
using llc::CapRemoteRead;
using llc::CapWakesOnArrival;

namespace {

struct NetCase {
    const char *net;
};

class TransportCapsByNet : public ::testing::TestWithParam<NetCase> {};

} // namespace

TEST_P(TransportCapsByNet, EachRouteHasItsTransport)
{
    const NetCase c = GetParam();
    JobOptions o = job({0, 0, 1});
    o.env = {{"LLC_NET", c.net}};
    LLC_EXPECT_JOB_OK(o, [c](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        llc::Context &context = llc::context_of(ctx);
        const llc::TransportCaps &self = context.transport_to(p.rank).caps();
        EXPECT_STREQ(self.name, "self");
        EXPECT_TRUE(self.has(CapOrdered | CapReliable | CapRemoteRead));
        EXPECT_FALSE(self.has(CapWakesOnArrival));
        const int remote = p.rank == 2 ? 0 : 2;
        const llc::TransportCaps &net = context.transport_to(remote).caps();
        EXPECT_STREQ(net.name, c.net);
        EXPECT_TRUE(net.has(CapReliable | CapOrdered));
        EXPECT_TRUE(net.has(CapWakesOnArrival)) << "the sockets are polled";
        EXPECT_EQ(net.inline_max, 0u);
        EXPECT_FALSE(net.has(CapRemoteRead)) << "no single-copy read across nodes";
        if (p.rank < 2) {
            const llc::TransportCaps &node = context.transport_to(1 - p.rank).caps();
            EXPECT_STREQ(node.name, "shm");
            EXPECT_TRUE(node.has(CapOrdered | CapReliable));
            EXPECT_FALSE(node.has(CapWakesOnArrival)) << "shm's idle wait sleeps for the time given";
            EXPECT_TRUE(node.has(CapRemoteRead)) << "CMA is on by default";
        }
        finalize_ok(ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(Net, TransportCapsByNet,
                         ::testing::Values(NetCase{"tcp"}, NetCase{"udp"}, NetCase{"hybrid"}),
                         [](const ::testing::TestParamInfo<NetCase> &i) { return std::string(i.param.net); });

// shm's inline bound is the largest payload it does not carry by CMA, and
// a message of that size indeed goes through the ring while one byte more
// is a single-copy message.
TEST(TransportCaps, ShmInlineBoundIsWhereCmaBegins)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_CMA_THRESHOLD", "1024"}, {"LLC_COPY_MAX", "16k"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        const llc::TransportCaps &shm = llc::context_of(ctx).transport_to(1 - p.rank).caps();
        ASSERT_STREQ(shm.name, "shm");
        EXPECT_EQ(shm.inline_max, 1023u);
        int got = 0;
        ASSERT_EQ(llc_am_register(ctx, 0, count_message, &got), LLC_OK);
        if (p.rank == 0) {
            std::vector<char> buf(shm.inline_max + 1, 'x');
            for (size_t len : {shm.inline_max, shm.inline_max + 1}) {
                int done = 0;
                llc_iov_t iov{buf.data(), len};
                int rc = llc_am_send(ctx, 1, 0, nullptr, 0, &iov, 1,
                                     [](void *arg, int status) {
                                         EXPECT_EQ(status, LLC_OK);
                                         ++*static_cast<int *>(arg);
                                     },
                                     &done);
                ASSERT_TRUE(rc == LLC_OK || rc == LLC_INPROGRESS) << llc_strerror(rc);
                while (rc == LLC_INPROGRESS && done == 0)
                    ASSERT_GE(llc_progress(ctx, nullptr), 0) << llc_last_error(ctx);
                llc_stats_t st;
                ASSERT_EQ(llc_get_stats(ctx, &st), LLC_OK);
                EXPECT_EQ(st.cma_msgs, len > shm.inline_max ? 1u : 0u) << len << " bytes";
            }
        } else {
            while (got < 2)
                ASSERT_GE(llc_progress(ctx, nullptr), 0) << llc_last_error(ctx);
        }
        finalize_ok(ctx);
    });
}

// Without CMA the ring carries everything up to LLC_COPY_MAX whole, and no
// receiver reads a sender's memory.
TEST(TransportCaps, ShmWithoutCmaInlinesUpToCopyMaxAndReadsNothing)
{
    JobOptions o = job({0, 0});
    o.env = {{"LLC_CMA", "0"}, {"LLC_COPY_MAX", "8k"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        const llc::TransportCaps &shm = llc::context_of(ctx).transport_to(1 - p.rank).caps();
        EXPECT_EQ(shm.inline_max, 8192u);
        EXPECT_FALSE(shm.has(CapRemoteRead));
        finalize_ok(ctx);
    });
}

// The named setters build what they say, and has() wants every flag asked for.
TEST(TransportCaps, NamedSettersAndHas)
{
    constexpr llc::TransportCaps c = llc::TransportCaps::named("x").with(CapOrdered).with(CapRemoteRead).inline_up_to(64);
    static_assert(c.has(CapOrdered | CapRemoteRead), "with() adds flags");
    EXPECT_STREQ(c.name, "x");
    EXPECT_EQ(c.inline_max, 64u);
    EXPECT_TRUE(c.has(CapOrdered));
    EXPECT_FALSE(c.has(CapReliable));
    EXPECT_FALSE(c.has(CapOrdered | CapReliable)) << "one of the two is missing";
    EXPECT_TRUE(c.has(0)) << "nothing asked for";
}

namespace {

// A transport that promises only what it is given.
class PromisingTransport final : public llc::Transport {
public:
    explicit PromisingTransport(llc::TransportCaps caps) : caps_(caps) {}
    const llc::TransportCaps &caps() const override { return caps_; }
    int send(int, std::unique_ptr<llc::OutgoingMessage>) override { return LLC_OK; }
    bool progress() override { return false; }
    bool has_pending_sends() const override { return false; }

private:
    llc::TransportCaps caps_;
};

std::string refusal(uint32_t flags)
{
    try {
        llc::require_in_order_delivery(PromisingTransport(llc::TransportCaps::named("lossy").with(flags)));
    } catch (const llc::Error &e) {
        EXPECT_EQ(e.status(), LLC_ERR_UNSUPPORTED);
        return e.what();
    }
    return "";
}

} // namespace

// The Context's per-peer sequence numbers need ordered, reliable delivery:
// a transport that does not promise both is refused, saying what it lacks.
TEST(TransportCaps, ContextRefusesATransportThatMayReorderOrLose)
{
    EXPECT_EQ(refusal(CapOrdered | CapReliable), "");
    EXPECT_EQ(refusal(CapOrdered | CapReliable | CapWakesOnArrival), "");
    EXPECT_NE(refusal(CapOrdered).find("lossy does not promise reliable delivery"), std::string::npos)
        << refusal(CapOrdered);
    EXPECT_NE(refusal(CapReliable | CapRemoteRead).find("does not promise ordered delivery"), std::string::npos)
        << refusal(CapReliable | CapRemoteRead);
    EXPECT_NE(refusal(0).find("ordered, reliable delivery"), std::string::npos) << refusal(0);
}
