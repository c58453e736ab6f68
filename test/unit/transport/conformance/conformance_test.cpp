// conformance_test.cpp - the same checks against every transport of the
// table in transport_rows.hpp (self, shm, tcp, udp, hybrid): per-pair order
// and content of mixed sizes around every protocol threshold through active
// messages and tagged messages, 16 MiB messages both ways at once, the same
// traffic under injected loss, a peer dying in the middle of a stream, and
// the traffic of more peers than a per-peer cap, and two endpoints per
// process driven by two threads at once.  A check is instantiated
// for the rows that promise what it tests.
#include "transport/conformance/transport_rows.hpp"

#include "common/checked_messages.hpp"
#include "common/numbered_stream.hpp"
#include "common/test_util.hpp"
#include "core/settings_table.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <list>
#include <string>
#include <thread>
#include <vector>

using namespace llctest;

namespace {

// ------------------------------------------------------------ message sizes

// The payload sizes where some transport changes how it carries a message,
// read from the defaults of settings.def so that the edges follow them:
// copied at send time or not (LLC_COPY_MAX), tagged eager or request-to-send
// (LLC_TAG_EAGER_BYTES), ring or single copy (LLC_CMA_THRESHOLD), one udp
// datagram or several (LLC_UDP_MTU), within a shm ring or streamed through
// it in pieces (LLC_SHM_RING_BYTES); each one byte below, at and above.
const std::vector<size_t> &edge_sizes()
{
    static const std::vector<size_t> sizes = [] {
        std::vector<size_t> v{0, 1, size_t(1) << 20};
        for (llc::SettingId id :
             {llc::SettingId::LLC_COPY_MAX, llc::SettingId::LLC_TAG_EAGER_BYTES, llc::SettingId::LLC_CMA_THRESHOLD,
              llc::SettingId::LLC_UDP_MTU, llc::SettingId::LLC_SHM_RING_BYTES}) {
            const llc::settings::Setting &s = llc::setting(id);
            const auto value = llc::settings::parse(s, s.default_text);
            EXPECT_TRUE(value.has_value()) << s.name << "'s default " << s.default_text;
            const size_t t = value ? size_t(value->number) : 0;
            v.insert(v.end(), {t - 1, t, t + 1});
        }
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
        return v;
    }();
    return sizes;
}

// Message seq of a pair: every 8th one at an edge (each edge in turn, shifted
// per source), every 8th one log-uniform up to 1 MiB, the rest small (eager,
// copied, one datagram).
size_t mixed_size(uint32_t src, uint32_t seq)
{
    const uint64_t r = mix64((uint64_t(src) << 32) | seq);
    if (seq % 8 == 7) {
        const std::vector<size_t> &edges = edge_sizes();
        return edges[(seq / 8 + src) % edges.size()];
    }
    if (seq % 8 == 3)
        return (size_t(1) << (r % 20)) | (size_t(r >> 32) % (size_t(1) << (r % 20)));
    return size_t(r % 2048);
}

uint64_t conformance_seed(uint32_t src, uint32_t dst, uint32_t seq)
{
    return mix64((uint64_t(src) << 42) ^ (uint64_t(dst) << 21) ^ seq ^ 0xc0f0ull);
}

// 16 MiB and 16 MiB + 13 (an odd length: no transport's chunking divides it).
size_t large_size(uint32_t, uint32_t seq) { return (size_t(16) << 20) + (seq % 2 ? 13 : 0); }

constexpr unsigned kHandler = 9;
constexpr MessageShape kMixed{kHandler, mixed_size, conformance_seed};
constexpr MessageShape kLarge{kHandler, large_size, conformance_seed};

// Check 1's sizes with other bytes: the messages of a second endpoint, which
// would not pass as the first endpoint's.
uint64_t second_endpoint_seed(uint32_t src, uint32_t dst, uint32_t seq)
{
    return conformance_seed(src, dst, seq) ^ 0xe2d9'0b57'a4c3'1f68ull;
}
constexpr MessageShape kMixedOnSecondEndpoint{kHandler, mixed_size, second_endpoint_seed};

// ------------------------------------------------------------ who sends what

// Each sender sends per_pair messages to each of its destinations, `burst`
// to one before the next one's turn.
struct Plan {
    uint32_t per_pair;
    uint32_t burst;
    std::vector<int> (*destinations)(int rank, int size);
};

// Every other rank to rank 0 at once (a job of one: rank 0 to itself).
std::vector<int> to_rank_zero(int rank, int size)
{
    return size == 1 || rank != 0 ? std::vector<int>{0} : std::vector<int>{};
}

// Each rank to the next one (to itself in a job of one): both ways at once in a job of two.
std::vector<int> to_the_next(int rank, int size) { return {(rank + 1) % size}; }

std::vector<int> to_all_others(int rank, int size)
{
    std::vector<int> out;
    for (int k = 1; k < size; k++)
        out.push_back((rank + k) % size);
    return out;
}

// Every other rank, or itself in a job of one.
std::vector<int> to_all_others_or_self(int rank, int size)
{
    return size == 1 ? std::vector<int>{0} : to_all_others(rank, size);
}

int destination(const Plan &plan, const std::vector<int> &dests, uint32_t k)
{
    return dests[(k / plan.burst) % dests.size()];
}

uint32_t sends_of(const Plan &plan, const std::vector<int> &dests)
{
    EXPECT_EQ(plan.per_pair % plan.burst, 0u) << "the turns must give each destination per_pair messages";
    return plan.per_pair * uint32_t(dests.size());
}

// How many messages `me` is due from each rank.
std::vector<uint32_t> due_from(const Plan &plan, int me, int size)
{
    std::vector<uint32_t> due(size_t(size), 0);
    for (int src = 0; src < size; src++) {
        const std::vector<int> dests = plan.destinations(src, size);
        if (std::find(dests.begin(), dests.end(), me) != dests.end())
            due[size_t(src)] = plan.per_pair;
    }
    return due;
}

// ------------------------------------------------------------ the two APIs

// The plan's active messages: the numbered stream of StreamRun (which checks
// every arrival's order and bytes in its handler), until this process has
// all it is due and its sends are done.
void exchange_active_messages(StreamRun &run, const Plan &plan)
{
    const std::vector<int> dests = plan.destinations(run.p.rank, run.p.size);
    const uint32_t sends = sends_of(plan, dests);
    for (uint32_t k = 0; k < sends && !::testing::Test::HasFailure(); k++) {
        ASSERT_TRUE(progress_until(run.ctx, [&] {
            run.s.reap();
            return run.s.room();
        }));
        run.s.send(destination(plan, dests, k));
        ASSERT_TRUE(run.progress());
    }
    const std::vector<uint32_t> due = due_from(plan, run.p.rank, run.p.size);
    EXPECT_TRUE(progress_until(
        run.ctx,
        [&] {
            run.s.reap();
            return run.s.inflight.empty() && run.c.next == due;
        },
        60));
}

// The same traffic as tagged messages: message seq of a pair has the
// sender's rank as its label, seq as its tag, and the shape's size and
// bytes.  The receiver posts receives per source in order, any tag, kAhead
// before the arrivals (messages meet posted receives, and wait unexpected
// beyond them), each the size of the message it is due: the non-overtaking
// rule makes receive j of a source the match of its message j (a longer one
// would be truncated), which the tag says.
class TaggedExchange {
public:
    TaggedExchange(llc_context_t *ctx, int me, int size, const MessageShape &shape)
        : ctx_(ctx), me_(me), shape_(shape), recvs_(size_t(size)), sent_(size_t(size), 0), posted_(size_t(size), 0),
          checked_(size_t(size), 0)
    {
    }

