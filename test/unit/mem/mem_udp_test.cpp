// mem_udp_test.cpp - llc_mem_report over the udp transport (DC-class) and the
// hybrid layer: the rows follow the real per-peer state, the datagrams in
// flight and the routes; the container sizes the walk relies on match what
// the allocator is asked for; the udp memory model uses the udp sizes.
#include "wire/am_protocol.hpp"
#include "mem/mem_accounting.hpp"
#include "mem_model.hpp"

#include "common/test_util.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

using namespace llctest;

namespace {

// ------------------------------------------------------- container sizes

// Counts the bytes the containers ask for (all instances share the count).
struct AllocCount {
    static inline uint64_t live = 0;
};

template <class T> struct CountingAlloc {
    using value_type = T;
    CountingAlloc() = default;
    template <class U> CountingAlloc(const CountingAlloc<U> &) {}
    T *allocate(size_t n)
    {
        AllocCount::live += n * sizeof(T);
        return std::allocator<T>().allocate(n);
    }
    void deallocate(T *p, size_t n)
    {
        AllocCount::live -= n * sizeof(T);
        std::allocator<T>().deallocate(p, n);
    }
    template <class U> bool operator==(const CountingAlloc<U> &) const { return true; }
    template <class U> bool operator!=(const CountingAlloc<U> &) const { return false; }
};

struct Big {
    char bytes[200];
};

} // namespace

// heap_bytes() of the hash map (udp peers, hybrid routes) and of the ordered
// map (udp out-of-order datagrams) is what the allocator handed out.
TEST(MemHeapBytes, HashAndOrderedMapsMatchTheAllocator)
{
    using Peers = std::unordered_map<int, std::unique_ptr<Big>, std::hash<int>, std::equal_to<int>,
                                     CountingAlloc<std::pair<const int, std::unique_ptr<Big>>>>;
    using Routes =
        std::unordered_map<int, Big, std::hash<int>, std::equal_to<int>, CountingAlloc<std::pair<const int, Big>>>;
    using Early = std::map<uint64_t, std::vector<char>, std::less<uint64_t>,
                           CountingAlloc<std::pair<const uint64_t, std::vector<char>>>>;
    {
        Peers peers;
        EXPECT_EQ(llc::heap_bytes(peers), 0u);
        EXPECT_EQ(AllocCount::live, 0u);
        for (int i = 0; i < 1000; i++) {
            peers.emplace(i * 7919, nullptr);
            ASSERT_EQ(llc::heap_bytes(peers), AllocCount::live) << i + 1 << " entries";
        }
        for (int i = 0; i < 500; i++)
            peers.erase(i * 7919);
        EXPECT_EQ(llc::heap_bytes(peers), AllocCount::live);
    }
    EXPECT_EQ(AllocCount::live, 0u);
    {
        Routes routes;
        for (int i = 0; i < 100; i++) {
            routes[i];
            ASSERT_EQ(llc::heap_bytes(routes), AllocCount::live) << i + 1 << " entries";
        }
    }
    EXPECT_EQ(AllocCount::live, 0u);
    {
        Early early;
        EXPECT_EQ(llc::heap_bytes(early), 0u);
        for (uint64_t psn = 0; psn < 64; psn++) {
            early.emplace(psn * 3, std::vector<char>(100)); // the vector's own bytes use std::allocator
            ASSERT_EQ(llc::heap_bytes(early), AllocCount::live) << psn + 1 << " entries";
        }
    }
    EXPECT_EQ(AllocCount::live, 0u);
}

