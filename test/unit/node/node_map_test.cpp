// node_map_test.cpp - the rank -> node table held once per node: the leader's
// read-only shared segment, its lifecycle, the private fallback, and that no
// per-process table grows with the job size.
#include "core/errors.hpp"
#include "mem/mem_accounting.hpp"
#include "node/node_map.hpp"
#include "node/node_map_segment.hpp"

#include "common/test_util.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>

using namespace llctest;

namespace {

uint64_t private_total(const std::map<std::string, llc_mem_entry_t> &r)
{
    uint64_t total = 0;
    for (const auto &kv : r)
        if (!(kv.second.flags & LLC_MEM_SHARED))
            total += kv.second.bytes;
    return total;
}

bool shm_name_exists(const std::string &name) { return access(("/dev/shm" + name).c_str(), F_OK) == 0; }

// This process's mapping of a /dev/shm segment (the name may be unlinked).
struct SegmentMapping {
    bool found = false;
    uintptr_t start = 0;
    std::string perms;
};
SegmentMapping find_mapping(const std::string &name)
{
    SegmentMapping m;
    std::ifstream maps("/proc/self/maps");
    std::string line, path = "/dev/shm" + name;
    while (std::getline(maps, line)) {
        size_t at = line.find(path);
        if (at == std::string::npos)
            continue;
        size_t after = at + path.size();
        if (after != line.size() && line[after] != ' ')
            continue; // node1 versus node10
        unsigned long long lo = 0, hi = 0;
        char perms[8] = {};
        if (std::sscanf(line.c_str(), "%llx-%llx %7s", &lo, &hi, perms) != 3)
            continue;
        m.found = true;
        m.start = uintptr_t(lo);
        m.perms = perms;
        return m;
    }
    return m;
}

// In a forked child: write one int at addr.  True if the child died of SIGSEGV.
bool write_faults(uintptr_t addr)
{
    std::fflush(stdout);
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);
        *reinterpret_cast<volatile int *>(addr) = 12345;
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

void count_handler(llc_context_t *, void *arg, int, const void *, size_t, const void *, size_t)
{
    ++*static_cast<int *>(arg);
}

// Every process sends one message to every rank in `to` and waits for one from every rank in `from`.
void exchange(TestProcess &p, llc_context_t *ctx, const std::vector<int> &to, int expect)
{
    int got = 0;
    ASSERT_EQ(llc_am_register(ctx, 3, count_handler, &got), LLC_OK);
    ASSERT_EQ(TestProcess::fence(&p), 0);
    for (int d : to)
        ASSERT_EQ(llc_am_send(ctx, d, 3, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK) << llc_last_error(ctx);
    ASSERT_TRUE(progress_until(ctx, [&] { return got == expect; }));
    ASSERT_EQ(TestProcess::fence(&p), 0);
}

} // namespace

// 5 processes on 2 nodes: every process sees the caller's map; the leader of
// each node (ranks 0 and 3) counts the node's table once, the others count 0
// and show the leader's segment as a shared mapping; every mapping of it is
// read-only; its name is gone once llc_init has returned everywhere.
TEST(NodeMap, ProcessesOfANodeShareTheLeadersReadOnlyTable)
{
    JobOptions o = job({0, 0, 0, 1, 1});
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        for (int r = 0; r < p.size; r++)
            EXPECT_EQ(llc_node_of(ctx, r), p.nodes[size_t(r)]) << "rank " << r;
        ASSERT_EQ(TestProcess::fence(&p), 0); // every leader is past its unlink
        const std::string name = llc::NodeMapSegment::name_for(p.job_id, p.nodes[size_t(p.rank)]);
        EXPECT_FALSE(shm_name_exists(name)) << name;

        const bool leader = p.rank == 0 || p.rank == 3;
        const uint64_t table = llc::NodeMapSegment::bytes_for(p.size);
        auto r = mem_report(ctx);
        EXPECT_EQ(r["rank_table"].items, uint64_t(p.size));
        EXPECT_EQ(r["rank_table"].bytes, leader ? table : 0u);
        EXPECT_EQ(r["rank_table_mapped"].bytes, leader ? 0u : table);
        EXPECT_TRUE(r["rank_table_mapped"].flags & LLC_MEM_SHARED);
        EXPECT_FALSE(r["rank_table"].flags & LLC_MEM_SHARED);

        SegmentMapping m = find_mapping(name);
        ASSERT_TRUE(m.found) << name << " is not mapped in rank " << p.rank;
        EXPECT_EQ(m.perms, "r--s") << "rank " << p.rank;

        // The transports still find their peers: all pairs, shm and tcp.
        std::vector<int> everyone;
        for (int d = 0; d < p.size; d++)
            everyone.push_back(d);
        exchange(p, ctx, everyone, p.size);
        finalize_ok(ctx);
        EXPECT_FALSE(shm_name_exists(name));
    });
}

