// kvs.hpp - where the transports publish and find endpoint addresses.
//
// AddressBook hides the choice made by LLC_KVS (doc/libllc.md, "Distributed KVS"):
//   pmi  - every process puts llc-tcp-<rank>/llc-udp-<rank> through the
//          caller's bootstrap and gets a peer's key on first contact.
//   dist - the node leaders (lowest rank of each node) run a small KVS server
//          (KvsServer, its own thread and tcp socket); only the leaders'
//          server addresses go through the bootstrap.  Each process stores its
//          entry "addr/<rank>" at the leader owning hash(key) mod nodes, and a
//          peer's entry is looked up there on first contact and kept in a
//          bounded LRU cache (LLC_KVS_CACHE).
#pragma once

#include "bootstrap.hpp"
#include "config.hpp"
#include "node_map.hpp"
#include "unique_fd.hpp"

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
class KvsServer {
public:
    // Binds a listening socket on all interfaces; address() is publish_ip:port.
    // Requests carrying another job_tag are rejected.
    KvsServer(const std::string &publish_ip, uint32_t job_tag);
    ~KvsServer();
    KvsServer(const KvsServer &) = delete;
    KvsServer &operator=(const KvsServer &) = delete;

    const std::string &address() const { return address_; }
    void start();
    void stop();
    // Bytes held by the store (entries by their real size) and entry count.
    uint64_t store_bytes(uint64_t *entries) const;

private:
    struct Conn {
        UniqueFd fd;
        std::string in;
        std::string out;
    };
    void run();
    bool serve(Conn &c); // false: close the connection
    void handle(Conn &c, char op, const std::string &key, const std::string &value);

    uint32_t job_tag_;
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
int kvs_request(const std::string &server, int server_rank, uint32_t job_tag, char op, const std::string &key,
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
    void commit();
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
    std::unique_ptr<KvsServer> server_;     // dist, leaders only
    std::string own_[3];                    // dist: this process's addresses until commit() (by AddrKind)
    std::list<CacheEntry> lru_;             // dist: most recently used first
    std::unordered_map<int, std::list<CacheEntry>::iterator> cache_;
    uint64_t remote_lookups_ = 0;
};

} // namespace llc
