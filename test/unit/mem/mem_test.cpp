// mem_test.cpp - llc_mem_report: the counters follow the real allocations.
#include "mem/mem_accounting.hpp"
#include "transport/shm/shm_segment.hpp"

#include "common/test_util.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

using namespace llctest;

namespace {

std::map<std::string, llc_mem_entry_t> report(llc_context_t *ctx)
{
    EXPECT_GT(llc_mem_report(ctx, nullptr, 0), 0);
    return mem_report(ctx);
}

struct Exchange {
    std::vector<int> got;    // messages received from each rank
    std::vector<int> expect; // messages we wait for from each rank, cumulative
};

void count_handler(llc_context_t *, void *arg, int src, const void *, size_t, const void *, size_t)
{
    static_cast<Exchange *>(arg)->got[size_t(src)]++;
}

// Send one small message to every rank in dests and wait for one from every
// rank in srcs.
void exchange(TestProcess &p, llc_context_t *ctx, Exchange &x, const std::vector<int> &dests,
              const std::vector<int> &srcs)
{
    char payload[100] = {};
    llc_iov_t iov{payload, sizeof(payload)};
    if (x.expect.empty())
        x.expect.assign(x.got.size(), 0);
    for (int s : srcs)
        x.expect[size_t(s)]++;
    for (int d : dests)
        ASSERT_EQ(llc_am_send(ctx, d, 1, nullptr, 0, &iov, 1, nullptr, nullptr), LLC_OK) << llc_last_error(ctx);
    ASSERT_TRUE(progress_until(ctx, [&] {
        for (int s : srcs)
            if (x.got[size_t(s)] < x.expect[size_t(s)])
                return false;
        return true;
    }));
    // Everyone has received everything, so every send has left its queue.
    ASSERT_EQ(TestProcess::fence(&p), 0);
    for (int i = 0; i < 20; i++)
        llc_progress(ctx, nullptr);
}

// Measure, then fence, so no peer starts the next round (and connects to us)
// before we have measured.
std::map<std::string, llc_mem_entry_t> report_then_fence(TestProcess &p, llc_context_t *ctx)
{
    auto r = report(ctx);
    EXPECT_EQ(TestProcess::fence(&p), 0);
    return r;
}

} // namespace

TEST(MemReport, SingleProcessCountsTablesAndNothingElse)
{
    JobOptions o = job({0});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        EXPECT_EQ(llc_mem_report(ctx, nullptr, -1), LLC_ERR_INVALID);
        EXPECT_EQ(llc_mem_report(nullptr, nullptr, 0), LLC_ERR_INVALID);
        auto r = report(ctx);
        EXPECT_EQ(r.size(), size_t(llc::MemComponent::Count));
        EXPECT_EQ(r["rank_table"].bytes, sizeof(int));
        EXPECT_EQ(r["seq_numbers"].items, 2u);
        EXPECT_EQ(r["seq_numbers"].bytes, 0u); // nothing sent: no page committed
        EXPECT_EQ(r["handler_table"].items, unsigned(LLC_AM_MAX_HANDLERS) + llc::kInternalHandlers); // the caller's and libllc's (tagged)
        EXPECT_TRUE(r["rank_table"].flags & LLC_MEM_N_SIZED);
        EXPECT_GT(r["context"].bytes, 0u);
        for (const char *none : {"tcp_rank_table", "tcp_conn_state", "tcp_buffers", "shm_segment", "shm_peer_state",
                                 "shm_rank_table", "send_queues", "udp_peer_table", "udp_peer_state", "udp_unacked",
                                 "udp_buffers", "hybrid_routes"})
            EXPECT_EQ(r[none].bytes, 0u) << none;
        EXPECT_STREQ(r["tcp_conn_state"].paper, "low-level contexts (QPs)");
        finalize_ok(ctx);
    });
}

TEST(MemReport, TablesScaleWithJobSize)
{
    JobOptions o = job({0, 1, 2, 3, 4, 5});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        auto r = report(ctx);
        EXPECT_EQ(r["rank_table"].bytes, 6 * sizeof(int)); // alone on its node: a private copy
        EXPECT_EQ(r["rank_table"].items, 6u);
        EXPECT_EQ(r["rank_table_mapped"].bytes, 0u);
        EXPECT_EQ(r["seq_numbers"].items, 2 * 6u);
        EXPECT_LE(r["seq_numbers"].bytes, 2 * uint64_t(sysconf(_SC_PAGESIZE)));
        // tcp: entries only for destinations sent to (none yet), not one per rank
        EXPECT_EQ(r["tcp_rank_table"].items, 0u);
        EXPECT_EQ(r["tcp_rank_table"].bytes, 0u);
        finalize_ok(ctx);
    });
}

namespace {
void count_self(llc_context_t *, void *arg, int, const void *, size_t, const void *, size_t)
{
    ++*static_cast<int *>(arg);
}
} // namespace

