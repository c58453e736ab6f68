// context.hpp - one libllc endpoint: job shape, handlers, transports, progress.
#pragma once

#include "wire/am_protocol.hpp"
#include "core/bootstrap.hpp"
#include "core/config.hpp"
#include "support/lazy_array.hpp"
#include "llc.h"
#include "llc_fast.h"
#include "node/node_map.hpp"
#include "wire/outgoing_message.hpp"
#include "core/progress_backoff.hpp"
#include "core/held_records.hpp"

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llc {

class AddressBook;
class FinalizeDrain;
class MemRegistry;
class Rma;
class Tagged;
class Transport;
struct StructSizes;

class Context {
public:
    // Collective (two bootstrap fences).  Throws Error on failure.
    Context(const llc_init_params_t &params, llc_context_t *handle);
    ~Context();
    Context(const Context &) = delete;
    Context &operator=(const Context &) = delete;

    // --- the C API, one call each -------------------------------------
    int rank() const { return rank_; }
    int size() const { return size_; }
    int endpoint() const { return endpoint_; }
    int node_of(int rank) const { return rank >= 0 && rank < size_ ? node_map_.node_of(rank) : -1; }
    void register_handler(unsigned id, llc_am_handler_t handler, void *arg);
    int am_send(int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov,
                int iovcnt, llc_completion_t cb, void *cb_arg);
    Tagged &tagged() { return *tagged_; }
    Rma &rma() { return *rma_; }
    // The transport that carries messages to dest (transport/transport.hpp):
    // self, the node's (shared memory) or the network's.
    Transport &transport_to(int dest) { return *transports_[size_t(route_of(dest))]; }
    // Tests: the network transport becomes what wrap makes of it (a
    // decorator, e.g. one that adds keyed reads: tagged_am_keyed_test.cpp);
    // after llc_init, before any traffic.  False: there is none.
    bool wrap_network_transport(const std::function<std::unique_ptr<Transport>(std::unique_ptr<Transport>)> &wrap);
    // Records sent to dest so far, and received (delivered or skipped) from
    // src: a tagged offer compares the two (tagged.hpp, OfferWire).
    uint64_t records_sent_to(int dest) { return next_send_seq_[dest]; }
    // The stream's next sequence number to dest, where the inline fast path
    // (llc_fast.h) increments it: the address is stable for the context's life.
    uint64_t *send_seq_slot(int dest) { return &next_send_seq_[dest]; }
    // llc_fast_peer: dest's inline path, or nullptr.
    llc_fast_peer_t *fast_peer(int dest);
    // llc_fast_poll: the inline look at this process's rings, or nullptr.
    llc_fast_poll_t *fast_poll() { return fast_poll_; }
    uint64_t records_received_from(int src) { return next_recv_seq_[src]; }
    // What it holds now, into r (mem/mem_accounting.hpp; context_account.cpp):
    // its own members, the node map, the bootstrap and KVS, then each
    // transport's account().
    void account(MemRegistry &r) const;
    // sizeof of the Context and of its handler table (for the memory model).
    static void struct_sizes(StructSizes &s);

    // --- libllc's own protocols (handler ids above the caller's) ---------
    void register_internal_handler(unsigned id, llc_am_handler_t handler, void *arg);
    // Run handler id (a caller's) for a message from src whose record has
    // been taken in order already (a large active message, tagged_am.cpp).
    void run_handler(int src, unsigned id, const void *hdr, size_t hdr_len, const void *data, size_t data_len);
    // Keep src's records back (held_records.hpp) until the Data record for
    // token has come; then release_records_from runs them, in order.
    void hold_records_from(int src, uint64_t token) { held_.hold(src, token); }
    void release_records_from(int src);
    bool holding_records_from(int src) const { return held_.holding(src); }
    // am_send without the argument checks (id may be internal).
    int send_am(int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov, int iovcnt,
                llc_completion_t cb, void *cb_arg);
    // The fast path of a small tagged send that is not synchronous: written
    // whole by a transport with an inline path (a local peer's ring) as a
    // message chunk (TagChunkHeader) when it fits now and nothing waits
    // before it; true when sent.  False: send it as a kTagEager record.
    bool try_send_tagged_inline(int dest, uint64_t tag, uint32_t source, const void *buf, size_t len);
    int progress(int *progressed);
    // llc_note_activity: the caller made progress libllc does not see.
    void note_activity() { backoff_.on_activity(); }
    // More processes of the job on the node than CPUs (LLC_OVERSUBSCRIBED).
    bool oversubscribed() const { return idle_.oversubscribed; }
    // llc_set_idle_hook: idle yields and sleeps go to hook (outside the
    // context) when it takes them; nullptr: progress does its own.
    void set_idle_hook(llc_idle_hook_t hook, void *arg)
    {
        idle_hook_ = hook;
        idle_hook_arg_ = arg;
    }
    // Finalize (flush, say goodbye, fence) in three parts, so that several
    // contexts of a process drain together before any of them blocks in its
    // fence (llc_finalize_all; llc_finalize is it for one context): begin
    // (throws LLC_ERR_STATE inside a handler, nothing changed), one drain
    // round per step (true once drained or given up), then the fence, which
    // throws the first error met.
    void finalize_begin();
    bool finalize_step();
    void finalize_end();
    bool in_handler() const { return in_progress_; } // inside a handler or completion callback
    llc_stats_t stats() const; // the counters, with the connected slot figures as of now
    const char *last_error() const { return last_error_.c_str(); }
    void set_last_error(const std::string &message) { last_error_ = message; }

    // --- services for the transports ----------------------------------
    const Config &config() const { return config_; }
    // The caller's job id, with the endpoint appended for endpoints > 0: it
    // names the shared segments, so each endpoint has its own.
    const std::string &job_id() const { return job_id_; }
    const NodeMap &node_map() const { return node_map_; }
    Bootstrap &bootstrap() { return boot_; }
    // Where the transports publish and look up endpoint addresses (LLC_KVS).
    AddressBook &addresses() { return *kvs_; }
    llc_stats_t &counters() { return stats_; }
    // Check order, count and run the handler.  Throws Error(LLC_ERR_PEER)
    // when the record is out of order (a protocol bug).
    void deliver(int src, const WireHeader &wire, const void *hdr, const void *data, size_t data_len);
    // The same for a message chunk of a shared-memory ring (a TagChunkHeader, then the payload).
    void deliver_tagged_chunk(int src, const char *chunk, size_t len);
    // Where a record's payload from src may be received in place
    // (StreamDecoder::Placer): the posted receive buffer of a rendezvous Data
    // record or of a Put to an offered receive; the buffer of a waiting get
    // for its reply, the region a one-sided put names.
    char *payload_destination(int src, const WireHeader &wire, const void *hdr);
    // A message from src that will never be delivered (a single-copy read
    // that failed): its sequence number is used up, in order (deliver does
    // this first).  Throws like deliver when it is out of order.
    void skip_message(int src, const WireHeader &wire);
    // Remember an error for the current llc_progress to return (first one wins).
    void report_error(int status, const std::string &message);
    // The same for the failure of one peer (its process died, its connection
    // broke): also, before the progress call returns, the one-sided
    // operations waiting for it complete with LLC_ERR_PEER (rma/rma.hpp).
    void report_peer_failure(int peer, int status, const std::string &message);
    // Queue msg's completion callback (if it is owed) to run inside llc_progress.
    void defer_completion(OutgoingMessage &msg, int status);
    // Queue a completion callback to run inside llc_progress.
    void queue_completion(llc_completion_t cb, void *arg, int status);

private:
    enum class Route : size_t { Self, Node, Network };
    Route route_of(int dest) const
    {
        return dest == rank_ ? Route::Self : node_map_.node_of(dest) == node_map_.my_node() ? Route::Node : Route::Network;
    }
    void count_sent(uint64_t bytes);
    // The next message from src must carry the pair's next sequence number
    // (in the bits of `bits`: a shm message chunk carries the low 32): use
    // it up, or throw LLC_ERR_PEER naming both numbers.
    void take_sequence(int src, uint64_t got, uint64_t bits);
    void create_transports();
    bool run_completions();
    bool sends_pending() const;

    llc_context_t *handle_;
    int rank_ = 0;
    int size_ = 0;
    int endpoint_ = 0;
    NodeMap node_map_; // rank -> node, node-shared (node_map.hpp)
    std::string job_id_;
    Config config_;
    Bootstrap boot_;

    struct HandlerSlot {
        llc_am_handler_t fn = nullptr;
        void *arg = nullptr;
    };
    static_assert(kPublicHandlers == LLC_AM_MAX_HANDLERS, "handler ranges");
    std::array<HandlerSlot, kHandlerSlots> handlers_{};
    LazyZeroArray<uint64_t> next_send_seq_; // n entries, pages committed on first use
    LazyZeroArray<uint64_t> next_recv_seq_;

    struct Completion {
        llc_completion_t cb;
        void *arg;
        int status;
    };
    std::vector<Completion> completions_;

    llc_stats_t stats_{};
    std::string last_error_ = "no error";
    int progress_status_ = LLC_OK;
    std::string progress_message_;
    bool in_progress_ = false;
    IdlePolicy idle_{}; // how idle waits spin and sleep (LLC_OVERSUBSCRIBED)
    ProgressBackoff backoff_;
    llc_idle_hook_t idle_hook_ = nullptr;
    void *idle_hook_arg_ = nullptr;
    void idle_action(ProgressBackoff::Action action);
    // Between finalize_begin and finalize_end: the drain, and the first error met.
    std::unique_ptr<FinalizeDrain> drain_;
    void note_finalize_error(int status, const std::string &message);
    int finalize_status_ = LLC_OK;
    std::string finalize_message_;

    std::unique_ptr<AddressBook> kvs_; // declared before the transports: destroyed after them
    // By Route: to itself, to the node's other processes (none when it has
    // no other), to other nodes (none when there are none); open_transports.hpp.
    std::array<std::unique_ptr<Transport>, 3> transports_;
    std::vector<Transport *> live_;  // the transports there are, in Route order
    Transport *idle_waiter_ = nullptr; // the one whose idle_wait wakes on arrivals, if any
    // The node transport's inline look (llc_fast_poll); its `skipped` polls
    // are counted as idle calls by progress().
    llc_fast_poll_t *fast_poll_ = nullptr;
    std::unique_ptr<Tagged> tagged_;        // tagged point-to-point (tagged.hpp); after the transports: destroyed first
    std::unique_ptr<Rma> rma_;              // one-sided put/get (rma/rma.hpp); destroyed before Tagged
    std::vector<int> failed_peers_;         // report_peer_failure, handed to rma_ and tagged_ by progress()
    HeldRecords held_;                      // records kept back behind a streamed large active message
    void hand_over_failed_peers();
};

// The Context behind a handle (tests reach libllc's own protocols through it).
Context &context_of(llc_context_t *handle);

} // namespace llc