namespace {

// ------------------------------------------------------------- helpers

std::map<std::string, llc_mem_entry_t> report(llc_context_t *ctx)
{
    EXPECT_EQ(llc_mem_report(ctx, nullptr, 0), int(llc::MemComponent::Count));
    return mem_report(ctx);
}

uint64_t row_bytes(llc_context_t *ctx, const char *name) { return report(ctx)[name].bytes; }
uint64_t row_items(llc_context_t *ctx, const char *name) { return report(ctx)[name].items; }

void count_handler(llc_context_t *, void *arg, int src, const void *, size_t, const void *, size_t)
{
    (*static_cast<std::vector<int> *>(arg))[size_t(src)]++;
}

// Capacity, in bytes, of a vector of pointers after `n` push_backs.
uint64_t pointer_list_heap(size_t n)
{
    std::vector<void *> sim;
    for (size_t i = 0; i < n; i++)
        sim.push_back(nullptr);
    return uint64_t(sim.capacity()) * sizeof(void *);
}

JobOptions udp_mem_job(std::vector<int> nodes, const char *mtu)
{
    JobOptions o = job(std::move(nodes), 90);
    // Addresses fit in the strings' inline buffers.
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"}, {"LLC_NET", "udp"}, {"LLC_UDP_MTU", mtu}};
    return o;
}

// Send one small message to every rank in dests, wait for one from every rank
// in srcs and for our datagrams to be acknowledged; then fence, so nobody
// starts the next round before everyone has measured.
void udp_round(TestProcess &p, llc_context_t *ctx, std::vector<int> &got, std::vector<int> &expect,
               const std::vector<int> &dests, const std::vector<int> &srcs)
{
    char payload[100] = {};
    llc_iov_t iov{payload, sizeof(payload)};
    for (int s : srcs)
        expect[size_t(s)]++;
    for (int d : dests)
        ASSERT_EQ(llc_am_send(ctx, d, 1, nullptr, 0, &iov, 1, nullptr, nullptr), LLC_OK) << llc_last_error(ctx);
    ASSERT_TRUE(progress_until(ctx, [&] {
        for (int s : srcs)
            if (got[size_t(s)] < expect[size_t(s)])
                return false;
        return row_items(ctx, "udp_unacked") == 0;
    }));
    ASSERT_EQ(TestProcess::fence(&p), 0);
}

std::vector<int> others_of(const TestProcess &p)
{
    std::vector<int> o;
    for (int r = 0; r < p.size; r++)
        if (r != p.rank)
            o.push_back(r);
    return o;
}

} // namespace

// ------------------------------------------------------------------ udp

