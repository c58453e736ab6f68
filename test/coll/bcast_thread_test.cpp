// The full llc_coll_bcast with N threads as ranks over the in-process
// transport: correctness for every size/root/length, the consistency proof
// under random loads, convergence on the max-effect pattern.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <thread>

#include "bcast/bcast.hpp"
#include "thread_net.hpp"

using llc::coll::BcastState;
using llc_test::ThreadNet;

namespace {

// Sets environment variables for the duration of a test (before the threads
// start: the broadcast state reads them when it is created).
class Env {
  public:
    Env(std::initializer_list<std::pair<const char *, const char *>> kv)
    {
        for (auto &p : kv) {
            const char *old = std::getenv(p.first);
            saved_.push_back({p.first, old ? std::string(old) : std::string(), old != nullptr});
            setenv(p.first, p.second, 1);
        }
    }
    ~Env()
    {
        for (auto &s : saved_) {
            if (s.had)
                setenv(s.name, s.value.c_str(), 1);
            else
                unsetenv(s.name);
        }
    }

  private:
    struct Saved {
        const char *name;
        std::string value;
        bool had;
    };
    std::vector<Saved> saved_;
};

// Runs body(rank, state, p2p) on `size` threads, each with its own state.
void run_ranks(int size, const std::function<void(int, llc_coll_state_t *, const llc_coll_p2p_t *)> &body,
               ThreadNet &net)
{
    std::vector<std::thread> th;
    for (int r = 0; r < size; r++)
        th.emplace_back([&, r] {
            llc_coll_state_t *st = llc_coll_state_create(r, size);
            body(r, st, net.p2p(r));
            llc_coll_state_free(st);
        });
    for (auto &t : th)
        t.join();
}

unsigned char pattern(uint64_t iter, int root, size_t i)
{
    return static_cast<unsigned char>((iter * 131 + root * 31 + i * 7 + (i >> 8)) & 0xff);
}

}  // namespace

TEST(BcastThreads, AllSizesRootsLengthsBothModes)
{
    for (const char *mode : {"vrank", "binomial"}) {
        Env env{{"LLC_BCAST", mode}, {"LLC_BCAST_PACK_MAX", "1024"}};
        for (int size = 1; size <= 9; size++) {
            ThreadNet net(size);
            std::atomic<int> errors{0};
            run_ranks(
                size,
                [&](int rank, llc_coll_state_t *st, const llc_coll_p2p_t *p2p) {
                    uint64_t iter = 0;
                    for (size_t bytes : {size_t(0), size_t(1), size_t(7), size_t(1024),
                                         size_t(1025), size_t(100000)}) {
                        for (int root = 0; root < size; root++, iter++) {
                            std::vector<unsigned char> buf(bytes + 1, 0xee);
                            if (rank == root)
                                for (size_t i = 0; i < bytes; i++)
                                    buf[i] = pattern(iter, root, i);
                            int rc = llc_coll_bcast(st, p2p, buf.data(), bytes, root);
                            if (rc)
                                errors++;
                            for (size_t i = 0; i < bytes; i++)
                                if (buf[i] != pattern(iter, root, i)) {
                                    errors++;
                                    break;
                                }
                            if (buf[bytes] != 0xee)
                                errors++;  // wrote past the end
                        }
                    }
                },
                net);
            EXPECT_EQ(errors.load(), 0) << mode << " size " << size;
            EXPECT_LE(net.pending(), static_cast<size_t>(size)) << "only the last reports may remain";
        }
    }
}

TEST(BcastThreads, DeclinedWhenMpichAndBadRoot)
{
    Env env{{"LLC_BCAST", "mpich"}};
    llc_coll_state_t *st = llc_coll_state_create(0, 2);
    ThreadNet net(2);
    char c = 0;
    EXPECT_EQ(llc_coll_bcast(st, net.p2p(0), &c, 1, 0), LLC_COLL_DECLINED);
    llc_coll_state_free(st);
    Env env2{{"LLC_BCAST", "vrank"}};
    st = llc_coll_state_create(0, 2);
    EXPECT_EQ(llc_coll_bcast(st, net.p2p(0), &c, 1, 2), LLC_COLL_ERR_ARG);
    EXPECT_EQ(llc_coll_bcast(st, net.p2p(0), &c, 1, -1), LLC_COLL_ERR_ARG);
    llc_coll_state_free(st);
}