// A context of a job of 2^20 processes (only rank 0 exists; nothing is sent
// to the others): the n-sized tables are counted at their real size, and the
// sequence numbers commit pages only where used.
TEST(MemReport, MillionRankJobCountsTablesAndLazySequenceNumbers)
{
    const int size = 1 << 20;
    std::vector<int> nodes(size);
    for (int r = 0; r < size; r++)
        nodes[size_t(r)] = r;
    llc_init_params_t p = solo_params(nodes.data(), "mem-test-million");
    p.size = size; // rank 0 of 2^20: the others only have a node
    llc_context_t *ctx = nullptr;
    // One process playing rank 0 of 2^20: there are no other node leaders to
    // run a distributed KVS (LLC_KVS=dist would fail storing its entry).
    std::string saved_kvs = getenv("LLC_KVS") ? getenv("LLC_KVS") : "";
    setenv("LLC_KVS", "pmi", 1);
    int init_rc = llc_init(&p, &ctx);
    if (saved_kvs.empty())
        unsetenv("LLC_KVS");
    else
        setenv("LLC_KVS", saved_kvs.c_str(), 1);
    ASSERT_EQ(init_rc, LLC_OK) << llc_last_error(nullptr);
    auto r = report(ctx);
    const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
    EXPECT_EQ(r["rank_table"].bytes, uint64_t(size) * sizeof(int)); // alone on its node: private
    EXPECT_EQ(r["tcp_rank_table"].bytes, 0u);                        // no destination sent to
    EXPECT_EQ(r["seq_numbers"].items, 2u * size);
    EXPECT_EQ(r["seq_numbers"].bytes, 0u);
    EXPECT_EQ(r["shm_segment"].bytes, 0u);

    int got = 0;
    ASSERT_EQ(llc_am_register(ctx, 1, count_self, &got), LLC_OK);
    ASSERT_EQ(llc_am_send(ctx, 0, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
    ASSERT_TRUE(progress_until(ctx, [&] { return got == 1; }));
    r = report(ctx);
    EXPECT_EQ(r["seq_numbers"].bytes, 2 * page); // one page of each array: rank 0's entries
    EXPECT_LT(r["seq_numbers"].bytes, uint64_t(size) * 16 / 100);
    EXPECT_EQ(llc_finalize(ctx), LLC_OK) << llc_last_error(nullptr);
}

// After all-pairs traffic over tcp, tcp_conn_state holds exactly one OutConn
// (with its empty send queue) per destination and one InConn + StreamDecoder
// per source; it grows by that per-peer size as peers are added.
TEST(MemReport, TcpPerPeerStateGrowsByTheRealPerPeerSize)
{
    JobOptions o = job({0, 1, 2, 3});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}}; // addresses fit in the strings' inline buffers
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Exchange x;
        x.got.assign(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, 1, count_handler, &x), LLC_OK);

        const llc::MemWalk::StructSizes s = llc::MemWalk::struct_sizes();
        const uint64_t out_peer = s.tcp_out_conn + s.empty_deque_heap;
        const uint64_t in_peer = s.tcp_in_conn + s.stream_decoder;

        auto r0 = report_then_fence(p, ctx); // nobody sends before this fence
        EXPECT_EQ(r0["tcp_conn_state"].bytes, 0u);
        EXPECT_EQ(r0["tcp_conn_state"].items, 0u);

        // Round 1: a ring (r -> r+1).
        int next = (p.rank + 1) % p.size, prev = (p.rank + p.size - 1) % p.size;
        exchange(p, ctx, x, {next}, {prev});
        auto r1 = report_then_fence(p, ctx);
        EXPECT_EQ(r1["tcp_conn_state"].items, 2u);
        EXPECT_EQ(r1["tcp_conn_state"].bytes, out_peer + in_peer);
        EXPECT_EQ(r1["send_queues"].items, 0u);

        // Round 2: all pairs.
        std::vector<int> others;
        for (int r = 0; r < p.size; r++)
            if (r != p.rank)
                others.push_back(r);
        exchange(p, ctx, x, others, others);
        auto r2 = report_then_fence(p, ctx);
        uint64_t peers = uint64_t(p.size - 1);
        EXPECT_EQ(r2["tcp_conn_state"].items, 2 * peers);
        EXPECT_EQ(r2["tcp_conn_state"].bytes, peers * (out_peer + in_peer));
        EXPECT_EQ(r2["tcp_conn_state"].bytes - r1["tcp_conn_state"].bytes, (peers - 1) * (out_peer + in_peer));
        // rank -> connection: one hash node and list slot per destination sent to (plus the buckets)
        EXPECT_EQ(r0["tcp_rank_table"].items, 0u);
        EXPECT_EQ(r1["tcp_rank_table"].items, 1u);
        EXPECT_EQ(r2["tcp_rank_table"].items, peers);
        EXPECT_GE(r2["tcp_rank_table"].bytes, peers * (s.tcp_out_entry + s.pointer));
        EXPECT_LE(r2["tcp_rank_table"].bytes, peers * (s.tcp_out_entry + s.pointer) + 16 * s.pointer);
        EXPECT_GT(r2["tcp_buffers"].bytes, 0u); // staging buffer after the first read
        EXPECT_EQ(r2["shm_segment"].bytes, 0u);
        EXPECT_EQ(r2["udp_buffers"].bytes, 0u); // LLC_NET=tcp: no udp transport
        EXPECT_EQ(r2["hybrid_routes"].items, 0u);
        finalize_ok(ctx);
    });
}