// udp_peer_state follows the peers talked to: a Peer for each, a send-side
// object (Tx with its two deques) for each peer sent to, a StreamDecoder for
// each peer received from; the Tx and the decoder are released after a
// second without traffic, leaving exactly the Peer.  udp_peer_table is the
// capped table (LLC_MAX_CONTEXTS slots, allocated with the transport) and the
// list of those peers.
TEST(MemReport, UdpPerPeerStateGrowsByTheUdpPerPeerSize)
{
    LLC_EXPECT_JOB_OK(udp_mem_job({0, 1, 2, 3}, "16384"), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        std::vector<int> got(size_t(p.size), 0), expect(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, 1, count_handler, &got), LLC_OK);
        const llc::MemWalk::StructSizes s = llc::MemWalk::struct_sizes();
        // the table's fixed arrays: per slot the slot, a bucket head and a ghost (LLC_MAX_CONTEXTS = 1024)
        const uint64_t table = 1024 * (s.udp_peer_entry - sizeof(void *));
        const uint64_t datagram = s.udp_header + 16384;
        // the receive buffer and the datagram pool, full from the start (with its vector)
        const uint64_t buffers = s.udp_rx_buffer + s.udp_free_buffers * (datagram + sizeof(void *));

        auto r0 = report(ctx);
        ASSERT_EQ(TestProcess::fence(&p), 0); // nobody sends before this
        EXPECT_EQ(r0["udp_peer_state"].bytes, 0u);
        EXPECT_EQ(r0["udp_peer_table"].bytes, table);
        EXPECT_EQ(r0["udp_peer_table"].items, 0u);
        EXPECT_EQ(r0["udp_buffers"].bytes, buffers);
        EXPECT_EQ(r0["udp_buffers"].items, s.udp_free_buffers);
        EXPECT_EQ(r0["udp_unacked"].bytes, 0u);
        EXPECT_EQ(r0["tcp_rank_table"].bytes, 0u); // LLC_NET=udp: no tcp transport
        EXPECT_EQ(r0["hybrid_routes"].bytes, 0u);
        EXPECT_STREQ(r0["udp_peer_state"].paper, "low-level contexts (QPs)");
        EXPECT_STREQ(r0["udp_unacked"].paper, "communication buffers (packets in flight)");

        // Ring: we send to next (Peer + Tx) and hear from prev (Peer + decoder).
        int next = (p.rank + 1) % p.size, prev = (p.rank + p.size - 1) % p.size;
        udp_round(p, ctx, got, expect, {next}, {prev});
        auto r1 = report(ctx);
        EXPECT_EQ(r1["udp_peer_state"].items, 2u);
        EXPECT_EQ(r1["udp_peer_state"].bytes, 2 * s.udp_peer + s.udp_tx + s.stream_decoder);
        EXPECT_EQ(r1["udp_peer_table"].items, 2u);
        EXPECT_EQ(r1["udp_peer_table"].bytes, table + pointer_list_heap(2));
        EXPECT_EQ(r1["udp_unacked"].items, 0u);
        EXPECT_EQ(r1["udp_unacked"].bytes, 0u);
        EXPECT_EQ(r1["send_queues"].items, 0u);
        // The one datagram sent came from the pool and went back once acknowledged.
        EXPECT_EQ(r1["udp_buffers"].bytes, buffers);
        ASSERT_EQ(TestProcess::fence(&p), 0);

        // All pairs: every peer is sent to and heard from.
        std::vector<int> others = others_of(p);
        udp_round(p, ctx, got, expect, others, others);
        auto r2 = report(ctx);
        const uint64_t peers = uint64_t(p.size - 1);
        const uint64_t busy_peer = s.udp_peer + s.udp_tx + s.stream_decoder;
        EXPECT_EQ(r2["udp_peer_state"].items, peers);
        EXPECT_EQ(r2["udp_peer_state"].bytes, peers * busy_peer);
        EXPECT_EQ(r2["udp_peer_state"].bytes - r1["udp_peer_state"].bytes,
                  peers * busy_peer - (2 * s.udp_peer + s.udp_tx + s.stream_decoder));
        EXPECT_EQ(r2["udp_peer_table"].items, peers);
        EXPECT_EQ(r2["udp_peer_table"].bytes, table + pointer_list_heap(peers));
        EXPECT_EQ(r2["udp_unacked"].items, 0u);
        // The round had one datagram per peer in flight at once (fewer than the
        // pool holds); all are back in the pool (a one-datagram record is
        // decoded in place, so the decoders need not have buffered anything).
        ASSERT_LT(peers, s.udp_free_buffers);
        EXPECT_EQ(r2["udp_buffers"].items, s.udp_free_buffers);
        EXPECT_EQ(r2["udp_buffers"].bytes, buffers);
        ASSERT_EQ(TestProcess::fence(&p), 0);

        // Quiet for a while: the send-side objects and decoders are freed, the
        // Peers stay.  Nothing else changes.
        EXPECT_TRUE(progress_until(ctx, [&] { return row_bytes(ctx, "udp_peer_state") == peers * s.udp_peer; }, 10));
        auto r3 = report(ctx);
        EXPECT_EQ(r3["udp_peer_state"].items, peers);
        EXPECT_EQ(r3["udp_peer_state"].bytes, peers * s.udp_peer);
        EXPECT_EQ(r3["udp_peer_table"].bytes, r2["udp_peer_table"].bytes);
        // Left in udp_buffers: the receive buffer and the free pool (items: its buffers).
        const uint64_t pool = r3["udp_buffers"].items;
        EXPECT_EQ(pool, s.udp_free_buffers);
        const uint64_t fixed = s.udp_rx_buffer + pool * datagram;
        ASSERT_GE(r3["udp_buffers"].bytes, fixed);
        EXPECT_LE(r3["udp_buffers"].bytes - fixed, s.udp_free_buffers * sizeof(void *)); // the pool's vector
        EXPECT_EQ(pool, r2["udp_buffers"].items);
        EXPECT_LE(r3["udp_buffers"].bytes, r2["udp_buffers"].bytes);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(ctx);
    });
}