TEST(BcastThreads, PresetTableIsUsedAndNeverChangedInBinomialMode)
{
    Env env{{"LLC_BCAST", "binomial"}, {"LLC_BCAST_TABLE", "4:7,1:2"}};
    const int size = 8;
    ThreadNet net(size);
    std::atomic<int> errors{0};
    run_ranks(
        size,
        [&](int rank, llc_coll_state_t *st, const llc_coll_p2p_t *p2p) {
            for (int k = 0; k < 50; k++) {
                if (rank == 7)
                    std::this_thread::sleep_for(std::chrono::microseconds(200));
                int v = rank == 0 ? k : -1;
                if (llc_coll_bcast(st, p2p, &v, sizeof v, 0) || v != k)
                    errors++;
            }
            BcastState *b = llc::coll::bcast::state_of(st);
            if (b->table.vrank(4) != 7 || b->table.vrank(7) != 4 || b->table.vrank(1) != 2 ||
                b->table.version() != 1)
                errors++;
        },
        net);
    EXPECT_EQ(errors.load(), 0);
}

// The consistency proof: thousands of broadcasts, random roots (mostly the
// optimizer's, so optimization rounds happen), random lengths, load patterns
// that change every 150 broadcasts (one heavily loaded rank + jitter on all);
// every byte checked, and after every broadcast all ranks compare their
// table checksum and sequence number.  The library's own header check
// (root's checksum vs receiver's) would also fail a broadcast.
TEST(BcastThreads, ThousandsOfBroadcastsTablesIdenticalAfterEach)
{
    Env env{{"LLC_BCAST", "vrank"},          {"LLC_BCAST_MIN_GAP", "20e-6"},
            {"LLC_BCAST_INTERVAL", "1"},     {"LLC_BCAST_INTERVAL_MAX", "8"},
            {"LLC_BCAST_PACK_MAX", "4096"}};
    const int size = 8, iters = 3000;
    ThreadNet net(size);
    std::vector<uint64_t> sums(size), seqs(size);
    std::atomic<int> data_errors{0}, rc_errors{0}, table_mismatch{0};
    std::atomic<uint64_t> decisions{0}, swaps_seen{0};
    run_ranks(
        size,
        [&](int rank, llc_coll_state_t *st, const llc_coll_p2p_t *p2p) {
            std::mt19937_64 shared(12345);  // same stream on every rank
            std::mt19937 local(rank * 7919 + 1);
            std::vector<unsigned char> buf;
            int loaded = -1;
            uint64_t last_version = 0;
            for (int it = 0; it < iters; it++) {
                if (it % 150 == 0)
                    loaded = static_cast<int>(shared() % size);
                const int root = (shared() % 10 < 7) ? 0 : static_cast<int>(shared() % size);
                const size_t choice = shared() % 10;
                const size_t bytes = choice < 6 ? shared() % 64 : choice < 9 ? shared() % 5000
                                                                             : shared() % 40000;
                buf.assign(bytes, 0);
                if (rank == root)
                    for (size_t i = 0; i < bytes; i++)
                        buf[i] = pattern(it, root, i);
                int us = static_cast<int>(local() % 20);
                if (rank == loaded)
                    us += 300;
                if (us > 5)
                    std::this_thread::sleep_for(std::chrono::microseconds(us));
                if (llc_coll_bcast(st, p2p, buf.data(), bytes, root))
                    rc_errors++;
                for (size_t i = 0; i < bytes; i++)
                    if (buf[i] != pattern(it, root, i)) {
                        data_errors++;
                        break;
                    }
                BcastState *b = llc::coll::bcast::state_of(st);
                sums[rank] = b->table.checksum();
                seqs[rank] = b->seq;
                if (b->table.version() != last_version) {
                    last_version = b->table.version();
                    if (rank == 0)
                        swaps_seen++;
                }
                net.barrier();
                if (rank == 0)
                    for (int r = 1; r < size; r++)
                        if (sums[r] != sums[0] || seqs[r] != seqs[0])
                            table_mismatch++;
                net.barrier();
            }
            if (rank == 0)
                decisions = llc::coll::bcast::state_of(st)->stats.decisions;
        },
        net);
    EXPECT_EQ(rc_errors.load(), 0);
    EXPECT_EQ(data_errors.load(), 0);
    EXPECT_EQ(table_mismatch.load(), 0);
    EXPECT_GT(decisions.load(), 5u) << "the optimizer must actually change the tables";
    RecordProperty("table_changes", static_cast<int>(decisions.load()));
    std::printf("[          ] %d broadcasts, %llu table changes\n", iters,
                static_cast<unsigned long long>(decisions.load()));
}

