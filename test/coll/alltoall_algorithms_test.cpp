// Every algorithm, every communicator size 1..17, several byte counts
// (including 0) and in place: every received byte is checked.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "alltoall/algorithms.hpp"
#include "alltoall/alltoall_state.hpp"
#include "alltoall_net.hpp"

using llc::coll::alltoall::Alg;
using llc::coll::alltoall::kNumAlgs;

namespace {

unsigned char pattern(int src, int dst, size_t k, int salt)
{
    return static_cast<unsigned char>(src * 131 + dst * 31 + k * 7 + salt * 13 + (k >> 8));
}

const size_t kBytes[] = {0, 1, 3, 64, 1000};

struct Errors {
    std::mutex mu;
    std::vector<std::string> list;
    void add(std::string s)
    {
        std::lock_guard<std::mutex> g(mu);
        if (list.size() < 20)
            list.push_back(std::move(s));
    }
};

// Fills send (or recv for in place), runs, checks.  Returns false on error.
void one(const llc_coll_p2p_t *p, int salt, size_t bytes, bool in_place,
         const std::function<int(const void *, void *)> &alltoall, Errors *err,
         const std::string &what)
{
    const int P = p->size, r = p->rank;
    std::vector<unsigned char> send(P * bytes), recv(P * bytes + 1, 0xEE);
    unsigned char *data = in_place ? recv.data() : send.data();
    for (int j = 0; j < P; j++)
        for (size_t k = 0; k < bytes; k++)
            data[j * bytes + k] = pattern(r, j, k, salt);
    int rc = alltoall(in_place ? recv.data() : send.data(), recv.data());
    if (rc) {
        err->add(what + ": rc=" + std::to_string(rc));
        return;
    }
    for (int j = 0; j < P; j++)
        for (size_t k = 0; k < bytes; k++)
            if (recv[j * bytes + k] != pattern(j, r, k, salt)) {
                err->add(what + ": rank " + std::to_string(r) + " block " + std::to_string(j) +
                         " byte " + std::to_string(k));
                return;
            }
    if (recv[P * bytes] != 0xEE)
        err->add(what + ": wrote past the end");
}

}  // namespace

TEST(AlltoallAlgorithms, EveryAlgorithmEverySize)
{
    for (int P = 1; P <= 17; P++) {
        a2a_test::Net net(P);
        Errors err;
        net.run([&](int r) {
            const llc_coll_p2p_t *p = net.p2p(r);
            for (int a = 0; a < kNumAlgs; a++)
                for (size_t bytes : kBytes) {
                    std::string what = std::string(alg_name(Alg(a))) + " P=" + std::to_string(P) +
                                       " bytes=" + std::to_string(bytes);
                    // the algorithms take distinct buffers; in place is the
                    // C entry point's job (below)
                    one(p, a, bytes, false,
                        [&](const void *s, void *d) {
                            return llc::coll::alltoall::run(Alg(a), p, s, d, bytes);
                        },
                        &err, what);
                }
        });
        EXPECT_EQ(net.pending(), 0u) << "P=" << P;
        EXPECT_EQ(net.errors(), 0) << "P=" << P;
        for (auto &e : err.list)
            ADD_FAILURE() << e;
    }
}

// The C entry point with every forced algorithm, auto, in place and 0 bytes.
TEST(AlltoallAlgorithms, EntryPointForcedAutoInPlace)
{
    std::vector<std::string> modes;
    for (int a = 0; a < kNumAlgs; a++)
        modes.push_back(alg_name(Alg(a)));
    modes.push_back("auto");
    setenv("LLC_MODEL_L", "1e-6", 1);
    setenv("LLC_MODEL_B", "1e-9", 1);
    setenv("LLC_ALLTOALL_TRIALS", "1", 1);
    setenv("LLC_ALLTOALL_MONITOR_PERIOD", "3", 1);
    for (int P : {1, 2, 3, 4, 5, 7, 8, 12, 16, 17}) {
        for (const std::string &mode : modes) {
            setenv("LLC_ALLTOALL", mode.c_str(), 1);
            a2a_test::Net net(P);
            Errors err;
            net.run([&](int r) {
                llc_coll_state_t *st = llc_coll_state_create(r, P);
                const llc_coll_p2p_t *p = net.p2p(r);
                int salt = 0;
                // several calls so that auto runs through learning and monitoring
                for (int rep = 0; rep < 12; rep++)
                    for (size_t bytes : kBytes)
                        for (bool in_place : {false, true}) {
                            std::string what = mode + " P=" + std::to_string(P) + " bytes=" +
                                               std::to_string(bytes) + (in_place ? " in place" : "");
                            one(p, ++salt, bytes, in_place,
                                [&](const void *s, void *d) {
                                    return llc_coll_alltoall(st, p, s, d, bytes);
                                },
                                &err, what);
                        }
                llc_coll_state_free(st);
            });
            EXPECT_EQ(net.pending(), 0u) << mode << " P=" << P;
            for (auto &e : err.list)
                ADD_FAILURE() << e;
        }
    }
    unsetenv("LLC_ALLTOALL");
    unsetenv("LLC_MODEL_L");
    unsetenv("LLC_MODEL_B");
    unsetenv("LLC_ALLTOALL_TRIALS");
    unsetenv("LLC_ALLTOALL_MONITOR_PERIOD");
}

