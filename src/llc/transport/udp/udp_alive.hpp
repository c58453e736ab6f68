// udp_alive.hpp - a thread that tells a process's udp senders and receivers
// that it is alive while it is away from the library (udp_transport.hpp,
// "Computing peers").
//
// Over udp only a progressed endpoint reads its socket and acknowledges, so
// a rank that computed for longer than LLC_UDP_PEER_TIMEOUT_MS before it
// received what a peer had sent it looked dead to that peer.  Each process
// therefore has a second, small udp socket, published with its udp address
// ("ip:port,alive_port"), and this thread blocked on it.  A peer that has
// heard nothing from the process for a quarter of the timeout sends an
// AliveProbe there; the thread answers Alive to the probe's source (the
// peer's own socket), and the peer restarts its silence.  The thread touches
// nothing of the transport: it needs only the job's tag and secret, read
// once when it starts.  So only a process whose threads are all stopped
// (SIGSTOP, a debugger), or whose host is gone, leaves a peer without an
// answer, as over tcp.  Probes from strangers (wrong job, wrong pair token,
// malformed) are dropped and counted, never answered.
#pragma once

#include "auth/job_secret.hpp"
#include "support/unique_fd.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <thread>

namespace llc {

// The pair token of (src, dst) under the job secret (UdpHeader::token).
uint64_t udp_pair_token(const std::array<uint8_t, kSecretBytes> &secret, int src, int dst);

class UdpAliveResponder {
public:
    // Binds the socket (any address, an ephemeral port); the thread starts in start().
    UdpAliveResponder();
    ~UdpAliveResponder(); // stops and joins the thread
    UdpAliveResponder(const UdpAliveResponder &) = delete;
    UdpAliveResponder &operator=(const UdpAliveResponder &) = delete;

    uint16_t port() const { return port_; }
    // After the init fence, once the job secret is known: answer probes to
    // `rank` of a job of `size` ranks with this tag.
    void start(int rank, int size, uint32_t job_tag, const std::array<uint8_t, kSecretBytes> &secret);

    uint64_t answered() const { return answered_.load(std::memory_order_relaxed); }
    uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

private:
    void run();
    void answer(const char *buf, size_t len, const void *from, unsigned from_len);

    UniqueFd sock_;
    UniqueFd wake_; // eventfd: the destructor
    uint16_t port_ = 0;
    int rank_ = -1, size_ = 0;
    uint32_t job_tag_ = 0;
    std::array<uint8_t, kSecretBytes> secret_{};
    std::atomic<uint64_t> answered_{0};
    std::atomic<uint64_t> dropped_{0};
    std::thread thread_;
};

} // namespace llc
