// kvs.cpp - the distributed address store (LLC_KVS=dist) and the pmi fallback.
//
// Wire protocol of a KVS server (one tcp connection per request, closed by
// the client after the reply; kvs_wire.hpp has the bytes):
//   challenge: the server's, at once on accept: magic, nonce_s
//   request:   nonce_c, HMAC(K, "llc-kvs-request-1", nonce_s, nonce_c, request),
//              then op (1 byte: 'P' put, 'G' get), job tag (4 bytes: hash of the
//              job id), key length (2 bytes), value length (4 bytes), key,
//              value (integers in network order)
//   reply:     status (1 byte: 0 found/stored, 1 no such key, 2 rejected:
//              another job's tag),
//              value length (4 bytes, network order), value,
//              then HMAC(K, "llc-kvs-reply-1", nonce_s, nonce_c, reply)
// K is the job secret (bootstrap key llc-secret-kvs, job_secret.hpp).
#include "kvs/kvs.hpp"
#include "kvs/kvs_wire.hpp"

#include "core/clock.hpp"
#include "core/errors.hpp"
#include "llc.h"
#include "mem/mem_accounting.hpp"
#include "support/string_hash.hpp"
#include "support/inet_address.hpp"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace llc {

namespace {

constexpr size_t kMaxServerConns = 4096;
constexpr uint64_t kRetryPauseUs = 20000;
// Refused connections in a row after which the server counts as gone.  Every
// request is made after the first init fence, and a leader starts its server
// before that fence, so nothing listening on its port means that the leader's
// process is gone (the kernel of a live host answers a port nobody listens on
// with a reset at once).  A few tries, not one, in case of a freak refusal.
constexpr int kRefusalsMeanGone = 3;

const char *kind_name(AddrKind k) { return k == AddrKind::Tcp ? "tcp" : k == AddrKind::Udp ? "udp" : "verbs"; }
std::string pmi_key(AddrKind k, int rank) { return std::string("llc-") + kind_name(k) + "-" + std::to_string(rank); }
// Unique per leader: MPICH's PMI keys are global to the job, src_rank is only a hint.
std::string server_key(int leader) { return "llc-kvs-" + std::to_string(leader); }
const char kSecretKey[] = "llc-secret-kvs";
const char kMacLabelRequest[] = "llc-kvs-request-1";
const char kMacLabelReply[] = "llc-kvs-reply-1";
static_assert(kKvsNonceBytes == kNonceBytes && kKvsMacBytes == kMacBytes, "kvs_wire.hpp sizes");

// The MACs of a request (client) and of a reply (server): both nonces, then
// the bytes they vouch for.
Mac kvs_mac(const std::array<uint8_t, kSecretBytes> &secret, const char *label, const void *nonce_s,
            const void *nonce_c, const char *bytes, size_t len)
{
    return hmac_sha256(secret, MacInput(label).add(nonce_s, kNonceBytes).add(nonce_c, kNonceBytes).add(bytes, len));
}


} // namespace

// ------------------------------------------------------------------ server

uint32_t kvs_job_tag(const std::string &job_id) { return uint32_t(fnv1a64(job_id)); }

KvsServer::KvsServer(const std::string &publish_ip, uint32_t job_tag, int rank, uint64_t auth_timeout_ms)
    : job_tag_(job_tag), rank_(rank), auth_timeout_us_(auth_timeout_ms * 1000)
{
    listener_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!listener_.valid())
        throw_errno(LLC_ERR_SYSTEM, "socket() for the KVS server", errno);
    int one = 1;
    ::setsockopt(listener_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(listener_.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0)
        throw_errno(LLC_ERR_SYSTEM, "bind() of the KVS server socket", errno);
    if (::listen(listener_.get(), SOMAXCONN) != 0)
        throw_errno(LLC_ERR_SYSTEM, "listen() on the KVS server socket", errno);
    socklen_t len = sizeof(sa);
    if (::getsockname(listener_.get(), reinterpret_cast<sockaddr *>(&sa), &len) != 0)
        throw_errno(LLC_ERR_SYSTEM, "getsockname() of the KVS server socket", errno);
    address_ = publish_ip + ":" + std::to_string(ntohs(sa.sin_port));
    wake_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake_.valid())
        throw_errno(LLC_ERR_SYSTEM, "eventfd() for the KVS server", errno);
}

KvsServer::~KvsServer() { stop(); }

void KvsServer::start()
{
    if (!thread_.joinable())
        thread_ = std::thread([this] { run(); });
}

