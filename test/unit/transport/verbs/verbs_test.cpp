// verbs_test.cpp - what of LLC_NET=verbs runs without RDMA hardware: device
// discovery (none found here, repeatedly, without leaks), the fallback
// decision for every LLC_VERBS_FALLBACK value (as a function, and in forked
// two-process jobs whose traffic must go over the fallback transport), and
// the choice of a usable device (with a made-up device): the verbs transport
// with the data path built, a refusal without; the fallback after a failure
// to start.
#include "core/config.hpp"
#include "core/errors.hpp"
#include "core/net_selection.hpp"
#include "common/test_util.hpp"
#include "transport/verbs/verbs_devices.hpp"

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <functional>
#include <string>

using namespace llctest;

namespace {

bool kernel_has_rdma_class() { return access("/sys/class/infiniband", F_OK) == 0; }

int open_descriptors()
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    while (dirent *e = readdir(d))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

// Sets (or unsets, for nullptr) environment variables for a scope.
class ScopedEnv {
public:
    ScopedEnv(std::initializer_list<std::pair<const char *, const char *>> vars)
    {
        for (const auto &v : vars) {
            const char *old = std::getenv(v.first);
            saved_.push_back({v.first, old ? std::string(old) : std::string(), old != nullptr});
            if (v.second)
                setenv(v.first, v.second, 1);
            else
                unsetenv(v.first);
        }
    }
    ~ScopedEnv()
    {
        for (const Saved &s : saved_) {
            if (s.was_set)
                setenv(s.name.c_str(), s.value.c_str(), 1);
            else
                unsetenv(s.name.c_str());
        }
    }

private:
    struct Saved {
        std::string name, value;
        bool was_set;
    };
    std::vector<Saved> saved_;
};

// What fn writes to file descriptor 2.
std::string capture_stderr(const std::function<void()> &fn)
{
    std::fflush(stderr);
    char path[] = "/tmp/llc_verbs_test_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        ADD_FAILURE() << "mkstemp failed";
        fn();
        return "";
    }
    unlink(path);
    int saved = dup(2);
    dup2(fd, 2);
    fn();
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::string text;
    char buf[4096];
    lseek(fd, 0, SEEK_SET);
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0)
        text.append(buf, size_t(n));
    close(fd);
    return text;
}

llc::VerbsDiscovery no_devices(const char *reason)
{
    llc::VerbsDiscovery d;
    d.built_with_verbs = true;
    d.list_failed = true;
    d.list_errno = ENOSYS;
    d.no_device_reason = reason;
    return d;
}

llc::VerbsDiscovery one_device(bool active)
{
    llc::VerbsDiscovery d;
    d.built_with_verbs = true;
    llc::VerbsDevice dev;
    dev.name = "mlx5_0";
    dev.node_guid = 0x0002c90300abcdefull;
    llc::VerbsPort port;
    port.number = 1;
    port.state = active ? "ACTIVE" : "DOWN";
    port.active = active;
    port.link_layer = "InfiniBand";
    port.active_mtu_bytes = 4096;
    port.lid = 3;
    dev.ports.push_back(port);
    d.devices.push_back(dev);
    return d;
}

llc::Config verbs_config(llc::Config::VerbsFallback fallback)
{
    llc::Config c;
    c.net_verbs = true;
    c.verbs_fallback = fallback;
    return c;
}

} // namespace

// ---------------------------------------------------------------- discovery

TEST(VerbsDiscovery, FindsNoDeviceHereAndSaysWhy)
{
    llc::VerbsDiscovery found = llc::discover_verbs_devices();
#ifdef LLC_HAVE_VERBS
    EXPECT_TRUE(found.built_with_verbs);
#else
    EXPECT_FALSE(found.built_with_verbs);
    EXPECT_EQ(found.no_device_reason, "built without libibverbs");
#endif
#ifdef LLC_HAVE_MLX5DV
    EXPECT_TRUE(found.built_with_mlx5dv);
#else
    EXPECT_FALSE(found.built_with_mlx5dv);
#endif
    std::fprintf(stderr, "verbs discovery: %s\n", found.devices_text().c_str());
    if (kernel_has_rdma_class())
        GTEST_SKIP() << "this machine has /sys/class/infiniband: devices " << found.devices_text();
    EXPECT_TRUE(found.devices.empty());
    EXPECT_FALSE(found.usable());
    EXPECT_EQ(found.first_usable(), nullptr);
    EXPECT_FALSE(found.no_device_reason.empty());
    EXPECT_EQ(found.unusable_reason(), found.no_device_reason);
    EXPECT_TRUE(contains(found.devices_text(), "none ("));
    if (found.built_with_verbs) {
        // NULL + errno (ENOSYS without kernel support) or an empty list: both are reported.
        if (found.list_failed) {
            EXPECT_NE(found.list_errno, 0);
            EXPECT_TRUE(contains(found.no_device_reason, "ibv_get_device_list failed")) << found.no_device_reason;
        } else {
            EXPECT_TRUE(contains(found.no_device_reason, "empty list")) << found.no_device_reason;
        }
    }
}