// Writing through the table faults, in the leader (mprotect after filling)
// and in the others (mapped PROT_READ); the table keeps its content.
TEST(NodeMap, WritingThroughTheSharedTableFaults)
{
    JobOptions o = job({0, 0});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        SegmentMapping m = find_mapping(llc::NodeMapSegment::name_for(p.job_id, 0));
        ASSERT_TRUE(m.found);
        uintptr_t entry_of_rank_1 = m.start + llc::NodeMapSegment::bytes_for(0) + sizeof(int);
        EXPECT_EQ(*reinterpret_cast<const int *>(entry_of_rank_1), 0); // really the table
        EXPECT_TRUE(write_faults(entry_of_rank_1)) << "rank " << p.rank << " could write the shared table";
        EXPECT_EQ(llc_node_of(ctx, 1), 0);
        finalize_ok(ctx);
    });
}

// LLC_NODE_SHARED=0: every process keeps a private copy (counted by each), no
// segment is mapped, and the shm transport works as before.
TEST(NodeMap, DisabledByEnvironmentKeepsPrivateCopies)
{
    JobOptions o = job({0, 0, 1});
    o.env = {{"LLC_NODE_SHARED", "0"}, {"LLC_TCP_ADDR", "127.0.0.1"}};
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        auto r = mem_report(ctx);
        EXPECT_EQ(r["rank_table"].bytes, 3 * sizeof(int));
        EXPECT_EQ(r["rank_table_mapped"].bytes, 0u);
        EXPECT_FALSE(find_mapping(llc::NodeMapSegment::name_for(p.job_id, p.nodes[size_t(p.rank)])).found);
        for (int q = 0; q < p.size; q++)
            EXPECT_EQ(llc_node_of(ctx, q), p.nodes[size_t(q)]);
        exchange(p, ctx, {0, 1, 2}, 3);
        finalize_ok(ctx);
    });
}

// The leader does not share (LLC_NODE_SHARED=0 in its environment only): the
// others find no segment and fall back to private copies; init succeeds.
TEST(NodeMap, LeaderWithoutSharingLeavesTheOthersPrivateCopies)
{
    JobOptions o = job({0, 0, 0});
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        if (p.rank == 0)
            setenv("LLC_NODE_SHARED", "0", 1);
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        auto r = mem_report(ctx);
        EXPECT_EQ(r["rank_table"].bytes, 3 * sizeof(int));
        EXPECT_EQ(r["rank_table_mapped"].bytes, 0u);
        exchange(p, ctx, {0, 1, 2}, 3);
        finalize_ok(ctx);
    });
}