void KvsServer::stop()
{
    if (!thread_.joinable())
        return;
    stopping_ = true;
    uint64_t one = 1;
    ssize_t ignored = ::write(wake_.get(), &one, sizeof(one));
    (void)ignored;
    thread_.join();
}

void KvsServer::set_secret(const std::array<uint8_t, kSecretBytes> &secret)
{
    if (keyed_.load(std::memory_order_acquire))
        return;
    secret_ = secret;
    keyed_.store(true, std::memory_order_release);
    uint64_t one = 1; // wake the thread: requests that waited for the secret
    ssize_t ignored = ::write(wake_.get(), &one, sizeof(one));
    (void)ignored;
}

uint64_t KvsServer::store_bytes(uint64_t *entries) const
{
    std::lock_guard<std::mutex> lock(mutex_);
    // Node of an unordered_map<string, string>: next pointer, the pair, the cached hash.
    uint64_t b = uint64_t(store_.bucket_count()) * sizeof(void *);
    for (const auto &kv : store_) {
        b += sizeof(void *) + sizeof(kv) + sizeof(size_t);
        b += heap_bytes(kv.first) + heap_bytes(kv.second);
    }
    if (entries)
        *entries = store_.size();
    return b;
}

void KvsServer::run()
{
    std::vector<std::unique_ptr<Conn>> conns;
    std::vector<pollfd> fds;
    while (!stopping_) {
        fds.clear();
        fds.push_back(pollfd{wake_.get(), POLLIN, 0});
        fds.push_back(pollfd{listener_.get(), POLLIN, 0});
        uint64_t first_deadline = UINT64_MAX; // of the connections still to authenticate
        for (const auto &c : conns) {
            fds.push_back(pollfd{c->fd.get(), short(POLLIN | (c->out.empty() ? 0 : POLLOUT)), 0});
            if (!c->authed)
                first_deadline = std::min(first_deadline, c->accepted_us + auth_timeout_us_);
        }
        int timeout_ms = -1;
        if (first_deadline != UINT64_MAX) {
            uint64_t now = monotonic_us();
            timeout_ms = now >= first_deadline ? 0 : int(std::min<uint64_t>((first_deadline - now + 999) / 1000, 60000));
        }
        int n = ::poll(fds.data(), fds.size(), timeout_ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        bool keyed_now = false;
        if (fds[0].revents) {
            if (stopping_)
                break;
            uint64_t v;
            ssize_t ignored = ::read(wake_.get(), &v, sizeof(v)); // set_secret()
            (void)ignored;
            keyed_now = true;
        }
        const uint64_t now = monotonic_us();
        std::vector<std::unique_ptr<Conn>> keep;
        for (size_t i = 0; i < conns.size(); i++) {
            Conn &c = *conns[i];
            bool open = true;
            if (fds[i + 2].revents)
                open = serve(c, fds[i + 2].revents);
            else if (keyed_now && !c.authed)
                open = take_request(c); // a request that waited for the secret
            if (open && !c.authed && now >= c.accepted_us + auth_timeout_us_) {
                reject(c, "no authenticated request within " + std::to_string(auth_timeout_us_ / 1000) +
                              " ms (LLC_KVS_TIMEOUT_MS)");
                open = false;
            }
            if (open)
                keep.push_back(std::move(conns[i]));
        }
        conns.swap(keep);
        if (fds[1].revents & POLLIN)
            accept_all(conns);
    }
}

void KvsServer::accept_all(std::vector<std::unique_ptr<Conn>> &conns)
{
    size_t pending = 0;
    for (const auto &c : conns)
        pending += c->authed ? 0 : 1;
    while (conns.size() < kMaxServerConns) {
        sockaddr_in from{};
        socklen_t len = sizeof(from);
        int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr *>(&from), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            break;
        auto c = std::make_unique<Conn>();
        c->fd.reset(fd);
        char ip[INET_ADDRSTRLEN] = "?";
        ::inet_ntop(AF_INET, &from.sin_addr, ip, sizeof(ip));
        c->peer = std::string(ip) + ":" + std::to_string(ntohs(from.sin_port));
        c->accepted_us = monotonic_us();
        random_bytes(c->nonce_s.data(), c->nonce_s.size());
        c->out = encode_kvs_challenge(c->nonce_s.data());
        ssize_t w = ::send(fd, c->out.data(), c->out.size(), MSG_NOSIGNAL); // 20 bytes: a new socket takes them
        if (w > 0)
            c->out.erase(0, size_t(w));
        if (++pending > kMaxKvsPendingAuth) {
            // Too many strangers waiting: the oldest goes (a client of the
            // job that was among them retries on a new connection).
            for (auto it = conns.begin(); it != conns.end(); ++it)
                if (!(*it)->authed) {
                    reject(**it, "more than " + std::to_string(kMaxKvsPendingAuth) +
                                     " connections waiting to authenticate: the oldest is closed");
                    conns.erase(it);
                    pending--;
                    break;
                }
        }
        conns.push_back(std::move(c));
    }
}

void KvsServer::reject(Conn &c, const std::string &why)
{
    auth_rejected_.fetch_add(1, std::memory_order_relaxed);
    rejects_.note(rank_, c.peer, why);
}

bool KvsServer::serve(Conn &c, short revents)
{
    if ((revents & POLLOUT) && !c.out.empty()) {
        ssize_t w = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
        if (w < 0 && errno != EAGAIN && errno != EINTR) {
            if (!c.authed)
                reject(c, errno_message("send()", errno));
            return false;
        }
        if (w > 0)
            c.out.erase(0, size_t(w));
    }
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return true;
    char buf[4096];
    ssize_t r = ::recv(c.fd.get(), buf, sizeof(buf), 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return true;
    if (r <= 0) {
        // A client of the job closes after reading its reply.
        if (!c.authed)
            reject(c, r == 0 ? "closed the connection before proving it belongs to the job"
                             : errno_message("recv()", errno));
        return false;
    }
    if (c.authed)
        return false; // one request per connection: nothing may follow it
    c.in.append(buf, size_t(r));
    return take_request(c);
}

bool KvsServer::take_request(Conn &c)
{
    std::string proof;
    KvsRequest req;
    size_t len = 0;
    KvsParse got = peek_kvs_auth_request(c.in, proof, req, &len);
    if (got == KvsParse::NeedMore)
        return true;
    if (got == KvsParse::Bad) {
        reject(c, "bytes that are not a KVS request");
        return false;
    }
    if (c.in.size() > kKvsProofBytes + len) {
        reject(c, "bytes after its request");
        return false;
    }
    if (!keyed_.load(std::memory_order_acquire))
        return true; // this leader learns the secret after the init fence: the request waits (set_secret)
    const char *nonce_c = proof.data();
    Mac expect = kvs_mac(secret_, kMacLabelRequest, c.nonce_s.data(), nonce_c, c.in.data() + kKvsProofBytes, len);
    if (!same_bytes(expect.data(), proof.data() + kKvsNonceBytes, kKvsMacBytes)) {
        reject(c, "a request whose MAC is wrong (not made with this job's secret over our challenge)");
        return false;
    }
    c.authed = true;
    c.in.clear();
    std::string reply = req.job_tag != job_tag_ ? encode_kvs_reply(2, std::string()) : handle(req.op, req.key, req.value);
    Mac mac = kvs_mac(secret_, kMacLabelReply, c.nonce_s.data(), nonce_c, reply.data(), reply.size());
    c.out += reply;
    c.out.append(reinterpret_cast<const char *>(mac.data()), mac.size());
    ssize_t w = ::send(c.fd.get(), c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (w < 0 && errno != EAGAIN && errno != EINTR)
        return false;
    if (w > 0)
        c.out.erase(0, size_t(w));
    return true;
}

std::string KvsServer::handle(char op, const std::string &key, const std::string &value)
{
    std::string found;
    uint8_t status = 0;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (op == 'P') {
            std::string &slot = store_[key];
            slot = value;
            slot.shrink_to_fit(); // entries by their real size
        } else {
            auto it = store_.find(key);
            if (it == store_.end())
                status = 1;
            else
                found = it->second;
        }
    }
    return encode_kvs_reply(status, found);
}

// ------------------------------------------------------------------ client

namespace {

// Wait for events on fd until deadline; false on timeout.
bool wait_fd(int fd, short events, uint64_t deadline_us)
{
    for (;;) {
        uint64_t now = monotonic_us();
        if (now >= deadline_us)
            return false;
        pollfd p{fd, events, 0};
        int ms = int(std::min<uint64_t>((deadline_us - now + 999) / 1000, 1000));
        int n = ::poll(&p, 1, ms);
        if (n > 0)
            return true;
        if (n < 0 && errno != EINTR)
            return false;
    }
}

// Read what is there into in, waiting until deadline; false with *why set
// on a close, an error or the deadline (silent: what to say then).
bool recv_some(int fd, std::string &in, uint64_t deadline_us, std::string *why, const char *silent)
{
    for (;;) {
        char buf[4096];
        ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
        if (r > 0) {
            in.append(buf, size_t(r));
            return true;
        }
        if (r == 0) {
            *why = "the server closed the connection before replying";
            return false;
        }
        if (errno == EAGAIN || errno == EINTR) {
            if (!wait_fd(fd, POLLIN, deadline_us)) {
                *why = silent;
                return false;
            }
            continue;
        }
        *why = errno_message("recv()", errno);
        return false;
    }
}

// One attempt.  Returns the reply status (0/1/2) or -1 with *why set;
// *refused tells whether the connection was refused (nothing listens there).
int try_request(const sockaddr_in &sa, const std::array<uint8_t, kSecretBytes> &secret, const std::string &request,
                std::string *reply, uint64_t deadline_us, std::string *why, bool *refused)
{
    *refused = false;
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
        *why = errno_message("socket()", errno);
        return -1;
    }
    if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&sa), sizeof(sa)) != 0) {
        if (errno != EINPROGRESS) {
            *refused = errno == ECONNREFUSED;
            *why = errno_message("connect()", errno);
            return -1;
        }
        if (!wait_fd(fd.get(), POLLOUT, deadline_us)) {
            *why = "connect() did not complete";
            return -1;
        }
        int err = 0;
        socklen_t len = sizeof(err);
        ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            *refused = err == ECONNREFUSED;
            *why = errno_message("connect()", err);
            return -1;
        }
    }
    // The server's challenge first (it sends it on accept).
    std::string in;
    Nonce nonce_s{};
    for (;;) {
        KvsParse got = parse_kvs_challenge(in, nonce_s.data());
        if (got == KvsParse::Bad || (got == KvsParse::Done && in.size() > kKvsChallengeBytes)) {
            *why = "a malformed challenge (not a KVS server of ours?)";
            return -1;
        }
        if (got == KvsParse::Done)
            break;
        if (!recv_some(fd.get(), in, deadline_us, why, "no reply (not even the server's challenge)"))
            return -1;
    }
    in.clear();
    Nonce nonce_c{};
    random_bytes(nonce_c.data(), nonce_c.size());
    Mac mac = kvs_mac(secret, kMacLabelRequest, nonce_s.data(), nonce_c.data(), request.data(), request.size());
    std::string out(reinterpret_cast<const char *>(nonce_c.data()), nonce_c.size());
    out.append(reinterpret_cast<const char *>(mac.data()), mac.size());
    out += request;
    size_t sent = 0;
    while (sent < out.size()) {
        ssize_t w = ::send(fd.get(), out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
        if (w > 0) {
            sent += size_t(w);
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            if (!wait_fd(fd.get(), POLLOUT, deadline_us)) {
                *why = "sending the request timed out";
                return -1;
            }
            continue;
        }
        *why = errno_message("send()", errno);
        return -1;
    }
    for (;;) {
        uint8_t status = 0;
        std::string value, their_mac;
        size_t len = 0;
        KvsParse got = parse_kvs_auth_reply(in, status, value, &len, their_mac);
        if (got == KvsParse::Bad) {
            *why = "a malformed reply (not a KVS server of ours?)";
            return -1;
        }
        if (got == KvsParse::Done) {
            Mac expect = kvs_mac(secret, kMacLabelReply, nonce_s.data(), nonce_c.data(), in.data(), len);
            if (!same_bytes(expect.data(), their_mac.data(), kMacBytes)) {
                *why = "a reply that does not prove the server knows the job secret (not a KVS server of this job?)";
                return -1;
            }
            if (reply)
                *reply = std::move(value);
            return status;
        }
        if (!recv_some(fd.get(), in, deadline_us, why, "no reply"))
            return -1;
    }
}

} // namespace

