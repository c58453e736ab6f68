// coll_args_test.cpp - wrong arguments in src/coll's collectives
// (doc/reliability.md, "Wrong arguments"): processes that pass different
// counts to MPI_Bcast / MPI_Alltoall are told (the receive's truncation
// error where the data do not fit, as MPICH's algorithms report
// MPI_ERR_TRUNCATE; LLC_COLL_ERR_SIZE elsewhere in the broadcast), the call
// completes on every process, nothing is left in flight, and the next call
// with the right arguments works.  Threads act as the ranks over an
// in-process network with MPI's receive semantics: a longer message is
// consumed, its first bytes copied and kTruncate returned; a shorter one is
// received without error.
#include "llc_coll.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int kTruncate = 15; // "MPI_ERR_TRUNCATE" of this network

class MpiLikeNet {
public:
    explicit MpiLikeNet(int n) : boxes_(size_t(n)), eps_(size_t(n))
    {
        for (int r = 0; r < n; r++) {
            eps_[size_t(r)].net = this;
            eps_[size_t(r)].rank = r;
            eps_[size_t(r)].p2p = llc_coll_p2p_t{&eps_[size_t(r)], r, n, send, recv, isend, irecv, waitall,
                                                 barrier, wtime, nullptr, nullptr};
        }
    }
    const llc_coll_p2p_t *p2p(int r) const { return &eps_[size_t(r)].p2p; }
    // Messages sent and not received.  Without `all`, the broadcast
    // optimizer's reports are not counted: they stay in flight by design
    // until O's next round or llc_coll_state_quiesce (checked at the end).
    size_t pending(bool all = false)
    {
        const int kReportTag = 0x4c12;
        size_t n = 0;
        for (auto &b : boxes_) {
            std::lock_guard<std::mutex> lk(b.mu);
            for (const Msg &m : b.q)
                n += all || m.tag != kReportTag;
        }
        return n;
    }

private:
    struct Msg {
        int src, tag;
        std::vector<char> data;
    };
    struct Box {
        std::mutex mu;
        std::condition_variable cv;
        std::deque<Msg> q;
    };
    struct Ep {
        MpiLikeNet *net;
        int rank;
        llc_coll_p2p_t p2p;
    };
    struct Req {
        bool is_recv;
        void *buf;
        size_t bytes;
        int src, tag;
    };
    static int send(void *arg, const void *buf, size_t bytes, int dest, int tag)
    {
        auto *ep = static_cast<Ep *>(arg);
        Box &b = ep->net->boxes_[size_t(dest)];
        std::lock_guard<std::mutex> lk(b.mu);
        b.q.push_back(Msg{ep->rank, tag, std::vector<char>((const char *)buf, (const char *)buf + bytes)});
        b.cv.notify_all();
        return 0;
    }
    static int recv(void *arg, void *buf, size_t bytes, int src, int tag)
    {
        auto *ep = static_cast<Ep *>(arg);
        Box &b = ep->net->boxes_[size_t(ep->rank)];
        std::unique_lock<std::mutex> lk(b.mu);
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        for (;;) {
            for (auto it = b.q.begin(); it != b.q.end(); ++it)
                if (it->src == src && it->tag == tag) {
                    size_t n = std::min(bytes, it->data.size());
                    if (n)
                        std::memcpy(buf, it->data.data(), n);
                    bool trunc = it->data.size() > bytes;
                    b.q.erase(it);
                    return trunc ? kTruncate : 0;
                }
            if (b.cv.wait_until(lk, deadline) == std::cv_status::timeout)
                return 99; // a hang: the test fails on it
        }
    }
    static int isend(void *arg, const void *buf, size_t bytes, int dest, int tag, void **req)
    {
        *req = new Req{false, nullptr, 0, 0, 0};
        return send(arg, buf, bytes, dest, tag);
    }
    static int irecv(void *, void *buf, size_t bytes, int src, int tag, void **req)
    {
        *req = new Req{true, buf, bytes, src, tag};
        return 0;
    }
    static int waitall(void *arg, int n, void **reqs)
    {
        int rc = 0;
        for (int i = 0; i < n; i++) {
            auto *r = static_cast<Req *>(reqs[i]);
            if (r->is_recv) {
                int e = recv(arg, r->buf, r->bytes, r->src, r->tag);
                if (e && !rc)
                    rc = e;
            }
            delete r;
        }
        return rc;
    }
    static int barrier(void *arg)
    {
        auto *ep = static_cast<Ep *>(arg);
        MpiLikeNet *net = ep->net;
        std::unique_lock<std::mutex> lk(net->bmu_);
        unsigned long gen = net->bgen_;
        if (++net->bcount_ == int(net->eps_.size())) {
            net->bcount_ = 0;
            net->bgen_++;
            net->bcv_.notify_all();
        } else {
            net->bcv_.wait(lk, [&] { return net->bgen_ != gen; });
        }
        return 0;
    }
    static double wtime(void *)
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    }

    std::vector<Box> boxes_;
    std::vector<Ep> eps_;
    std::mutex bmu_;
    std::condition_variable bcv_;
    int bcount_ = 0;
    unsigned long bgen_ = 0;
};