    void run(const Plan &plan)
    {
        const int size = int(sent_.size());
        due_ = due_from(plan, me_, size);
        for (int src = 0; src < size; src++)
            post_ahead(src);
        const std::vector<int> dests = plan.destinations(me_, size);
        const uint32_t sends = sends_of(plan, dests);
        for (uint32_t k = 0; k < sends && bad_ == 0; k++) {
            ASSERT_TRUE(progress_until(ctx_, [&] {
                reap();
                return sends_.size() < kWindow;
            }));
            send(destination(plan, dests, k));
            ASSERT_EQ(llc_progress(ctx_, nullptr), LLC_OK) << llc_last_error(ctx_);
        }
        EXPECT_TRUE(progress_until(
            ctx_,
            [&] {
                reap();
                return (sends_.empty() && checked_ == due_) || bad_ > 0;
            },
            60))
            << state();
        EXPECT_EQ(bad_, 0u) << first_problem_;
        EXPECT_EQ(checked_, due_);
    }

private:
    static constexpr size_t kWindow = 64; // sends in flight
    static constexpr uint32_t kAhead = 8; // receives posted per source

    struct Op {
        std::vector<char> bytes;
        llc_treq_t req{};
        uint32_t seq = 0;
        bool done = false;
    };

    static void on_done(llc_treq_t *req) { static_cast<Op *>(req->user)->done = true; }