// The shm segment component is the mapped size of the process's own segment,
// as the kernel shows it in /proc/self/maps.
TEST(MemReport, ShmSegmentIsItsMappedSize)
{
    JobOptions o = job({0, 0, 0});
    o.env = {{"LLC_SHM_RING_BYTES", "64k"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        Exchange x;
        x.got.assign(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, 1, count_handler, &x), LLC_OK);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        std::vector<int> others;
        for (int r = 0; r < p.size; r++)
            if (r != p.rank)
                others.push_back(r);
        exchange(p, ctx, x, others, others);

        auto r = report_then_fence(p, ctx);
        const llc::MemWalk::StructSizes s = llc::MemWalk::struct_sizes();
        uint64_t expect = s.segment_header + 3 * (s.ring_control + 64 * 1024);
        EXPECT_EQ(r["shm_segment"].bytes, expect);
        EXPECT_EQ(r["shm_segment"].items, 3u);
        EXPECT_EQ(r["shm_peer_mappings"].bytes, 2 * expect);
        EXPECT_TRUE(r["shm_peer_mappings"].flags & LLC_MEM_SHARED);
        EXPECT_EQ(r["shm_peer_state"].items, 2u);
        EXPECT_EQ(r["shm_rank_table"].items, 3u);

        // The kernel's view: the mapping of our own segment (name unlinked).
        std::string name = llc::ShmSegment::name_for(p.job_id, p.rank);
        std::ifstream maps("/proc/self/maps");
        std::string line;
        uint64_t mapped = 0;
        while (std::getline(maps, line)) {
            std::string path = "/dev/shm" + name;
            size_t at = line.find(path);
            if (at == std::string::npos)
                continue;
            size_t after = at + path.size();
            if (after != line.size() && line[after] != ' ')
                continue; // e.g. rank 1 versus rank 10
            unsigned long long lo = 0, hi = 0;
            std::sscanf(line.c_str(), "%llx-%llx", &lo, &hi);
            mapped += hi - lo;
        }
        uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
        EXPECT_EQ(mapped, (expect + page - 1) / page * page) << "segment " << name;

        uint64_t total = 0;
        for (auto &kv : r)
            if (!(kv.second.flags & LLC_MEM_SHARED))
                total += kv.second.bytes;
        EXPECT_GT(total, expect);
        finalize_ok(ctx);
    });
}

// LLC_MEM_REPORT=1: one line per component and a total, on stderr, at finalize.
TEST(MemReport, PrintedAtFinalizeWhenAsked)
{
    JobOptions o = job({0, 0, 1});
    o.env = {{"LLC_MEM_REPORT", "1"}, {"LLC_TCP_ADDR", "127.0.0.1"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        char path[] = "/tmp/llc-memreport-XXXXXX";
        int fd = mkstemp(path);
        ASSERT_GE(fd, 0);
        unlink(path);
        fflush(stderr);
        int saved = dup(2);
        dup2(fd, 2);
        int rc = llc_finalize(ctx);
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        EXPECT_EQ(rc, LLC_OK);
        std::string text(1 << 16, '\0');
        ssize_t n = pread(fd, &text[0], text.size(), 0);
        close(fd);
        ASSERT_GT(n, 0);
        text.resize(size_t(n));
        std::string prefix = "llc mem rank " + std::to_string(p.rank) + ": ";
        std::istringstream in(text);
        std::string line;
        int lines = 0, notes = 0;
        bool total = false;
        while (std::getline(in, line)) {
            EXPECT_EQ(line.rfind(prefix, 0), 0u) << line;
            lines++;
            total |= line.find(prefix + "total") == 0;
            notes += line.find(prefix + "note: rank -> node table") == 0;
        }
        // the components, the total, and a note saying where the rank table lives
        EXPECT_EQ(lines, int(llc::MemComponent::Count) + 2) << text;
        EXPECT_EQ(notes, 1);
        EXPECT_TRUE(total);
        // ranks 0 and 1 share node 0 (rank 0 created the table), rank 2 is alone on node 1
        const char *where = p.rank == 0 ? "created by this process" : p.rank == 1 ? "mapped read-only from node leader rank 0"
                                                                                  : "private to this process: alone on its node";
        EXPECT_NE(text.find(where), std::string::npos) << text;
        EXPECT_NE(text.find("shm_segment"), std::string::npos);
    });
}