struct EnvGuard {
    std::string name;
    EnvGuard(const char *n, const char *v) : name(n) { setenv(n, v, 1); }
    ~EnvGuard() { unsetenv(name.c_str()); }
};

// Runs body(rank, state, p2p) on n threads; returns each rank's result.
template <class Body> std::vector<int> run_ranks(MpiLikeNet &net, std::vector<llc_coll_state_t *> &st, Body body)
{
    const int n = int(st.size());
    std::vector<int> rc(size_t(n), 0);
    std::vector<std::thread> th;
    for (int r = 0; r < n; r++)
        th.emplace_back([&, r] { rc[size_t(r)] = body(r, st[size_t(r)], net.p2p(r)); });
    for (auto &t : th)
        t.join();
    return rc;
}

struct BcastCase {
    const char *mode;
    size_t root_bytes, other_bytes;
};

class BcastWrongCounts : public ::testing::TestWithParam<BcastCase> {};

// Root 0 of 7 ranks (a tree of depth 3): the others pass other_bytes.
TEST_P(BcastWrongCounts, EveryNonRootIsToldAndNothingHangs)
{
    const BcastCase c = GetParam();
    EnvGuard mode("LLC_BCAST", c.mode);
    const int n = 7;
    MpiLikeNet net(n);
    std::vector<llc_coll_state_t *> st;
    for (int r = 0; r < n; r++)
        st.push_back(llc_coll_state_create(r, n));
    for (int round = 0; round < 3; round++) {
        // the wrong call, then a right one (the state must still agree)
        std::vector<int> rc = run_ranks(net, st, [&](int r, llc_coll_state_t *s, const llc_coll_p2p_t *p) {
            size_t bytes = r == 0 ? c.root_bytes : c.other_bytes;
            std::vector<char> buf(bytes, char(r == 0 ? 7 : 0));
            return llc_coll_bcast(s, p, buf.data(), bytes, 0);
        });
        EXPECT_EQ(rc[0], 0);
        const bool binomial = std::string(c.mode) == "binomial";
        for (int r = 1; r < n; r++) {
            // LLC_BCAST=binomial sends no header: only the root's children
            // (1, 2, 4), whose receive truncates, can tell (doc/reliability.md)
            if (!binomial || (r & (r - 1)) == 0) {
                EXPECT_NE(rc[size_t(r)], 0) << "rank " << r << " was not told";
            }
            EXPECT_NE(rc[size_t(r)], 99) << "rank " << r << " waited for a message that never came";
        }
        // where the root's data did not fit (its children), the receive's
        // truncation error.  Which ranks are the root's children depends on
        // the virtual ranks the optimizer has swapped in earlier rounds
        // (slow threads become leaves), but the root is always virtual rank
        // 0 and has 3 children in a tree of 7: exactly 3 ranks truncate.
        if (c.root_bytes > c.other_bytes) {
            int truncated = 0;
            for (int r = 1; r < n; r++)
                truncated += rc[size_t(r)] == kTruncate;
            EXPECT_EQ(truncated, 3) << "ranks 1..6 returned " << ::testing::PrintToString(rc);
        }
        EXPECT_EQ(net.pending(), 0u) << "messages left in flight";
        const size_t good = 1000;
        std::vector<std::vector<char>> bufs(n);
        rc = run_ranks(net, st, [&](int r, llc_coll_state_t *s, const llc_coll_p2p_t *p) {
            bufs[size_t(r)].assign(good, r == 0 ? char(round + 1) : 0);
            return llc_coll_bcast(s, p, bufs[size_t(r)].data(), good, 0);
        });
        for (int r = 0; r < n; r++) {
            EXPECT_EQ(rc[size_t(r)], 0) << "rank " << r << " after the wrong call";
            EXPECT_EQ(bufs[size_t(r)], std::vector<char>(good, char(round + 1))) << "rank " << r;
        }
        EXPECT_EQ(net.pending(), 0u);
    }
    run_ranks(net, st, [&](int, llc_coll_state_t *s, const llc_coll_p2p_t *p) { return llc_coll_state_quiesce(s, p); });
    EXPECT_EQ(net.pending(true), 0u);
    for (auto *s : st)
        llc_coll_state_free(s);
}