// Datagrams sent and not yet acknowledged are counted in udp_unacked (header
// + a full MTU each, items: datagrams) while the receiver does not answer,
// and the row drops to 0 once they are acknowledged; their buffers refill
// the datagram pool (udp_buffers) and the others are freed.
TEST(MemReport, UdpUnackedDatagramsAreCountedUntilAcknowledged)
{
    LLC_EXPECT_JOB_OK(udp_mem_job({0, 1}, "4096"), [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        std::vector<int> got(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, 1, count_handler, &got), LLC_OK);
        const llc::MemWalk::StructSizes s = llc::MemWalk::struct_sizes();
        const uint64_t mtu = 4096, datagram = s.udp_header + mtu;
        const size_t payload = 64 * 1024 + 7;
        // The record (wire header + payload) spread over datagrams of mtu stream bytes.
        const uint64_t datagrams = (sizeof(llc::WireHeader) + payload + mtu - 1) / mtu;
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 0) {
            auto before = report(ctx);
            const uint64_t buffers = s.udp_rx_buffer + s.udp_free_buffers * (datagram + sizeof(void *));
            EXPECT_EQ(before["udp_buffers"].bytes, buffers); // the receive buffer and the full pool
            std::vector<char> data(payload, 'u');
            llc_iov_t iov{data.data(), data.size()};
            // Every byte fits in the window: copied into datagrams at once.
            ASSERT_EQ(llc_am_send(ctx, 1, 1, nullptr, 0, &iov, 1, nullptr, nullptr), LLC_OK) << llc_last_error(ctx);
            auto inflight = report(ctx); // rank 1 is in the fence below: nothing is acknowledged yet
            EXPECT_EQ(inflight["udp_unacked"].items, datagrams);
            EXPECT_EQ(inflight["udp_unacked"].bytes, datagrams * datagram);
            EXPECT_EQ(inflight["send_queues"].items, 0u);
            // Peer and Tx (its deque of datagrams has grown past its first block); no decoder: nothing received.
            EXPECT_GT(inflight["udp_peer_state"].bytes, s.udp_peer + s.udp_tx);
            ASSERT_EQ(TestProcess::fence(&p), 0);
            ASSERT_TRUE(progress_until(ctx, [&] { return row_items(ctx, "udp_unacked") == 0; }, 20));
            auto after = report(ctx);
            EXPECT_EQ(after["udp_unacked"].bytes, 0u);
            // The pool is full again; the buffers allocated beyond it were freed.
            EXPECT_GT(datagrams, s.udp_free_buffers) << "the message should overflow the pool";
            EXPECT_EQ(after["udp_buffers"].items, s.udp_free_buffers);
            EXPECT_EQ(after["udp_buffers"].bytes, buffers);
            EXPECT_EQ(after["udp_peer_state"].bytes, s.udp_peer + s.udp_tx);
        } else {
            ASSERT_EQ(TestProcess::fence(&p), 0); // sleeps here while rank 0 measures
            ASSERT_TRUE(progress_until(ctx, [&] { return got[0] == 1; }, 20));
            auto r = report(ctx);
            EXPECT_EQ(r["udp_unacked"].items, 0u); // acknowledgements are not data
            // The decoder kept the payload's buffer.
            EXPECT_GE(r["udp_buffers"].bytes, s.udp_rx_buffer + payload);
        }
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(ctx);
    });
}

// --------------------------------------------------------------- hybrid