    void problem(const std::string &what)
    {
        if (bad_++ == 0)
            first_problem_ = "rank " + std::to_string(me_) + ": " + what;
    }

    // The call's result: complete at once, later (the callback), or an error.
    void started(Op &op, int rc, const char *call)
    {
        if (rc == LLC_OK)
            op.done = true;
        else if (rc != LLC_INPROGRESS)
            problem(std::string(call) + ": " + llc_strerror(rc) + ": " + llc_last_error(ctx_));
    }

    void send(int dst)
    {
        sends_.emplace_back();
        Op &op = sends_.back();
        op.seq = sent_[size_t(dst)]++;
        op.bytes.resize(shape_.size(uint32_t(me_), op.seq));
        fill_pattern(op.bytes.data(), op.bytes.size(), shape_.seed(uint32_t(me_), uint32_t(dst), op.seq));
        op.req.cb = on_done;
        op.req.user = &op;
        started(op, llc_tsend(ctx_, dst, uint32_t(me_), op.seq, op.bytes.data(), op.bytes.size(), 0, &op.req),
                "llc_tsend");
    }

    void post_ahead(int src)
    {
        std::list<Op> &posted = recvs_[size_t(src)];
        while (posted_[size_t(src)] < due_[size_t(src)] && posted.size() < kAhead) {
            posted.emplace_back();
            Op &op = posted.back();
            op.seq = posted_[size_t(src)]++;
            op.bytes.assign(shape_.size(uint32_t(src), op.seq), 0);
            op.req.cb = on_done;
            op.req.user = &op;
            started(op, llc_trecv(ctx_, src, 0, ~uint64_t(0), op.bytes.data(), op.bytes.size(), &op.req), "llc_trecv");
        }
    }

    void check(int src, const Op &op)
    {
        const llc_treq_t &r = op.req;
        const std::string which = "receive " + std::to_string(op.seq) + " from rank " + std::to_string(src);
        if (r.status != LLC_OK)
            problem(which + ": " + llc_strerror(r.status));
        else if (r.src_rank != src || r.source != uint32_t(src))
            problem(which + " matched a message of rank " + std::to_string(r.src_rank));
        else if (r.tag != op.seq)
            problem(which + " got message " + std::to_string(r.tag) + " (lost, duplicated or reordered)");
        else if (r.length != op.bytes.size() || r.received != op.bytes.size())
            problem(which + ": " + std::to_string(r.length) + " bytes sent, " + std::to_string(r.received) +
                    " received, " + std::to_string(op.bytes.size()) + " due");
        else if (!check_pattern(op.bytes.data(), op.bytes.size(), shape_.seed(uint32_t(src), uint32_t(me_), op.seq)))
            problem(which + " has wrong bytes");
    }

    // Check the receives that are done, in posting order per source, and post
    // the next ones; drop the finished sends (their status checked).
    void reap()
    {
        for (size_t src = 0; src < recvs_.size(); src++) {
            std::list<Op> &posted = recvs_[src];
            while (!posted.empty() && posted.front().done) {
                check(int(src), posted.front());
                checked_[src]++;
                posted.pop_front();
            }
            post_ahead(int(src));
        }
        while (!sends_.empty() && sends_.front().done) {
            if (sends_.front().req.status != LLC_OK)
                problem("send " + std::to_string(sends_.front().seq) + ": " + llc_strerror(sends_.front().req.status));
            sends_.pop_front();
        }
    }

    // What a wait that timed out leaves: per source the receives checked,
    // posted and due, the sends still in flight, and the counters of the
    // layers a message crosses.
    std::string state() const
    {
        std::string out = "rank " + std::to_string(me_) + ": sends in flight " + std::to_string(sends_.size());
        for (size_t src = 0; src < due_.size(); src++)
            out += "; from rank " + std::to_string(src) + ": checked " + std::to_string(checked_[src]) + ", posted " +
                   std::to_string(posted_[src]) + ", due " + std::to_string(due_[src]);
        for (const char *component : {"tagged", "hybrid", "udp", "tcp", "progress"})
            out += "\n  " + std::string(component) + ": " + component_counters(ctx_, component);
        return out;
    }