int kvs_request(const std::string &server, int server_rank, uint32_t job_tag,
                const std::array<uint8_t, kSecretBytes> &secret, char op, const std::string &key,
                const std::string &value, std::string *reply, uint64_t deadline_us, uint64_t timeout_ms)
{
    std::string what = std::string(op == 'P' ? "put" : "lookup") + " of key \"" + key +
                       "\" at the KVS server of rank " + std::to_string(server_rank) + " (" + server + ")";
    sockaddr_in sa;
    if (!parse_ip_port(server, sa))
        throw Error(LLC_ERR_BOOTSTRAP, "LLC_KVS=dist: " + what + ": malformed server address");
    KvsRequest req;
    req.op = op;
    req.job_tag = job_tag;
    req.key = key;
    req.value = value;
    const std::string request = encode_kvs_request(req);
    std::string why = "no attempt made", earlier;
    int refusals = 0;
    for (;;) {
        bool refused = false;
        int status = try_request(sa, secret, request, reply, deadline_us, &why, &refused);
        if (status == 0 || status == 1)
            return status;
        if (status == 2)
            throw Error(LLC_ERR_PEER, "LLC_KVS=dist: " + what + ": the server rejected the request (a KVS server of another job on that port?)");
        // The server's process is gone: say so at once, naming it (the rank
        // whose entry was wanted was not even contacted: it is not to blame).
        refusals = refused ? refusals + 1 : 0;
        if (refusals >= kRefusalsMeanGone)
            throw Error(LLC_ERR_PEER, "LLC_KVS=dist: " + kvs_server_gone_message(server_rank, server, key));
        uint64_t now = monotonic_us();
        if (now >= deadline_us)
            break;
        if (!refused || earlier.empty())
            earlier = why;
        sleep_us(std::min(kRetryPauseUs, deadline_us - now));
    }
    // The last attempt may have been cut short by the deadline: also give
    // what the attempts before it ran into.
    if (!earlier.empty() && earlier != why)
        why += " (before: " + earlier + ")";
    throw Error(LLC_ERR_PEER, "LLC_KVS=dist: " + what + " failed for " + std::to_string(timeout_ms) +
                                  " ms (LLC_KVS_TIMEOUT_MS): " + why + "; is that node leader (rank " +
                                  std::to_string(server_rank) + ") alive and reachable?");
}