// Every handle is released: no descriptor and no heap growth over many runs.
TEST(VerbsDiscovery, RepeatedDiscoveryLeaksNothing)
{
    for (int i = 0; i < 50; i++) // warm-up: libibverbs' one-time initialisation
        llc::discover_verbs_devices();
    const int fds = open_descriptors();
    const size_t heap = mallinfo2().uordblks;
    const int runs = 3000;
    for (int i = 0; i < runs; i++) {
        llc::VerbsDiscovery found = llc::discover_verbs_devices();
        if (!kernel_has_rdma_class()) {
            ASSERT_TRUE(found.devices.empty()) << "run " << i;
        }
    }
    EXPECT_EQ(open_descriptors(), fds);
    const size_t after = mallinfo2().uordblks;
    // A leak of even one small block per run would show as >= `runs` x 16 bytes.
    EXPECT_LT(after > heap ? after - heap : 0, size_t(runs) * 8) << "heap in use " << heap << " -> " << after;
}

TEST(VerbsDiscovery, ReasonTextsForEveryListOutcome)
{
    std::string nosys = llc::device_list_failure_text(true, 0, ENOSYS);
    EXPECT_TRUE(contains(nosys, "ibv_get_device_list failed")) << nosys;
    EXPECT_TRUE(contains(nosys, "ENOSYS")) << nosys;
    EXPECT_TRUE(contains(nosys, "no RDMA support")) << nosys;
    std::string perm = llc::device_list_failure_text(true, 0, EPERM);
    EXPECT_TRUE(contains(perm, "EPERM")) << perm;
    EXPECT_FALSE(contains(perm, "kernel")) << perm;
    EXPECT_TRUE(contains(llc::device_list_failure_text(false, 0, 0), "empty list"));
    EXPECT_EQ(llc::device_list_failure_text(false, 2, 0), "");
    EXPECT_EQ(llc::guid_text(0x0002c90300abcdefull), "0002:c903:00ab:cdef");

    llc::VerbsDiscovery down = one_device(false);
    EXPECT_FALSE(down.usable());
    EXPECT_EQ(down.unusable_reason(), "mlx5_0: no ACTIVE port (port 1 DOWN)");
    EXPECT_EQ(down.devices[0].summary(),
              "mlx5_0 (guid 0002:c903:00ab:cdef; port 1 DOWN InfiniBand mtu 4096 lid 3)");
    llc::VerbsDiscovery up = one_device(true);
    EXPECT_TRUE(up.usable());
    EXPECT_EQ(up.unusable_reason(), "");
}

// ---------------------------------------------------------------- the decision

TEST(VerbsSelection, WithoutLlcNetVerbsNothingChanges)
{
    llc::Config c;
    c.net = llc::Config::Net::Udp;
    llc::NetChoice choice = llc::choose_net(c, one_device(true));
    EXPECT_EQ(choice.net, llc::Config::Net::Udp);
    EXPECT_EQ(choice.notice, "");
}

TEST(VerbsSelection, EachFallbackIsUsedAndSaidInOneLine)
{
    const struct {
        llc::Config::VerbsFallback fallback;
        llc::Config::Net net;
        const char *name;
    } cases[] = {{llc::Config::VerbsFallback::Tcp, llc::Config::Net::Tcp, "tcp"},
                 {llc::Config::VerbsFallback::Udp, llc::Config::Net::Udp, "udp"},
                 {llc::Config::VerbsFallback::Hybrid, llc::Config::Net::Hybrid, "hybrid"}};
    for (const auto &c : cases) {
        llc::NetChoice choice = llc::choose_net(verbs_config(c.fallback), no_devices("ibv_get_device_list failed: X"));
        EXPECT_EQ(choice.net, c.net) << c.name;
        EXPECT_TRUE(contains(choice.notice, "LLC_NET=verbs")) << choice.notice;
        EXPECT_TRUE(contains(choice.notice, "devices found: none")) << choice.notice;
        EXPECT_TRUE(contains(choice.notice, "ibv_get_device_list failed: X")) << choice.notice;
        EXPECT_TRUE(contains(choice.notice, std::string("using ") + c.name + " instead")) << choice.notice;
        EXPECT_TRUE(contains(choice.notice, std::string("LLC_VERBS_FALLBACK=") + c.name)) << choice.notice;
        EXPECT_EQ(choice.notice.find('\n'), std::string::npos) << choice.notice;
    }
}