// Max-effect pattern: the first receiver (real 4 of 8) is loaded before every
// broadcast; the optimizer moves it to a leaf within a few rounds.
// DISABLED: in about 1 run of 6 the optimizer never moves the loaded rank
// (an open bug); re-enable when the optimizer converges reliably.
TEST(BcastThreads, LoadedFirstReceiverMovesToLeaf)
{
    Env env{{"LLC_BCAST", "vrank"}, {"LLC_BCAST_WEIGHT_I", "1"}, {"LLC_BCAST_MIN_GAP", "100e-6"}};
    const int size = 8;
    ThreadNet net(size);
    // count, over the last 50 broadcasts, those in which the loaded rank was
    // a leaf: the optimizer keeps exploring swaps, so require most, not all
    int leaf_rounds = 0;
    run_ranks(
        size,
        [&](int rank, llc_coll_state_t *st, const llc_coll_p2p_t *p2p) {
            // enough rounds and a load large against scheduling noise
            for (int k = 0; k < 150; k++) {
                net.barrier();
                if (rank == 4)
                    std::this_thread::sleep_for(std::chrono::microseconds(5000));
                int v = rank == 0 ? k : -1;
                llc_coll_bcast(st, p2p, &v, sizeof v, 0);
                if (rank == 4 && k >= 100) {
                    BcastState *b = llc::coll::bcast::state_of(st);
                    if (llc::coll::bcast::tree_nchildren(b->table.position(4, 0), size) == 0)
                        leaf_rounds++;
                }
            }
        },
        net);
    EXPECT_GE(leaf_rounds, 40) << "the loaded rank was a leaf in only " << leaf_rounds
                               << " of the last 50 broadcasts";
}

// Negative control for the consistency check: a rank whose table (or
// sequence number) diverged gets LLC_COLL_ERR_INCONSISTENT from the header
// check instead of silently running on another tree.
TEST(BcastThreads, HeaderCheckDetectsDivergedTable)
{
    Env env{{"LLC_BCAST", "vrank"}};
    const int size = 4;
    ThreadNet net(size);
    std::vector<int> rcs(size, -1);
    run_ranks(
        size,
        [&](int rank, llc_coll_state_t *st, const llc_coll_p2p_t *p2p) {
            int v = 5;
            llc_coll_bcast(st, p2p, &v, sizeof v, 0);  // creates the state
            if (rank == 3)  // rank 3 keeps its parent (2) but its table differs
                llc::coll::bcast::state_of(st)->table.swap(0, 1);
            rcs[rank] = llc_coll_bcast(st, p2p, &v, sizeof v, 0);
        },
        net);
    EXPECT_EQ(rcs[0], 0);
    EXPECT_EQ(rcs[1], 0);
    EXPECT_EQ(rcs[2], 0);
    EXPECT_EQ(rcs[3], LLC_COLL_ERR_INCONSISTENT);
}

// LLC_BCAST_REPORT_POLL=1 (default): the optimizer O (root 0) takes the
// reports that have arrived and never waits for the others.  Rank 7 (a
// leaf, so nobody waits for its data) stops after the first broadcast until
// O has finished all of them; with a waiting O (LLC_BCAST_REPORT_POLL=0)
// O would be stuck at its second optimization round and rank 7 would only
// go on after its 20 s timeout, failing the test instead of hanging it.
// Every byte of every broadcast is checked, and quiesce collects the
// late reports (no message is left queued).
TEST(BcastThreads, OptimizerNeverWaitsForALateReport)
{
    Env env{{"LLC_BCAST", "vrank"}, {"LLC_BCAST_MIN_GAP", "1"}, {"LLC_BCAST_REPORT_POLL", "1"}};
    const int size = 8, iters = 40;
    ThreadNet net(size);
    std::atomic<bool> o_done{false};
    bool released_by_o = false;
    std::atomic<int> bad{0};
    run_ranks(
        size,
        [&](int rank, llc_coll_state_t *st, const llc_coll_p2p_t *p2p) {
            for (int k = 0; k < iters; k++) {
                if (rank == 7 && k == 1) {
                    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
                    while (!o_done.load() && std::chrono::steady_clock::now() < deadline)
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    released_by_o = o_done.load();
                }
                std::vector<unsigned char> buf(64);
                for (size_t i = 0; i < buf.size(); i++)
                    buf[i] = rank == 0 ? pattern(k, 0, i) : 0;
                if (llc_coll_bcast(st, p2p, buf.data(), buf.size(), 0) != 0)
                    bad++;
                for (size_t i = 0; i < buf.size(); i++)
                    if (buf[i] != pattern(k, 0, i))
                        bad++;
            }
            if (rank == 0)
                o_done = true;
            EXPECT_EQ(llc_coll_state_quiesce(st, p2p), 0);
        },
        net);
    EXPECT_TRUE(released_by_o) << "O waited for the late rank's report";
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(net.pending(), 0u);
}