std::string kvs_server_gone_message(int server_rank, const std::string &server, const std::string &key)
{
    return "rank " + std::to_string(server_rank) + " (a node leader) is gone: its KVS server at " + server +
           " refused the connection (nothing listens there any more: the process died or was killed), so "
           "key \"" + key + "\" that it holds cannot be looked up; the process that key belongs to was not "
           "contacted and is not known to have failed";
}

// ------------------------------------------------------------ address book

AddressBook::AddressBook(const Config &config, Bootstrap &boot, int rank, const NodeMap &node_of_rank,
                         const std::string &job_id)
    : config_(config), boot_(boot), rank_(rank), dist_(config.kvs == Config::Kvs::Dist), job_tag_(kvs_job_tag(job_id))
{
    if (!dist_)
        return;
    // Leader (lowest rank) of each node, in increasing node-id order.
    const int n = node_of_rank.size();
    int max_node = 0;
    for (int r = 0; r < n; r++)
        max_node = std::max(max_node, node_of_rank.node_of(r));
    if (max_node < 4 * n) {
        std::vector<int> leader_by_node(size_t(max_node) + 1, -1); // temporary
        for (int r = n - 1; r >= 0; r--)
            leader_by_node[size_t(node_of_rank.node_of(r))] = r;
        for (int leader : leader_by_node)
            if (leader >= 0)
                leaders_.push_back(leader);
    } else { // sparse node ids
        std::map<int, int> leader_of_node;
        for (int r = n - 1; r >= 0; r--)
            leader_of_node[node_of_rank.node_of(r)] = r;
        for (const auto &kv : leader_of_node)
            leaders_.push_back(kv.second);
    }
    leaders_.shrink_to_fit();
    secret_ = std::make_unique<JobSecret>(boot_, rank_, kSecretKey); // rank 0 puts it now, before the init fence
    if (node_of_rank.leader() == rank)
        // The server is tcp; with LLC_NET=udp and LLC_UDP_ADDR set, that is the address the peers reach.
        server_ = std::make_unique<KvsServer>(config.net == Config::Net::Udp && !config.udp_addr.empty()
                                                  ? choose_publish_address(config.udp_addr, "LLC_UDP_ADDR")
                                                  : choose_publish_address(config.tcp_addr),
                                              job_tag_, rank, config.kvs_timeout_ms);
}