TEST(VerbsSelection, NoneFailsWithUnsupportedNamingTheVariable)
{
    try {
        llc::choose_net(verbs_config(llc::Config::VerbsFallback::None), no_devices("no RDMA devices"));
        ADD_FAILURE() << "LLC_VERBS_FALLBACK=none did not fail";
    } catch (const llc::Error &e) {
        EXPECT_EQ(e.status(), LLC_ERR_UNSUPPORTED);
        EXPECT_TRUE(contains(e.what(), "LLC_VERBS_FALLBACK=none")) << e.what();
        EXPECT_TRUE(contains(e.what(), "set LLC_VERBS_FALLBACK=tcp")) << e.what();
        EXPECT_TRUE(contains(e.what(), "no RDMA devices")) << e.what();
    }
}

TEST(VerbsSelection, DeviceWithoutActivePortFallsBackAndNamesIt)
{
    llc::NetChoice choice = llc::choose_net(verbs_config(llc::Config::VerbsFallback::Tcp), one_device(false));
    EXPECT_EQ(choice.net, llc::Config::Net::Tcp);
    EXPECT_TRUE(contains(choice.notice, "mlx5_0 (guid 0002:c903:00ab:cdef; port 1 DOWN")) << choice.notice;
    EXPECT_TRUE(contains(choice.notice, "no ACTIVE port")) << choice.notice;
}

// A usable device is never silently ignored: with the verbs data path built
// it is chosen (the fallback kept for a failure to start), without it
// llc_init is refused.
TEST(VerbsSelection, UsableDeviceIsChosenOrRefusedWithoutTheDataPath)
{
    struct {
        llc::Config::VerbsFallback fallback;
        llc::Config::Net net;
    } cases[] = {{llc::Config::VerbsFallback::Tcp, llc::Config::Net::Tcp},
                 {llc::Config::VerbsFallback::Udp, llc::Config::Net::Udp},
                 {llc::Config::VerbsFallback::Hybrid, llc::Config::Net::Hybrid},
                 {llc::Config::VerbsFallback::None, llc::Config::Net::Tcp}};
    for (const auto &c : cases) {
        try {
            llc::NetChoice choice = llc::choose_net(verbs_config(c.fallback), one_device(true));
            if (!llc::kVerbsDataPathBuilt)
                ADD_FAILURE() << "a usable device was accepted by a build without the data path";
            EXPECT_TRUE(choice.verbs);
            EXPECT_EQ(choice.device.name, "mlx5_0");
            EXPECT_EQ(choice.net, c.net) << "the fallback if the transport cannot start";
            EXPECT_EQ(choice.notice, "") << "nothing to say when verbs is used";
        } catch (const llc::Error &e) {
            if (llc::kVerbsDataPathBuilt)
                ADD_FAILURE() << "a usable device was refused: " << e.what();
            EXPECT_EQ(e.status(), LLC_ERR_UNSUPPORTED);
            EXPECT_TRUE(contains(e.what(), "mlx5_0")) << e.what();
            EXPECT_TRUE(contains(e.what(), "no verbs data path")) << e.what();
            EXPECT_TRUE(contains(e.what(), "LLC_NET=tcp, udp or hybrid")) << e.what();
        }
    }
    // A device without an ACTIVE port is not chosen, whatever the build.
    EXPECT_FALSE(llc::choose_net(verbs_config(llc::Config::VerbsFallback::Tcp), one_device(false)).verbs);
}