// The NodeMap and its segment in one process: the leader creates, another
// maps and reads the same content, the name goes away on release_name while
// the mappings stay valid; the reasons for private copies are stated.
TEST(NodeMap, LeaderCreatesOthersMapThenTheNameIsReleased)
{
    const std::string job = "node-map-unit-" + std::to_string(getpid());
    const std::vector<int> map = {0, 0, 1, 0, 1};
    llc::NodeMap leader(map.data(), 5, 0, job, true);
    EXPECT_EQ(leader.storage(), llc::NodeMap::Storage::SharedCreated);
    EXPECT_EQ(leader.processes_on_node(), 3);
    const std::string name = llc::NodeMapSegment::name_for(job, 0);
    EXPECT_TRUE(shm_name_exists(name));

    llc::NodeMap other(map.data(), 5, 3, job, true);
    EXPECT_EQ(other.leader(), 0);
    other.attach();
    EXPECT_EQ(other.storage(), llc::NodeMap::Storage::SharedMapped);
    EXPECT_EQ(other.private_bytes(), 0u);
    EXPECT_EQ(other.created_bytes(), 0u);
    EXPECT_EQ(other.mapped_bytes(), llc::NodeMapSegment::bytes_for(5));
    EXPECT_EQ(leader.created_bytes(), llc::NodeMapSegment::bytes_for(5));

    leader.release_name();
    EXPECT_FALSE(shm_name_exists(name));
    for (int r = 0; r < 5; r++) {
        EXPECT_EQ(leader.node_of(r), map[size_t(r)]);
        EXPECT_EQ(other.node_of(r), map[size_t(r)]);
    }
    EXPECT_NE(other.describe().find("mapped read-only from node leader rank 0"), std::string::npos)
        << other.describe();

    // A process arriving after the release finds nothing and keeps a copy.
    llc::NodeMap late(map.data(), 5, 1, job, true);
    late.attach();
    EXPECT_EQ(late.storage(), llc::NodeMap::Storage::Private);
    EXPECT_NE(late.private_reason().find("could not be mapped"), std::string::npos) << late.private_reason();
    EXPECT_EQ(late.private_bytes(), 5 * sizeof(int));
    EXPECT_EQ(late.node_of(4), 1);

    llc::NodeMap node1_leader(map.data(), 5, 2, job, true); // node 1: ranks 2 and 4
    EXPECT_EQ(node1_leader.storage(), llc::NodeMap::Storage::SharedCreated);
    const std::vector<int> spread = {0, 1, 2};
    llc::NodeMap single(spread.data(), 3, 1, job, true);
    EXPECT_EQ(single.storage(), llc::NodeMap::Storage::Private);
    EXPECT_EQ(single.private_reason(), "alone on its node");
}

// Destroying the creator before release_name (a failed init) removes the name too.
TEST(NodeMap, CreatorRemovesTheNameWhenDestroyed)
{
    const std::string job = "node-map-unit-destroy-" + std::to_string(getpid());
    const std::vector<int> map = {7, 7};
    const std::string name = llc::NodeMapSegment::name_for(job, 7);
    {
        llc::NodeMap leader(map.data(), 2, 0, job, true);
        ASSERT_EQ(leader.storage(), llc::NodeMap::Storage::SharedCreated);
        EXPECT_TRUE(shm_name_exists(name));
    }
    EXPECT_FALSE(shm_name_exists(name));
}

// A stale segment of the same name (a crashed job with the same id) is replaced.
TEST(NodeMap, StaleSegmentIsReplaced)
{
    const std::string job = "node-map-unit-stale-" + std::to_string(getpid());
    const std::string name = llc::NodeMapSegment::name_for(job, 0);
    int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, 4096), 0);
    close(fd);
    const std::vector<int> map = {0, 0, 0};
    llc::NodeMap leader(map.data(), 3, 0, job, true);
    EXPECT_EQ(leader.storage(), llc::NodeMap::Storage::SharedCreated);
    llc::NodeMap other(map.data(), 3, 2, job, true);
    other.attach();
    EXPECT_EQ(other.storage(), llc::NodeMap::Storage::SharedMapped);
    leader.release_name();
    EXPECT_FALSE(shm_name_exists(name));
}

// A process given another map than its node leader: llc_init's check fails.
TEST(NodeMap, DifferentMapThanTheLeaderIsAnError)
{
    const std::string job = "node-map-unit-differ-" + std::to_string(getpid());
    const std::vector<int> leaders_map = {0, 0, 1, 1};
    const std::vector<int> other_map = {0, 0, 1, 2};
    llc::NodeMap leader(leaders_map.data(), 4, 0, job, true);
    llc::NodeMap other(other_map.data(), 4, 1, job, true);
    try {
        other.attach();
        ADD_FAILURE() << "attach accepted a different map";
    } catch (const llc::Error &e) {
        EXPECT_EQ(e.status(), LLC_ERR_INVALID);
        EXPECT_NE(std::string(e.what()).find("different rank -> node map"), std::string::npos) << e.what();
    }
}

