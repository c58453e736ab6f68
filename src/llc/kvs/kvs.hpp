// kvs.hpp - where the transports publish and find endpoint addresses.
//
// AddressBook hides the choice made by LLC_KVS (doc/libllc-kvs.md):
//   pmi  - every process puts llc-tcp-<rank>/llc-udp-<rank> through the
//          caller's bootstrap and gets a peer's key on first contact.
//   dist - the node leaders (lowest rank of each node) run a small KVS server
//          (KvsServer, its own thread and tcp socket); only the leaders'
//          server addresses go through the bootstrap.  Each process stores its
//          entry "addr/<rank>" at the leader owning hash(key) mod nodes, and a
//          peer's entry is looked up there on first contact and kept in a
//          bounded LRU cache (LLC_KVS_CACHE).
//          Every request proves that its sender knows the job secret
//          (bootstrap key llc-secret-kvs) by an HMAC over the server's
//          challenge; the server proves it back in its reply
//          (doc/reliability.md, "The distributed KVS").
#pragma once

#include "core/bootstrap.hpp"
#include "core/config.hpp"
#include "auth/job_secret.hpp"
#include "node/node_map.hpp"
#include "support/unique_fd.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace llc {

// Verbs: the verbs transport's endpoint (verbs_address.hpp, as text).
enum class AddrKind { Tcp = 0, Udp = 1, Verbs = 2 };

// One leader's share of the distributed store.  Serves put/get requests on a
// tcp socket from a thread of its own, so lookups are answered whatever the
// leader's application thread is doing (computing, blocked in a fence,
// finalizing), until the object is destroyed.
//
// A connection gets a challenge at once and must send one request that
// carries an HMAC over it under the job secret.  One that does not (bytes
// that are not a request, a wrong MAC, a close, nothing within
// auth_timeout_ms) is closed and counted (auth_rejected(), llc_stats_t
// kvs_auth_rejected), with at most one warning line a minute; at most
// kMaxKvsPendingAuth connections wait to authenticate (beyond: the oldest
// is closed, counted the same way).  Nothing a stranger sends is stored or
// answered.
class KvsServer {
public:
    static constexpr size_t kMaxKvsPendingAuth = 128;

    // Binds a listening socket on all interfaces; address() is publish_ip:port.
    // Requests carrying another job_tag are rejected.  rank: for the warning line.
    KvsServer(const std::string &publish_ip, uint32_t job_tag, int rank = 0, uint64_t auth_timeout_ms = 10000);
    ~KvsServer();
    KvsServer(const KvsServer &) = delete;
    KvsServer &operator=(const KvsServer &) = delete;

    const std::string &address() const { return address_; }
    void start();
    void stop();
    // The job secret, once known (a leader other than rank 0 learns it after
    // the init fence): requests that came earlier wait for it.  Once only.
    void set_secret(const std::array<uint8_t, kSecretBytes> &secret);
    // Bytes held by the store (entries by their real size) and entry count.
    uint64_t store_bytes(uint64_t *entries) const;
    // Connections closed before they proved they belong to the job.
    uint64_t auth_rejected() const { return auth_rejected_.load(std::memory_order_relaxed); }

private:
    struct Conn {
        UniqueFd fd;
        std::string in;
        std::string out;
        std::string peer; // ip:port, for the warning line
        Nonce nonce_s{};
        uint64_t accepted_us = 0;
        bool authed = false; // its request checked out (then: the reply, and the close)
    };
    void run();
    bool serve(Conn &c, short revents); // false: close the connection
    bool take_request(Conn &c);         // false: close the connection
    std::string handle(char op, const std::string &key, const std::string &value);
    void reject(Conn &c, const std::string &why);
    void accept_all(std::vector<std::unique_ptr<Conn>> &conns);