AddressBook::~AddressBook() = default;

void AddressBook::start()
{
    if (!server_)
        return;
    server_->start();
    boot_.put(server_key(rank_), server_->address());
}

void AddressBook::publish(AddrKind kind, const std::string &addr)
{
    if (!dist_) {
        boot_.put(pmi_key(kind, rank_), addr);
        return;
    }
    own_[int(kind)] = addr;
}

size_t AddressBook::owner_index(const std::string &key, size_t nodes) { return size_t(fnv1a64(key) % nodes); }

int AddressBook::owner_of(const std::string &key) const { return leaders_[owner_index(key, leaders_.size())]; }

const std::string &AddressBook::server_address(int leader)
{
    auto it = server_addr_.find(leader);
    if (it == server_addr_.end())
        it = server_addr_.emplace(leader, boot_.get(leader, server_key(leader))).first; // once per server used
    return it->second;
}

void AddressBook::learn_secret()
{
    if (!dist_)
        return;
    const auto &k = secret_->secret(); // a bootstrap get, the first time
    if (server_)
        server_->set_secret(k);
}

void AddressBook::commit()
{
    if (!dist_)
        return;
    learn_secret();
    std::string key = entry_key(rank_);
    int owner = owner_of(key);
    uint64_t deadline = monotonic_us() + config_.kvs_timeout_ms * 1000;
    kvs_request(server_address(owner), owner, job_tag_, secret_->secret(), 'P', key, encode_kvs_entry(KvsEntry{own_[0], own_[1], own_[2]}), nullptr, deadline,
                config_.kvs_timeout_ms);
    own_[0].clear();
    own_[0].shrink_to_fit();
    own_[1].clear();
    own_[1].shrink_to_fit();
    own_[2].clear();
    own_[2].shrink_to_fit();
}