// The verbs transport failed to start (no DC support, limits): the fallback
// applies with a notice naming the device and the error, or llc_init fails
// with LLC_VERBS_FALLBACK=none.
TEST(VerbsSelection, FailureToStartFallsBackOrFails)
{
    const std::string err = "mlx5dv_create_qp (DC target): Operation not supported";
    llc::NetChoice c = llc::fall_back_after_failure(verbs_config(llc::Config::VerbsFallback::Udp), "mlx5_0 (port 1)",
                                                    LLC_ERR_UNSUPPORTED, err);
    EXPECT_EQ(c.net, llc::Config::Net::Udp);
    EXPECT_FALSE(c.verbs);
    EXPECT_TRUE(contains(c.notice, "could not start on mlx5_0 (port 1)")) << c.notice;
    EXPECT_TRUE(contains(c.notice, err)) << c.notice;
    EXPECT_TRUE(contains(c.notice, "using udp instead (LLC_VERBS_FALLBACK=udp")) << c.notice;
    EXPECT_EQ(llc::fall_back_after_failure(verbs_config(llc::Config::VerbsFallback::Hybrid), "d", LLC_ERR_SYSTEM, "x").net,
              llc::Config::Net::Hybrid);
    EXPECT_EQ(llc::fall_back_after_failure(verbs_config(llc::Config::VerbsFallback::Tcp), "d", LLC_ERR_SYSTEM, "x").net,
              llc::Config::Net::Tcp);
    try {
        llc::fall_back_after_failure(verbs_config(llc::Config::VerbsFallback::None), "mlx5_0", LLC_ERR_UNSUPPORTED, err);
        ADD_FAILURE() << "LLC_VERBS_FALLBACK=none fell back";
    } catch (const llc::Error &e) {
        EXPECT_EQ(e.status(), LLC_ERR_UNSUPPORTED);
        EXPECT_TRUE(contains(e.what(), "LLC_VERBS_FALLBACK=none")) << e.what();
        EXPECT_TRUE(contains(e.what(), err)) << e.what();
    }
}

TEST(VerbsSelection, BuiltWithoutVerbsIsTheReason)
{
    llc::VerbsDiscovery none;
    none.no_device_reason = "built without libibverbs";
    llc::NetChoice choice = llc::choose_net(verbs_config(llc::Config::VerbsFallback::Udp), none);
    EXPECT_EQ(choice.net, llc::Config::Net::Udp);
    EXPECT_TRUE(contains(choice.notice, "built without libibverbs")) << choice.notice;
}

TEST(VerbsSelection, EnvironmentIsParsed)
{
    {
        ScopedEnv env({{"LLC_NET", "verbs"}, {"LLC_VERBS_FALLBACK", nullptr}, {"LLC_HYBRID", nullptr}});
        llc::Config c = llc::Config::from_environment();
        EXPECT_TRUE(c.net_verbs);
        EXPECT_EQ(c.verbs_fallback, llc::Config::VerbsFallback::Tcp);
    }
    for (const char *v : {"tcp", "udp", "hybrid", "none"}) {
        ScopedEnv env({{"LLC_NET", "verbs"}, {"LLC_VERBS_FALLBACK", v}, {"LLC_HYBRID", nullptr}});
        EXPECT_STREQ(llc::fallback_name(llc::Config::from_environment().verbs_fallback), v);
    }
    {
        ScopedEnv env({{"LLC_NET", "verbs"}, {"LLC_VERBS_FALLBACK", "ib"}, {"LLC_HYBRID", nullptr}});
        try {
            llc::Config::from_environment();
            ADD_FAILURE() << "LLC_VERBS_FALLBACK=ib accepted";
        } catch (const llc::Error &e) {
            EXPECT_EQ(e.status(), LLC_ERR_INVALID);
            EXPECT_TRUE(contains(e.what(), "LLC_VERBS_FALLBACK=\"ib\"")) << e.what();
            EXPECT_TRUE(contains(e.what(), "tcp, udp, hybrid or none")) << e.what();
        }
    }
    {
        ScopedEnv env({{"LLC_NET", "verbs"}, {"LLC_VERBS_FALLBACK", nullptr}, {"LLC_HYBRID", "1"}});
        EXPECT_THROW(llc::Config::from_environment(), llc::Error);
    }
}

// ---------------------------------------------------------------- llc_init