    uint32_t job_tag_;
    int rank_;
    uint64_t auth_timeout_us_;
    std::array<uint8_t, kSecretBytes> secret_{};
    std::atomic<bool> keyed_{false};
    std::atomic<uint64_t> auth_rejected_{0};
    RejectLog rejects_{"KVS connections that did not prove they belong to this job were", "kvs_auth_rejected"};
    UniqueFd listener_;
    UniqueFd wake_; // eventfd: stop()
    std::string address_;
    std::thread thread_;
    std::atomic<bool> stopping_{false};
    mutable std::mutex mutex_; // guards store_ (the accounting reads it from the application thread)
    std::unordered_map<std::string, std::string> store_;
};

// Client side: one request, one connection, retried until the deadline.
// Returns 0 (found, *value set), 1 (the server has no such key); throws
// Error(LLC_ERR_PEER) naming the key and the server when the server cannot be
// reached or does not answer before deadline_us (monotonic).
uint32_t kvs_job_tag(const std::string &job_id);
// A server that refuses the connection several times in a row (nothing listens
// on its port: its process is gone) fails at once with the text of
// kvs_server_gone_message(), which names server_rank as the failed process.
// secret: the job secret (the request's MAC; the reply's is checked with it).
int kvs_request(const std::string &server, int server_rank, uint32_t job_tag,
                const std::array<uint8_t, kSecretBytes> &secret, char op, const std::string &key,
                const std::string &value, std::string *reply, uint64_t deadline_us, uint64_t timeout_ms);
std::string kvs_server_gone_message(int server_rank, const std::string &server, const std::string &key);

class AddressBook {
public:
    AddressBook(const Config &config, Bootstrap &boot, int rank, const NodeMap &node_of_rank,
                const std::string &job_id);
    ~AddressBook();

    bool distributed() const { return dist_; }
    // Before the first init fence: a leader starts its server and puts its address (dist).
    void start();
    // A transport's own address (pmi: bootstrap put now; dist: kept for commit()).
    void publish(AddrKind kind, const std::string &addr);
    // After the first init fence, before the second: store this process's entry at its owner (dist).
    // Learns the job secret first (learn_secret()).
    void commit();
    // After the first init fence: get the job secret from rank 0 and give it
    // to this leader's server (dist; commit() and lookup() do it too).
    void learn_secret();
    // The address rank published for kind.  Throws Error on failure.
    std::string lookup(int rank, AddrKind kind);

    // For tests and the memory walk.
    static std::string entry_key(int rank) { return "addr/" + std::to_string(rank); }
    int owner_of(const std::string &key) const; // leader rank owning key
    // Index (in node order) of the node whose leader owns key.
    static size_t owner_index(const std::string &key, size_t nodes);
    bool is_server() const { return server_ != nullptr; }
    uint64_t lookups_remote() const { return remote_lookups_; }
    uint64_t cache_bytes(uint64_t *entries) const;
    const KvsServer *server() const { return server_.get(); }

private:
    struct CacheEntry {
        int rank;
        std::string tcp, udp, verbs;
        const std::string &of(AddrKind k) const { return k == AddrKind::Tcp ? tcp : k == AddrKind::Udp ? udp : verbs; }
    };
    const std::string &server_address(int leader);

    const Config &config_;
    Bootstrap &boot_;
    int rank_;
    bool dist_;
    uint32_t job_tag_;
    std::vector<int> leaders_;              // dist: leader rank of each node (k entries, node order)
    std::unordered_map<int, std::string> server_addr_; // dist: by leader rank, fetched on first use
    std::unique_ptr<JobSecret> secret_;     // dist: bootstrap key llc-secret-kvs
    std::unique_ptr<KvsServer> server_;     // dist, leaders only
    std::string own_[3];                    // dist: this process's addresses until commit() (by AddrKind)
    std::list<CacheEntry> lru_;             // dist: most recently used first
    std::unordered_map<int, std::list<CacheEntry>::iterator> cache_;
    uint64_t remote_lookups_ = 0;
};

} // namespace llc