std::string AddressBook::lookup(int rank, AddrKind kind)
{
    if (!dist_)
        return boot_.get(rank, pmi_key(kind, rank));
    auto it = cache_.find(rank);
    if (it != cache_.end()) {
        lru_.splice(lru_.begin(), lru_, it->second);
    } else {
        std::string key = entry_key(rank);
        int owner = owner_of(key);
        uint64_t deadline = monotonic_us() + config_.kvs_timeout_ms * 1000;
        std::string value;
        remote_lookups_++;
        learn_secret();
        if (kvs_request(server_address(owner), owner, job_tag_, secret_->secret(), 'G', key, "", &value, deadline, config_.kvs_timeout_ms) != 0)
            throw Error(LLC_ERR_PEER, "LLC_KVS=dist: lookup of key \"" + key + "\" at the KVS server of rank " +
                                          std::to_string(owner) + ": no such key (rank " + std::to_string(rank) +
                                          " never stored its addresses)");
        KvsEntry entry;
        if (!parse_kvs_entry(value, entry))
            throw Error(LLC_ERR_PEER, "LLC_KVS=dist: key \"" + key + "\" at the KVS server of rank " +
                                          std::to_string(owner) + " holds a malformed entry \"" + value + "\"");
        CacheEntry parsed{rank, std::move(entry.tcp), std::move(entry.udp), std::move(entry.verbs)};
        if (config_.kvs_cache == 0) {
            std::string addr = parsed.of(kind);
            if (addr.empty())
                throw Error(LLC_ERR_PEER, "rank " + std::to_string(rank) + " published no " + kind_name(kind) +
                                              " address (is LLC_NET the same on every process?)");
            return addr;
        }
        while (cache_.size() >= config_.kvs_cache) {
            cache_.erase(lru_.back().rank);
            lru_.pop_back();
        }
        lru_.push_front(std::move(parsed));
        cache_[rank] = lru_.begin();
    }
    const CacheEntry &e = lru_.front();
    const std::string &addr = e.of(kind);
    if (addr.empty())
        throw Error(LLC_ERR_PEER, "rank " + std::to_string(rank) + " published no " + kind_name(kind) +
                                      " address (is LLC_NET the same on every process?)");
    return addr;
}

uint64_t AddressBook::cache_bytes(uint64_t *entries) const
{
    // list node: two pointers + entry; map node: next pointer + pair (+ no cached hash for int keys).
    uint64_t b = uint64_t(cache_.bucket_count()) * sizeof(void *);
    for (const CacheEntry &e : lru_) {
        b += 2 * sizeof(void *) + sizeof(CacheEntry);
        b += heap_bytes(e.tcp) + heap_bytes(e.udp) + heap_bytes(e.verbs);
        b += sizeof(void *) + sizeof(std::pair<const int, std::list<CacheEntry>::iterator>);
    }
    b += uint64_t(leaders_.capacity()) * sizeof(int);
    b += uint64_t(server_addr_.bucket_count()) * sizeof(void *);
    for (const auto &kv : server_addr_)
        b += sizeof(void *) + sizeof(kv) + heap_bytes(kv.second);
    if (entries)
        *entries = lru_.size();
    return b;
}

} // namespace llc