// The hybrid layer's per-destination routes (path, switching state, send
// history) are counted in hybrid_routes while the sender has them, and
// disappear when the history of a quiet udp destination decays to 0.  The
// route table's bucket heads and predictor ghosts are sized by the cap
// (LLC_MAX_CONTEXTS = 1024); its slots are made on demand and kept.
TEST(MemReport, HybridCountsItsRoutesAndTheirHistory)
{
    JobOptions o = job({0, 1, 2}, 90);
    o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},
             {"LLC_NET", "hybrid"},
             {"LLC_HYBRID_DRIVER", "sender"}, // receivers keep no per-source state then
             {"LLC_HYBRID_PERIOD_MS", "200"},
             {"LLC_HYBRID_PROMOTE_MSGS", "1000000"}}; // never promoted
    LLC_EXPECT_JOB_OK(o, [](TestProcess &p) {
        llc_context_t *ctx = init_or_fail(p);
        ASSERT_NE(ctx, nullptr);
        std::vector<int> got(size_t(p.size), 0);
        ASSERT_EQ(llc_am_register(ctx, 1, count_handler, &got), LLC_OK);
        const llc::MemWalk::StructSizes s = llc::MemWalk::struct_sizes();
        const uint64_t fixed = 1024 * s.hybrid_table_per_cap;
        auto r0 = report(ctx);
        EXPECT_EQ(r0["hybrid_routes"].items, 0u);
        EXPECT_EQ(r0["hybrid_routes"].bytes, fixed);
        EXPECT_STREQ(r0["hybrid_routes"].paper, "transport/buffer switching");
        ASSERT_EQ(TestProcess::fence(&p), 0);
        if (p.rank == 0) {
            for (int d : {1, 2})
                ASSERT_EQ(llc_am_send(ctx, d, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
            auto r1 = report(ctx); // no llc_progress since the sends: no policy period has passed
            EXPECT_EQ(r1["hybrid_routes"].items, 2u);
            EXPECT_GE(r1["hybrid_routes"].bytes, fixed + 2 * s.hybrid_route);
            EXPECT_LE(r1["hybrid_routes"].bytes, fixed + 4 * s.hybrid_route); // slots grow by doubling, 4 at first
            EXPECT_EQ(r1["udp_peer_state"].items, 2u); // the messages went over udp
            EXPECT_EQ(r1["tcp_conn_state"].items, 0u);
            // Two periods without sends: score 1, then 0, and the route is forgotten.
            ASSERT_TRUE(progress_until(ctx, [&] { return row_items(ctx, "hybrid_routes") == 0; }, 10));
            auto r2 = report(ctx);
            EXPECT_EQ(r2["hybrid_routes"].bytes, r1["hybrid_routes"].bytes); // the slots stay for reuse
        } else {
            ASSERT_TRUE(progress_until(ctx, [&] { return got[0] == 1; }, 20));
            auto r = report(ctx);
            EXPECT_EQ(r["hybrid_routes"].items, 0u); // routes are the sender's
            EXPECT_EQ(r["udp_peer_state"].items, 1u);
        }
        ASSERT_EQ(TestProcess::fence(&p), 0);
        finalize_ok(ctx);
    });
}

// The receiver driver keeps, per source heard from, its receive count per
// period: 8 periods (64 bytes) while it was heard in one period only, then
// LLC_HYBRID_HISTORY_PERIODS x 8 bytes (the paper's 1024 periods unless
// set), counted in receive_history until the whole history is quiet.
TEST(MemReport, ReceiverCountsEachSourcesHistory)
{
    for (const char *periods : {"", "16"}) {
        JobOptions o = job({0, 1, 2}, 90);
        o.env = {{"LLC_TCP_ADDR", "127.0.0.1"},
                 {"LLC_NET", "hybrid"},
                 {"LLC_HYBRID_PERIOD_MS", "100"},
                 {"LLC_HYBRID_HISTORY_PERIODS", periods},
                 {"LLC_HYBRID_PROMOTE_MSGS", "1000000"}}; // never promoted
        const uint64_t full = *periods ? 16 * 8 : 1024 * 8;
        SCOPED_TRACE(std::string("LLC_HYBRID_HISTORY_PERIODS=") + periods);
        LLC_EXPECT_JOB_OK(o, [&](TestProcess &p) {
            llc_context_t *ctx = init_or_fail(p);
            ASSERT_NE(ctx, nullptr);
            std::vector<int> got(size_t(p.size), 0);
            ASSERT_EQ(llc_am_register(ctx, 1, count_handler, &got), LLC_OK);
            auto r0 = report(ctx);
            EXPECT_EQ(r0["receive_history"].items, 0u);
            EXPECT_EQ(r0["receive_history"].bytes, 0u);
            EXPECT_STREQ(r0["receive_history"].paper, "transport/buffer switching");
            ASSERT_EQ(TestProcess::fence(&p), 0);
            if (p.rank != 0)
                ASSERT_EQ(llc_am_send(ctx, 0, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
            else
                ASSERT_TRUE(progress_until(ctx, [&] { return got[1] == 1 && got[2] == 1; }, 20));
            if (p.rank == 0) {
                auto r1 = report(ctx);
                EXPECT_EQ(r1["receive_history"].items, 2u);
                EXPECT_EQ(r1["receive_history"].bytes, 2u * 8 * 8) << "heard in one period: the short ring";
            }
            ASSERT_EQ(TestProcess::fence(&p), 0);
            // A second message from rank 1, at least one period later: its ring grows.
            if (p.rank == 1) {
                const double later = now_s() + 0.25;
                progress_until(ctx, [&] { return now_s() >= later; }, 5);
                ASSERT_EQ(llc_am_send(ctx, 0, 1, nullptr, 0, nullptr, 0, nullptr, nullptr), LLC_OK);
            } else if (p.rank == 0) {
                ASSERT_TRUE(progress_until(ctx, [&] { return got[1] == 2; }, 20));
                auto r2 = report(ctx);
                EXPECT_EQ(r2["receive_history"].items, 2u);
                EXPECT_EQ(r2["receive_history"].bytes, full + 8 * 8);
                if (*periods) {
                    // 16 quiet periods of 100 ms later both histories are gone.
                    ASSERT_TRUE(progress_until(ctx, [&] { return row_items(ctx, "receive_history") == 0; }, 20));
                    EXPECT_EQ(report(ctx)["receive_history"].bytes, 0u);
                }
            }
            ASSERT_EQ(TestProcess::fence(&p), 0);
            finalize_ok(ctx);
        });
    }
}

// -------------------------------------------------------------- model

// llc_udp_model: no n-entry rank -> peer table; per remote peer the udp Peer
// and its table entry; the send-side objects and decoders for at most gamma
// busy peers; the receive buffer and a full free pool.
TEST(MemModel, UdpModelUsesTheUdpPerPeerSizes)
{
    llc::ModelParams p;
    const auto s = llc::MemWalk::struct_sizes();
    const double nodes = 1024, m = p.m, n = m * nodes, remote = n - m;
    auto terms = llc::llc_udp_model(nodes, p);
    std::map<std::string, llc::ModelTerm> by_name;
    double n_coeff = 0;
    for (const auto &t : terms) {
        by_name[t.component] = t;
        n_coeff += t.n_coeff;
    }
    EXPECT_EQ(by_name.count("tcp_rank_table"), 0u);
    EXPECT_EQ(by_name.count("tcp_conn_state"), 0u);
    ASSERT_GT(remote, p.gamma);
    // Capped: at most gamma Peers, the table's gamma slots allocated up front.
    EXPECT_DOUBLE_EQ(by_name["udp_peer_state"].bytes,
                     m * (p.gamma * double(s.udp_peer) + p.gamma * double(s.udp_tx + s.stream_decoder)));
    EXPECT_DOUBLE_EQ(by_name["udp_peer_table"].bytes, m * p.gamma * double(s.udp_peer_entry));
    EXPECT_DOUBLE_EQ(by_name["udp_buffers"].bytes,
                     m * (double(s.udp_rx_buffer) + double(s.udp_free_buffers) * (double(s.udp_header) + p.udp_mtu +
                                                                                  double(s.pointer))));
    // n-sized: the node-shared rank -> node table (once per node) and the
    // sequence numbers; the udp peers are capped and the shm rank table is
    // sized by the local peers, so nothing per rank beyond that.
    EXPECT_DOUBLE_EQ(n_coeff, double(s.node_entry) + m * double(2 * s.seq_entry));
    // Fewer peers than gamma: all of them busy.
    auto small = llc::llc_udp_model(4, p);
    for (const auto &t : small) {
        if (t.component == "udp_peer_state") {
            EXPECT_DOUBLE_EQ(t.bytes, m * 12 * double(s.udp_peer + s.udp_tx + s.stream_decoder));
        }
    }
    // Per remote peer, udp state is smaller than tcp's connected state.
    EXPECT_LT(double(s.udp_peer + s.udp_peer_entry + s.pointer),
              double(s.tcp_out_conn + s.empty_deque_heap + s.tcp_in_conn + s.stream_decoder + 3 * s.pointer));
    EXPECT_LT(llc::model_total(llc::llc_udp_model(std::ldexp(1.0, 20), p)),
              llc::model_total(llc::llc_model(std::ldexp(1.0, 20), p, false)));
}

// llc_hybrid_model: the udp model plus the hybrid's bounded extras.  The
// receive history follows the paper's period count (1024 periods up to
// 2^13 processes, 8 at 2^22), for gamma sources per process; the RC class
// is LLC_MAX_RC_PER_NODE connections each way per node; the ring pool is
// all leased.  Nothing in it grows with n beyond the udp model's terms,
// and at 2^20 nodes of 4 processes it stays under the paper's 1.07 GB.
TEST(MemModel, HybridModelAddsBoundedHistoryRcConnectionsAndThePool)
{
    llc::ModelParams p;
    const auto s = llc::MemWalk::struct_sizes();
    auto by_name = [](const std::vector<llc::ModelTerm> &terms) {
        std::map<std::string, llc::ModelTerm> m;
        for (const auto &t : terms)
            m[t.component] = t;
        return m;
    };
    for (double nodes : {1024.0, std::ldexp(1.0, 20)}) {
        const double m = p.m, n = m * nodes;
        auto hybrid = llc::llc_hybrid_model(nodes, p);
        auto udp = llc::llc_udp_model(nodes, p);
        auto h = by_name(hybrid);
        double udp_n_coeff = 0, hybrid_n_coeff = 0;
        for (const auto &t : udp)
            udp_n_coeff += t.n_coeff;
        for (const auto &t : hybrid)
            hybrid_n_coeff += t.n_coeff;
        EXPECT_DOUBLE_EQ(hybrid_n_coeff, udp_n_coeff) << nodes;
        const double periods = n <= 8192 ? 1024 : std::max(8.0, 1024 / std::ldexp(1.0, int(std::ceil(std::log2(n))) - 13));
        EXPECT_DOUBLE_EQ(h["receive_history"].bytes, m * p.gamma * periods * 8) << nodes;
        EXPECT_DOUBLE_EQ(h["ring_pool"].bytes, 1024.0 * 16 * 4096 + 8192)
            << "rings x slots x slot bytes plus a header (and 1024 free-list links) of two pages";
        EXPECT_DOUBLE_EQ(h["tcp_conn_state"].bytes,
                         128 * double(s.tcp_out_conn + s.empty_deque_heap + s.tcp_in_conn + s.stream_decoder));
        EXPECT_DOUBLE_EQ(h["hybrid_routes"].bytes,
                         m * (2 * p.gamma * double(s.hybrid_table_per_cap) +
                              p.gamma * double(s.hybrid_route + s.hybrid_source)) + 4096);
        EXPECT_GT(llc::model_total(hybrid), llc::model_total(udp));
    }
    // 1024 nodes: 4096 processes, the full 1024 periods: 8 KiB per source.
    EXPECT_DOUBLE_EQ(by_name(llc::llc_hybrid_model(1024, p))["receive_history"].bytes, 4 * 1024 * 8192.0);
    EXPECT_LE(llc::model_total(llc::llc_hybrid_model(std::ldexp(1.0, 20), p)), 1.07e9);
    // One node: nothing remote, no hybrid state.
    auto one = by_name(llc::llc_hybrid_model(1, p));
    EXPECT_EQ(one.count("receive_history"), 0u);
    EXPECT_EQ(one.count("ring_pool"), 0u);
}