    llc_context_t *ctx_;
    int me_;
    const MessageShape &shape_;
    std::list<Op> sends_;
    std::vector<std::list<Op>> recvs_; // per source, in posting order
    std::vector<uint32_t> sent_, posted_, checked_, due_;
    unsigned long long bad_ = 0;
    std::string first_problem_;
};

// ------------------------------------------------------------ jobs of a row

JobOptions row_job(const TransportRow &row, std::vector<int> nodes, const Env &extra, unsigned timeout_s = 90)
{
    JobOptions o = job(std::move(nodes), timeout_s);
    o.env = joined(row.env, extra);
    return o;
}

// Each counter, summed over the job, is > 0: the row's transport (and the
// feature under test) carried the traffic.  Called after llc_finalize with
// the counters read before it: the sum meets in the test bootstrap's fence,
// where a process calls no llc_progress, and a udp sender must keep
// retransmitting until its receivers have everything (which finalize waits
// for).
void expect_counted(TestProcess &p, const llc_stats_t &st, const TransportRow &row,
                    const std::vector<StatCounter> &counters)
{
    for (const StatCounter &c : counters)
        EXPECT_GT(job_sum(p, c.name, st.*c.member), 0u) << row.name << ": " << c.name << " summed over the job";
}

llc_stats_t stats_of(llc_context_t *ctx)
{
    llc_stats_t st{};
    llc_get_stats(ctx, &st);
    return st;
}

enum class Api { ActiveMessages, Tagged };

// One job of the row: every process runs the plan's traffic in `shape`
// through `api` and finalizes, then the counters are checked.
void run_traffic_job(const TransportRow &row, const JobOptions &o, const MessageShape &shape, const Plan &plan, Api api,
                     std::vector<StatCounter> counters)
{
    counters = joined(row.path, counters);
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        llc_stats_t st{};
        if (api == Api::ActiveMessages) {
            StreamRun run(p, shape);
            ASSERT_TRUE(run.started());
            exchange_active_messages(run, plan);
            st = stats_of(run.ctx);
            run.finish(); // also: every source's count after finalize
        } else {
            llc_context_t *ctx = init_or_fail(p);
            ASSERT_NE(ctx, nullptr);
            TaggedExchange(ctx, p.rank, p.size, shape).run(plan);
            st = stats_of(ctx);
            finalize_ok(ctx);
        }
        expect_counted(p, st, row, counters);
    });
}

const char *api_name(Api api) { return api == Api::ActiveMessages ? "ActiveMessages" : "Tagged"; }

std::string row_name(const ::testing::TestParamInfo<TransportRow> &info) { return info.param.name; }

// Check 1's traffic (also check 3's): thousands of messages, 1000 from each
// of the two senders to rank 0 at once (self: 1000 to itself); `extra`
// added to the row's settings, `counters` to its path and busy counters.
void run_many_to_one(const TransportRow &row, const Env &extra, Api api, std::vector<StatCounter> counters = {})
{
    SCOPED_TRACE(api_name(api));
    run_traffic_job(row, row_job(row, row.nodes, extra), kMixed, Plan{1000, 1, to_rank_zero}, api,
                    joined(row.busy, counters));
}

// Check 2: one 16 MiB and one 16 MiB + 13 message from each of the row's
// first two ranks to the other at once (self: to itself).
void run_large(const TransportRow &row, Api api)
{
    SCOPED_TRACE(api_name(api));
    const std::vector<int> two(row.nodes.begin(), row.nodes.begin() + std::min<size_t>(2, row.nodes.size()));
    run_traffic_job(row, row_job(row, two, {}), kLarge, Plan{2, 1, to_the_next}, api, {});
}

// Check 5: five ranks on five nodes with room for two peers' state; each
// rank sends check 1's messages to all four others in turns of 16 (128 to
// each), so that per-peer state is evicted and re-created under the traffic.
void run_cap(const TransportRow &row, Api api)
{
    SCOPED_TRACE(api_name(api));
    run_traffic_job(row, row_job(row, {0, 1, 2, 3, 4}, row.cap->cap), kMixed, Plan{128, 16, to_all_others}, api,
                    {row.cap->evicted});
}

} // namespace

// ------------------------------------------------------------ 1. ordering

class TransportOrdering : public ::testing::TestWithParam<TransportRow> {};

TEST_P(TransportOrdering, ActiveMessagesManyToOne) { run_many_to_one(GetParam(), {}, Api::ActiveMessages); }

TEST_P(TransportOrdering, TaggedManyToOne) { run_many_to_one(GetParam(), {}, Api::Tagged); }

INSTANTIATE_TEST_SUITE_P(Conformance, TransportOrdering,
                         ::testing::ValuesIn(rows_where([](const TransportRow &r) { return r.ordered; })), row_name);