INSTANTIATE_TEST_SUITE_P(
    Coll, BcastWrongCounts,
    ::testing::Values(BcastCase{"vrank", 4, 40}, BcastCase{"vrank", 40, 4},             // packed (small)
                      BcastCase{"vrank", 40000, 100000}, BcastCase{"vrank", 100000, 40000}, // header + data
                      BcastCase{"vrank", 40, 100000}, BcastCase{"vrank", 100000, 40},   // across LLC_BCAST_PACK_MAX
                      BcastCase{"binomial", 40, 4}),
    [](const ::testing::TestParamInfo<BcastCase> &i) {
        return std::string(i.param.mode) + "_" + std::to_string(i.param.root_bytes) + "_" +
               std::to_string(i.param.other_bytes);
    });

class AlltoallWrongCounts : public ::testing::TestWithParam<const char *> {};

// Rank 0 of 5 passes twice the others' block: the algorithm (forced, the
// same on every rank) completes everywhere; ranks that receive rank 0's
// blocks get the truncation error; nothing is left in flight; the next
// right call works.
TEST_P(AlltoallWrongCounts, CompletesEverywhereAndReportsTruncation)
{
    EnvGuard mode("LLC_ALLTOALL", GetParam());
    const int n = 5;
    const size_t block = 64;
    MpiLikeNet net(n);
    std::vector<llc_coll_state_t *> st;
    for (int r = 0; r < n; r++)
        st.push_back(llc_coll_state_create(r, n));
    std::vector<int> rc = run_ranks(net, st, [&](int r, llc_coll_state_t *s, const llc_coll_p2p_t *p) {
        size_t b = r == 0 ? 2 * block : block;
        std::vector<char> sb(b * n, 1), rb(b * n, 0);
        return llc_coll_alltoall(s, p, sb.data(), rb.data(), b);
    });
    int truncated = 0;
    for (int r = 0; r < n; r++) {
        EXPECT_NE(rc[size_t(r)], 99) << "rank " << r << " waited for a message that never came";
        truncated += rc[size_t(r)] == kTruncate;
    }
    EXPECT_GE(truncated, 1) << "nobody reported the truncation";
    EXPECT_EQ(net.pending(), 0u) << "messages left in flight";
    std::vector<std::vector<char>> out(n);
    rc = run_ranks(net, st, [&](int r, llc_coll_state_t *s, const llc_coll_p2p_t *p) {
        std::vector<char> sb(block * n);
        for (int d = 0; d < n; d++)
            std::memset(sb.data() + d * block, r * 16 + d, block);
        out[size_t(r)].assign(block * n, 0);
        return llc_coll_alltoall(s, p, sb.data(), out[size_t(r)].data(), block);
    });
    for (int r = 0; r < n; r++) {
        EXPECT_EQ(rc[size_t(r)], 0) << "rank " << r;
        for (int s = 0; s < n; s++)
            EXPECT_EQ(out[size_t(r)][size_t(s) * block], char(s * 16 + r)) << "rank " << r << " from " << s;
    }
    EXPECT_EQ(net.pending(), 0u);
    for (auto *s : st)
        llc_coll_state_free(s);
}

INSTANTIATE_TEST_SUITE_P(Coll, AlltoallWrongCounts,
                         ::testing::Values("bruck", "pairwise", "pairwise_lb", "pairwise_mb", "pairwise_ob", "ring",
                                           "ring_lb", "ring_mb", "ring_ob"));

} // namespace