namespace {
// Two processes (ranks 0 and 1, node 0) of a job of `size` ranks, the others
// on other nodes and never started; each writes its memory report's
// rank_table, rank_table_mapped, shm_rank_table, tcp_rank_table and private
// total into out[rank * 5 ..].
void measure_two_of(int size, bool shared, uint64_t *out)
{
    std::vector<int> nodes(static_cast<size_t>(size));
    for (int r = 2; r < size; r++)
        nodes[size_t(r)] = 1 + (r - 2) / 4;
    JobOptions o = job(nodes);
    o.processes = 2;
    o.env = {{"LLC_KVS", "pmi"}, {"LLC_NET", "tcp"}, {"LLC_TCP_ADDR", "127.0.0.1"},
             {"LLC_NODE_SHARED", shared ? "1" : "0"}};
    LLC_EXPECT_JOB_OK(o, [out](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        exchange(p, ctx, {0, 1}, 2); // shm both ways, and a self-send
        auto r = mem_report(ctx);
        uint64_t *mine = out + 5 * p.rank;
        mine[0] = r["rank_table"].bytes;
        mine[1] = r["rank_table_mapped"].bytes;
        mine[2] = r["shm_rank_table"].bytes;
        mine[3] = r["tcp_rank_table"].bytes;
        mine[4] = private_total(r);
        p.depart(); // the other ranks never come: no collective finalize
        std::fflush(stderr);
        _exit(::testing::Test::HasFailure() ? 1 : 0);
    });
}
} // namespace

// A job of 2^20 ranks, two of them on node 0: the per-process tables of shm
// and tcp are the same as in a job of 6 ranks, the non-leader's private bytes
// do not grow with n, and the leader counts the node's table (4 n) once.
// With LLC_NODE_SHARED=0 the non-leader pays the 4 n itself.
TEST(NodeMap, MillionRankJobPerProcessTablesDoNotGrowWithN)
{
    const int big = 1 << 20, small = 6;
    void *mem = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(mem, MAP_FAILED);
    auto *v = static_cast<uint64_t *>(mem);
    uint64_t *at_small = v, *at_big = v + 10, *at_big_private = v + 20;
    measure_two_of(small, true, at_small);
    measure_two_of(big, true, at_big);
    measure_two_of(big, false, at_big_private);
    const uint64_t table = llc::NodeMapSegment::bytes_for(big);
    // leader (rank 0) and the other (rank 1): the shared table once
    EXPECT_EQ(at_big[0], table);
    EXPECT_EQ(at_big[1], 0u);
    EXPECT_EQ(at_big[5 + 0], 0u);
    EXPECT_EQ(at_big[5 + 1], table);
    for (int rank = 0; rank < 2; rank++) {
        const uint64_t *s = at_small + 5 * rank, *b = at_big + 5 * rank;
        EXPECT_EQ(b[2], s[2]) << "shm_rank_table of rank " << rank << " grew with n";
        EXPECT_EQ(b[3], s[3]) << "tcp_rank_table of rank " << rank << " grew with n";
        EXPECT_GT(b[2], 0u);
    }
    // the non-leader's private bytes: equal up to noise far below 4 n
    const uint64_t other_small = at_small[5 + 4], other_big = at_big[5 + 4];
    EXPECT_LT(other_big > other_small ? other_big - other_small : other_small - other_big, 4096u)
        << "small " << other_small << " big " << other_big;
    // the leader's grow by the table's growth (and a few bytes of job id text at most)
    const uint64_t growth = table - llc::NodeMapSegment::bytes_for(small);
    EXPECT_GE(at_big[4] - at_small[4], growth);
    EXPECT_LT(at_big[4] - at_small[4], growth + 256);
    // private copies: the non-leader pays 4 n
    EXPECT_EQ(at_big_private[5 + 0], uint64_t(big) * sizeof(int));
    EXPECT_GE(at_big_private[5 + 4], other_big + uint64_t(big) * sizeof(int) - 4096);
    munmap(mem, 4096);
}