// ------------------------------------------------------------ 2. large messages

// 16 MiB messages arrive whole, byte-exact, both ways at once (run_large).
class TransportLargeMessages : public ::testing::TestWithParam<TransportRow> {};

TEST_P(TransportLargeMessages, ActiveMessagesBothWaysAtOnce) { run_large(GetParam(), Api::ActiveMessages); }

TEST_P(TransportLargeMessages, TaggedBothWaysAtOnce) { run_large(GetParam(), Api::Tagged); }

INSTANTIATE_TEST_SUITE_P(Conformance, TransportLargeMessages, ::testing::ValuesIn(transport_rows()), row_name);

// ------------------------------------------------------------ 3. loss

// Check 1's traffic with the row's loss injected: still complete and in
// order, and datagrams were indeed dropped.
class TransportLoss : public ::testing::TestWithParam<TransportRow> {};

TEST_P(TransportLoss, ActiveMessagesManyToOne)
{
    run_many_to_one(GetParam(), GetParam().loss->inject, Api::ActiveMessages, {GetParam().loss->injected});
}

TEST_P(TransportLoss, TaggedManyToOne)
{
    run_many_to_one(GetParam(), GetParam().loss->inject, Api::Tagged, {GetParam().loss->injected});
}

INSTANTIATE_TEST_SUITE_P(Conformance, TransportLoss,
                         ::testing::ValuesIn(rows_where([](const TransportRow &r) { return r.loss.has_value(); })),
                         row_name);

// ------------------------------------------------------------ 4. peer death

// Rank 0 streams check 1's messages to rank 1, which reads kReadBeforeDying
// of them and exits without llc_finalize.  Rank 0's sends or progress must
// fail with LLC_ERR_PEER naming rank 1 and the row's mechanism, within the
// row's bound after the death (and not before it); every send in progress
// then completes, a new send fails at once, and llc_finalize returns.
class TransportPeerDeath : public ::testing::TestWithParam<TransportRow> {};

TEST_P(TransportPeerDeath, StreamToADyingPeerEndsInAnError)
{
    const TransportRow &row = GetParam();
    const DeathPromise &death = *row.death;
    constexpr uint32_t kReadBeforeDying = 100;
    constexpr uint32_t kMaxSends = 3000;       // far more than rank 1 reads
    constexpr unsigned long long kWindow = 64; // sends in flight
    JobOptions o = row_job(row, {row.nodes[0], row.nodes[1]}, death.env, 60);
    LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
        CheckedRun run(p, kMixed);
        ASSERT_TRUE(run.started());
        if (p.rank == 1) {
            EXPECT_TRUE(progress_until(run.ctx, [&] { return run.in.next_seq[0] >= kReadBeforeDying; }));
            EXPECT_EQ(run.in.bad, 0u) << run.in.first_problem;
            const double died_at = now_s();
            EXPECT_EQ(TestProcess::put(&p, "died_at", &died_at, sizeof(died_at)), 0);
            p.depart();
            std::fflush(stderr);
            _exit(::testing::Test::HasFailure() ? 1 : 0); // no llc_finalize
        }
        int err = LLC_OK;
        const double start = now_s();
        while (err >= LLC_OK && now_s() - start < 20) {
            if (run.out.next_seq[1] < kMaxSends && run.out.callbacks_owed - run.out.callbacks < kWindow)
                err = send_one(run.ctx, run.out, 0, 1);
            if (err >= LLC_OK)
                err = llc_progress(run.ctx, nullptr);
        }
        const double failed_at = now_s();
        const std::string why = llc_last_error(run.ctx);
        ASSERT_EQ(err, LLC_ERR_PEER) << "after " << failed_at - start << " s: " << why;
        EXPECT_TRUE(contains(why, "rank 1")) << why;
        EXPECT_TRUE(std::any_of(death.reasons.begin(), death.reasons.end(), [&](const std::string &r) {
            return contains(why, r);
        })) << why;
        double died_at = 0;
        size_t len = sizeof(died_at);
        ASSERT_EQ(TestProcess::get(&p, 1, "died_at", &died_at, &len), 0);
        EXPECT_GT(failed_at, died_at) << "LLC_ERR_PEER while rank 1 was alive: " << why;
        EXPECT_LT(failed_at - died_at, death.within_s) << why;
        std::fprintf(stderr, "%s: %u messages sent, LLC_ERR_PEER %.3f s after the death: %s\n", row.name,
                     run.out.next_seq[1], failed_at - died_at, why.c_str());
        // The sends still in progress complete (with the error where undelivered).
        const double end = now_s() + 2;
        while (run.out.callbacks < run.out.callbacks_owed && now_s() < end)
            llc_progress(run.ctx, nullptr);
        EXPECT_EQ(run.out.callbacks, run.out.callbacks_owed);
        EXPECT_EQ(send_one(run.ctx, run.out, 0, 1), LLC_ERR_PEER) << llc_last_error(run.ctx);
        const double fin = now_s();
        llc_finalize(run.ctx); // may report the dead peer again; must not hang
        EXPECT_LT(now_s() - fin, 5.0);
    });
}