namespace {

// Both ranks send `n` messages to each other; returns the stats.
llc_stats_t exchange(llc_context_t *ctx, int peer, int n)
{
    int got = 0;
    EXPECT_EQ(llc_am_register(ctx, 3,
                              [](llc_context_t *, void *arg, int, const void *, size_t, const void *data, size_t len) {
                                  int *count = static_cast<int *>(arg);
                                  EXPECT_TRUE(check_pattern(data, len, uint64_t(*count)));
                                  ++*count;
                              },
                              &got),
              LLC_OK);
    std::vector<std::vector<char>> payloads(static_cast<size_t>(n));
    int done = 0;
    for (int i = 0; i < n; i++) {
        payloads[size_t(i)].resize(size_t(i) * 997);
        fill_pattern(payloads[size_t(i)].data(), payloads[size_t(i)].size(), uint64_t(i));
        llc_iov_t iov{payloads[size_t(i)].data(), payloads[size_t(i)].size()};
        int rc = llc_am_send(ctx, peer, 3, nullptr, 0, &iov, 1,
                             [](void *arg, int status) {
                                 EXPECT_EQ(status, LLC_OK);
                                 ++*static_cast<int *>(arg);
                             },
                             &done);
        EXPECT_GE(rc, 0) << llc_last_error(ctx);
        if (rc == LLC_OK)
            done++;
    }
    progress_until(ctx, [&] { return got == n && done == n; });
    llc_stats_t st{};
    llc_get_stats(ctx, &st);
    return st;
}

JobOptions verbs_job(std::vector<int> nodes, const char *fallback)
{
    JobOptions o = job(std::move(nodes), 60);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}, {"LLC_NET", "verbs"}, {"LLC_UDP_RTO_US", "3000"}};
    if (fallback)
        o.env.push_back({"LLC_VERBS_FALLBACK", fallback});
    return o;
}

bool usable_device_here() { return llc::discover_verbs_devices().usable(); }

} // namespace

class VerbsFallbackJob : public ::testing::TestWithParam<const char *> {};

// Two "nodes": the traffic goes over the fallback transport, rank 0 says so
// in one line, rank 1 says nothing.
TEST_P(VerbsFallbackJob, TrafficUsesTheFallbackAndRankZeroSaysSo)
{
    if (usable_device_here())
        GTEST_SKIP() << "a usable RDMA device is present: LLC_NET=verbs uses it (or refuses it without the data path)";
    const std::string fallback = GetParam();
    LLC_EXPECT_JOB_OK(verbs_job({0, 1}, fallback == "default" ? nullptr : fallback.c_str()), [&](TestProcess &p) {
        const std::string net = fallback == "default" ? "tcp" : fallback;
        llc_context_t *ctx = nullptr;
        std::string said = capture_stderr([&] { ctx = init_or_fail(p); });
        ASSERT_NE(ctx, nullptr);
        if (p.rank == 0) {
            EXPECT_TRUE(contains(said, "libllc: LLC_NET=verbs: no usable RDMA device")) << said;
            EXPECT_TRUE(contains(said, "using " + net + " instead")) << said;
            EXPECT_TRUE(contains(said, "LLC_VERBS_FALLBACK=" + net)) << said;
            EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
        } else {
            EXPECT_EQ(said, "");
        }
        llc_stats_t st = exchange(ctx, 1 - p.rank, 40);
        if (net == "tcp") {
            EXPECT_EQ(st.tcp_msgs, 40u);
            EXPECT_EQ(st.udp_msgs, 0u);
        } else {
            // udp, and hybrid which starts every destination on udp (40
            // messages stay far below LLC_HYBRID_PROMOTE_MSGS)
            EXPECT_EQ(st.udp_msgs, 40u);
            EXPECT_EQ(st.tcp_msgs, 0u);
            EXPECT_GT(st.udp_packets_sent, 0u);
        }
        EXPECT_EQ(st.msgs_received, 40u);
        finalize_ok(ctx);
    });
}

INSTANTIATE_TEST_SUITE_P(Verbs, VerbsFallbackJob, ::testing::Values("default", "tcp", "udp", "hybrid"),
                         [](const ::testing::TestParamInfo<const char *> &info) { return std::string(info.param); });

// A second context in the same process does not repeat the notice.  (One
// process: the test bootstrap's keys are written once, so a job cannot
// re-initialise with remote peers.)
TEST(VerbsFallback, SaidOncePerProcess)
{
    if (usable_device_here())
        GTEST_SKIP() << "a usable RDMA device is present";
    LLC_EXPECT_JOB_OK(verbs_job({0}, "udp"), [](TestProcess &p) {
        llc_context_t *ctx = nullptr;
        std::string first = capture_stderr([&] { ctx = init_or_fail(p); });
        ASSERT_NE(ctx, nullptr);
        finalize_ok(ctx);
        EXPECT_TRUE(contains(first, "using udp instead")) << first;
        std::string second = capture_stderr([&] { ctx = init_or_fail(p); });
        ASSERT_NE(ctx, nullptr);
        finalize_ok(ctx);
        EXPECT_EQ(second, "");
    });
}

