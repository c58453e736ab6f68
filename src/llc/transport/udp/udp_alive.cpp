// udp_alive.cpp - the alive responder (udp_alive.hpp).
#include "transport/udp/udp_alive.hpp"

#include "core/errors.hpp"
#include "transport/udp/udp_datagram.hpp"
#include "transport/udp/udp_transport.hpp"

#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace llc {

uint64_t udp_pair_token(const std::array<uint8_t, kSecretBytes> &secret, int src, int dst)
{
    Mac m = hmac_sha256(secret, MacInput("llc-udp-pair-1").add_int(src).add_int(dst));
    uint64_t t;
    std::memcpy(&t, m.data(), sizeof(t));
    return t;
}

UdpAliveResponder::UdpAliveResponder()
{
    sock_.reset(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!sock_.valid())
        throw_errno(LLC_ERR_SYSTEM, "socket() for the udp alive responder", errno);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    if (::bind(sock_.get(), reinterpret_cast<sockaddr *>(&sa), sizeof(sa)) != 0)
        throw_errno(LLC_ERR_SYSTEM, "bind() of the udp alive responder's socket to 0.0.0.0", errno);
    socklen_t len = sizeof(sa);
    if (::getsockname(sock_.get(), reinterpret_cast<sockaddr *>(&sa), &len) != 0)
        throw_errno(LLC_ERR_SYSTEM, "getsockname() of the udp alive responder's socket", errno);
    port_ = ntohs(sa.sin_port);
    wake_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!wake_.valid())
        throw_errno(LLC_ERR_SYSTEM, "eventfd() for the udp alive responder", errno);
}

UdpAliveResponder::~UdpAliveResponder()
{
    if (!thread_.joinable())
        return;
    uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof(one));
    thread_.join();
}

void UdpAliveResponder::start(int rank, int size, uint32_t job_tag, const std::array<uint8_t, kSecretBytes> &secret)
{
    if (thread_.joinable())
        return;
    rank_ = rank;
    size_ = size;
    job_tag_ = job_tag;
    secret_ = secret;
    thread_ = std::thread([this] { run(); });
}

void UdpAliveResponder::run()
{
    alignas(8) char buf[2 * sizeof(UdpHeader)];
    for (;;) {
        pollfd p[2] = {{sock_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
        if (::poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            return;
        }
        if (p[1].revents)
            return;
        if (!(p[0].revents & POLLIN))
            continue;
        sockaddr_in from{};
        socklen_t from_len = sizeof(from);
        ssize_t n = ::recvfrom(sock_.get(), buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC,
                               reinterpret_cast<sockaddr *>(&from), &from_len);
        if (n < 0)
            continue;
        answer(buf, size_t(n), &from, from_len);
    }
}

// Only an AliveProbe of exactly a header, of this job, addressed to this
// rank by another with the right pair token is answered.
void UdpAliveResponder::answer(const char *buf, size_t len, const void *from, unsigned from_len)
{
    UdpHeader h;
    if (len != sizeof(UdpHeader) || read_udp_header(buf, len, job_tag_, size_, rank_, h) != UdpHeaderCheck::Ok ||
        h.type != uint8_t(UdpType::AliveProbe) || h.token != udp_pair_token(secret_, h.src, rank_)) {
        dropped_.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    UdpHeader a{};
    a.magic = kUdpMagic;
    a.type = uint8_t(UdpType::Alive);
    a.src = rank_;
    a.dst = h.src;
    a.job_tag = job_tag_;
    a.psn = h.psn; // the probe's number, echoed
    a.token = udp_pair_token(secret_, rank_, h.src);
    if (::sendto(sock_.get(), &a, sizeof(a), MSG_DONTWAIT, static_cast<const sockaddr *>(from), socklen_t(from_len)) ==
        ssize_t(sizeof(a)))
        answered_.fetch_add(1, std::memory_order_relaxed);
}

} // namespace llc