// Bruck's buffers come from a Scratch kept between calls: garbage left in it
// by earlier calls of other sizes must not show, it grows only when needed,
// and the entry point keeps it only while calls run Bruck (likewise the copy
// of an in-place call).
TEST(AlltoallAlgorithms, ScratchReusedOnlyWhileNeeded)
{
    const int P = 5;
    a2a_test::Net net(P);
    Errors err;
    net.run([&](int r) {
        const llc_coll_p2p_t *p = net.p2p(r);
        llc::coll::alltoall::Scratch scratch;
        int salt = 0;
        for (size_t bytes : {1000, 3, 64, 1000, 0, 17}) {
            if (scratch.capacity())  // what an earlier call left, made loud
                std::memset(scratch.get(scratch.capacity()), 0xA5, scratch.capacity());
            const char *before = scratch.capacity() ? scratch.get(0) : nullptr;
            const size_t cap = scratch.capacity();
            one(p, ++salt, bytes, false,
                [&](const void *s, void *d) {
                    return llc::coll::alltoall::run(Alg::bruck, p, s, d, bytes, &scratch);
                },
                &err, "bruck with scratch bytes=" + std::to_string(bytes));
            if (cap >= (P + 2 * (P / 2 + 1)) * bytes && scratch.get(0) != before)
                err.add("scratch reallocated although it was large enough");
        }
        if (scratch.capacity() < (P + 2 * (P / 2 + 1)) * 1000)
            err.add("scratch smaller than Bruck's buffers at 1000 bytes");
    });
    for (auto &e : err.list)
        ADD_FAILURE() << e;

    // the entry point: auto without pruning (and without warm-up calls)
    // learns bruck first, then pairwise
    setenv("LLC_ALLTOALL", "auto", 1);
    setenv("LLC_ALLTOALL_WARMUP", "0", 1);
    setenv("LLC_ALLTOALL_PRUNE", "0", 1);
    setenv("LLC_ALLTOALL_TRIALS", "1", 1);
    setenv("LLC_ALLTOALL_CUTOFF", "0", 1);
    a2a_test::Net net2(P);
    Errors err2;
    net2.run([&](int r) {
        llc_coll_state_t *st = llc_coll_state_create(r, P);
        const llc_coll_p2p_t *p = net2.p2p(r);
        llc::coll::AlltoallState *a = llc::coll::alltoall_state(st);
        one(p, 1, 256, false, [&](const void *s, void *d) { return llc_coll_alltoall(st, p, s, d, 256); },
            &err2, "auto call 1 (bruck)");
        if (a->alg_scratch.capacity() == 0)
            err2.add("bruck's scratch not kept after a bruck call");
        if (a->in_place_copy.capacity() != 0)
            err2.add("in-place copy held without an in-place call");
        one(p, 2, 256, true, [&](const void *s, void *d) { return llc_coll_alltoall(st, p, s, d, 256); },
            &err2, "auto call 2 (pairwise, in place)");
        if (a->alg_scratch.capacity() != 0)
            err2.add("bruck's scratch still held after a pairwise call");
        if (a->in_place_copy.capacity() < size_t(P) * 256)
            err2.add("in-place copy not kept after an in-place call");
        one(p, 3, 256, false, [&](const void *s, void *d) { return llc_coll_alltoall(st, p, s, d, 256); },
            &err2, "auto call 3");
        if (a->in_place_copy.capacity() != 0)
            err2.add("in-place copy still held after a call that is not in place");
        llc_coll_state_free(st);
    });
    for (const char *v : {"LLC_ALLTOALL", "LLC_ALLTOALL_WARMUP", "LLC_ALLTOALL_PRUNE", "LLC_ALLTOALL_TRIALS",
                          "LLC_ALLTOALL_CUTOFF"})
        unsetenv(v);
    for (auto &e : err2.list)
        ADD_FAILURE() << e;
}

TEST(AlltoallAlgorithms, MpichModeDeclines)
{
    setenv("LLC_ALLTOALL", "mpich", 1);
    llc_coll_state_t *st = llc_coll_state_create(0, 1);
    a2a_test::Net net(1);
    char a[4] = {1, 2, 3, 4}, b[4];
    EXPECT_EQ(llc_coll_alltoall(st, net.p2p(0), a, b, 4), LLC_COLL_DECLINED);
    llc_coll_state_free(st);
    unsetenv("LLC_ALLTOALL");
    EXPECT_EQ(llc_coll_alltoall(nullptr, net.p2p(0), a, b, 4), LLC_COLL_ERR_ARG);
}

TEST(AlltoallAlgorithms, PairwiseSchedule)
{
    int dst, src;
    // power of two: XOR partners
    llc::coll::alltoall::step_partners(Alg::pairwise, 5, 8, 3, &dst, &src);
    EXPECT_EQ(dst, 6);
    EXPECT_EQ(src, 6);
    // otherwise the (rank + i) / (rank - i) shift
    llc::coll::alltoall::step_partners(Alg::pairwise_lb, 1, 6, 4, &dst, &src);
    EXPECT_EQ(dst, 5);
    EXPECT_EQ(src, 3);
    llc::coll::alltoall::step_partners(Alg::ring, 5, 8, 3, &dst, &src);
    EXPECT_EQ(dst, 0);
    EXPECT_EQ(src, 2);
    Alg a;
    EXPECT_TRUE(llc::coll::alltoall::alg_from_name("ring_ob", &a));
    EXPECT_EQ(a, Alg::ring_ob);
    EXPECT_FALSE(llc::coll::alltoall::alg_from_name("nope", &a));
}