// LLC_VERBS_FALLBACK=none: llc_init fails on every rank, on one node too
// (nothing inter-node is needed for the decision), and nothing hangs.
TEST(VerbsFallback, NoneFailsInitOnEveryRank)
{
    if (usable_device_here())
        GTEST_SKIP() << "a usable RDMA device is present";
    for (std::vector<int> nodes : {std::vector<int>{0, 1}, std::vector<int>{0, 0}}) {
        LLC_EXPECT_JOB_OK(verbs_job(nodes, "none"), [](TestProcess &p) {
            llc_init_params_t params = p.params();
            llc_context_t *ctx = nullptr;
            std::string said = capture_stderr([&] { EXPECT_EQ(llc_init(&params, &ctx), LLC_ERR_UNSUPPORTED); });
            EXPECT_EQ(ctx, nullptr);
            EXPECT_EQ(said, "") << "the error goes to llc_last_error, not stderr";
            std::string msg = llc_last_error(nullptr);
            EXPECT_TRUE(contains(msg, "LLC_NET=verbs")) << msg;
            EXPECT_TRUE(contains(msg, "LLC_VERBS_FALLBACK=none")) << msg;
            EXPECT_TRUE(contains(msg, "set LLC_VERBS_FALLBACK=tcp, udp or hybrid")) << msg;
        });
    }
}

// The verbs transport chosen for a (made-up) usable device, and failing to
// start because the device is not really there: every process with remote
// peers says so with the device and the reason and uses the fallback, whose
// traffic then flows; with LLC_VERBS_FALLBACK=none llc_init fails on every
// rank naming the device.  This runs the Context wiring and the verbs
// transport's constructor up to its first device call (the device list).
#ifdef LLC_VERBS_DATA_PATH
namespace {
llc::VerbsDiscovery fake_usable() { return one_device(true); }
} // namespace

TEST(VerbsFallback, TransportThatCannotStartFallsBackWithANotice)
{
    if (usable_device_here())
        GTEST_SKIP() << "a usable RDMA device is present: the made-up one would not fail the same way";
    for (const char *fb : {"tcp", "udp"}) {
        LLC_EXPECT_JOB_OK(verbs_job({0, 1}, fb), [&](TestProcess &p) {
            llc::set_verbs_discovery_for_testing(fake_usable);
            llc_context_t *ctx = nullptr;
            std::string said = capture_stderr([&] { ctx = init_or_fail(p); });
            llc::set_verbs_discovery_for_testing(nullptr);
            ASSERT_NE(ctx, nullptr);
            EXPECT_TRUE(contains(said, "libllc: LLC_NET=verbs: the verbs transport could not start on mlx5_0")) << said;
            EXPECT_TRUE(contains(said, "disappeared since discovery")) << said;
            EXPECT_TRUE(contains(said, std::string("using ") + fb + " instead")) << said;
            EXPECT_TRUE(contains(said, "(rank " + std::to_string(p.rank) + ")")) << said;
            llc_stats_t st = exchange(ctx, 1 - p.rank, 20);
            EXPECT_EQ(std::string(fb) == "tcp" ? st.tcp_msgs : st.udp_msgs, 20u);
            EXPECT_EQ(st.msgs_received, 20u);
            finalize_ok(ctx);
        });
    }
    LLC_EXPECT_JOB_OK(verbs_job({0, 1}, "none"), [](TestProcess &p) {
        llc::set_verbs_discovery_for_testing(fake_usable);
        llc_init_params_t params = p.params();
        llc_context_t *ctx = nullptr;
        int rc = llc_init(&params, &ctx);
        llc::set_verbs_discovery_for_testing(nullptr);
        EXPECT_LT(rc, 0);
        EXPECT_EQ(ctx, nullptr);
        std::string msg = llc_last_error(nullptr);
        EXPECT_TRUE(contains(msg, "LLC_VERBS_FALLBACK=none")) << msg;
        EXPECT_TRUE(contains(msg, "could not start on mlx5_0")) << msg;
    });
}
#endif

TEST(VerbsFallback, InvalidValueFailsInit)
{
    LLC_EXPECT_JOB_OK(verbs_job({0, 1}, "carrier-pigeon"), [](TestProcess &p) {
        llc_init_params_t params = p.params();
        llc_context_t *ctx = nullptr;
        EXPECT_EQ(llc_init(&params, &ctx), LLC_ERR_INVALID);
        EXPECT_EQ(ctx, nullptr);
        EXPECT_TRUE(contains(llc_last_error(nullptr), "LLC_VERBS_FALLBACK=\"carrier-pigeon\""))
            << llc_last_error(nullptr);
    });
}