INSTANTIATE_TEST_SUITE_P(Conformance, TransportPeerDeath,
                         ::testing::ValuesIn(rows_where([](const TransportRow &r) { return r.death.has_value(); })),
                         row_name);

// ------------------------------------------------------------ 5. caps

// More peers than the row's cap (run_cap): state is evicted (counted) and
// every message still arrives, in order, with its bytes.
class TransportCap : public ::testing::TestWithParam<TransportRow> {};

TEST_P(TransportCap, ActiveMessagesAllToAllInTurns) { run_cap(GetParam(), Api::ActiveMessages); }

TEST_P(TransportCap, TaggedAllToAllInTurns) { run_cap(GetParam(), Api::Tagged); }

INSTANTIATE_TEST_SUITE_P(Conformance, TransportCap,
                         ::testing::ValuesIn(rows_where([](const TransportRow &r) { return r.cap.has_value(); })),
                         row_name);

// ------------------------------------------------------------ 6. endpoints

// Two endpoints per process (llc_init_params_t.endpoint 0 and 1), each
// driven by its own thread at once, as MPI's per-VCI threads do: every rank
// sends 300 tagged messages of check 1's sizes to each other rank on both
// endpoints.  Each endpoint receives exactly its own messages (the other's
// bytes differ), every one, in order; the row's transport carried the
// second endpoint's; both finalize, the second first.
class TransportEndpoints : public ::testing::TestWithParam<TransportRow> {};

TEST_P(TransportEndpoints, TwoEndpointsDrivenByTwoThreadsAtOnce)
{
    const TransportRow &row = GetParam();
    LLC_EXPECT_JOB_OK(row_job(row, row.nodes, {}), [&](TestProcess &p) {
        const MessageShape *shapes[2] = {&kMixed, &kMixedOnSecondEndpoint};
        llc_context_t *ctx[2] = {nullptr, nullptr};
        for (int e = 0; e < 2; e++) { // llc_init is collective: one endpoint after the other
            llc_init_params_t params = p.params();
            params.endpoint = e;
            ASSERT_EQ(llc_init(&params, &ctx[e]), LLC_OK) << "endpoint " << e << ": " << llc_last_error(nullptr);
            EXPECT_EQ(llc_rank(ctx[e]), p.rank);
        }
        const Plan plan{300, 4, to_all_others_or_self};
        // A driver whose exchange is done keeps its endpoint progressed until
        // the other's is done too, as MPI's progress polls every VCI: a peer
        // may still wait for an acknowledgement from it (a lost one is
        // answered only by a progressed endpoint).
        std::atomic<int> running{2};
        std::vector<std::thread> drivers;
        for (int e = 0; e < 2; e++)
            drivers.emplace_back([&, e] {
                TaggedExchange(ctx[e], p.rank, p.size, *shapes[e]).run(plan);
                running--;
                while (running.load() > 0)
                    if (llc_progress(ctx[e], nullptr) < LLC_OK) {
                        ADD_FAILURE() << "endpoint " << e << " after its exchange: " << llc_last_error(ctx[e]);
                        break;
                    }
            });
        for (std::thread &t : drivers)
            t.join();
        const llc_stats_t st = stats_of(ctx[1]);
        // Together, as MPI's finalize does: sends the exchange saw complete
        // may still wait for their endpoint's progress (held while the
        // hybrid changes a route), and a peer waits for them before it
        // finalizes; finalizing endpoint 1 by itself would not progress 0.
        llc_context_t *const last_made_first[2] = {ctx[1], ctx[0]};
        EXPECT_EQ(llc_finalize_all(last_made_first, 2), LLC_OK) << llc_last_error(nullptr);
        expect_counted(p, st, row, row.path);
    });
}

INSTANTIATE_TEST_SUITE_P(Conformance, TransportEndpoints, ::testing::ValuesIn(transport_rows()), row_name);
