// udp_node_socket.cpp - see udp_node_socket.hpp.
#include "transport/udp/udp_node_socket.hpp"

#include "core/clock.hpp"
#include "core/errors.hpp"
#include "llc.h"
#include "support/shared_segment.hpp"
#include "support/string_hash.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

namespace llc {

namespace {

constexpr char kShareMagic[8] = {'L', 'L', 'C', 'U', 'D', 'P', 'F', 'D'};
constexpr size_t kMaxAddrLen = 128;

struct UnixAddress {
    sockaddr_un sa{};
    socklen_t len = 0;
};

UnixAddress abstract_address(const std::string &name)
{
    UnixAddress a;
    a.sa.sun_family = AF_UNIX;
    size_t n = std::min(name.size(), sizeof(a.sa.sun_path));
    std::memcpy(a.sa.sun_path, name.data(), n); // name starts with NUL: abstract
    a.len = socklen_t(offsetof(sockaddr_un, sun_path) + n);
    return a;
}


} // namespace

std::string UdpNodeSocket::socket_name(const std::string &job_id, int rank)
{
    char buf[64];
    std::snprintf(buf, sizeof(buf), "llc-%016llx-udp-%d", (unsigned long long)fnv1a64(job_id), rank);
    return std::string(1, '\0') + buf;
}

std::string UdpNodeSocket::buffers_name(const std::string &job_id, int node)
{
    return shm_name_for(job_id, "node" + std::to_string(node) + "-udprx");
}

UdpNodeSocket::UdpNodeSocket(const std::string &job_id, int node, int rank, std::vector<int> local_ranks,
                             uint32_t slots, uint32_t slot_bytes)
    : job_id_(job_id), node_(node), rank_(rank), local_ranks_(std::move(local_ranks)), slots_(slots),
      slot_bytes_(slot_bytes)
{
    std::sort(local_ranks_.begin(), local_ranks_.end());
    if (!is_local(rank_))
        throw Error(LLC_ERR_STATE, "udp node socket: rank " + std::to_string(rank_) + " is not on its own node");
    my_index_ = index_of(rank_);
    own_.reset(::socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!own_.valid())
        throw_errno(LLC_ERR_SYSTEM, "socket(AF_UNIX) for the udp hand-over socket", errno);
    UnixAddress a = abstract_address(socket_name(job_id_, rank_));
    if (::bind(own_.get(), reinterpret_cast<sockaddr *>(&a.sa), a.len) != 0)
        throw_errno(LLC_ERR_SYSTEM,
                    "bind() of the udp hand-over socket (abstract name " + socket_name(job_id_, rank_).substr(1) +
                        "; another process of this job with the same rank?)",
                    errno);
    if (is_leader())
        queues_ = HandoverQueues::create(buffers_name(job_id_, node_), rank_, uint32_t(local_ranks_.size()), slots_,
                                         slot_bytes_);
}

UdpNodeSocket::~UdpNodeSocket() { queues_.close(my_index_); }

uint32_t UdpNodeSocket::index_of(int rank) const
{
    return uint32_t(std::lower_bound(local_ranks_.begin(), local_ranks_.end(), rank) - local_ranks_.begin());
}

bool UdpNodeSocket::is_local(int rank) const
{
    return std::binary_search(local_ranks_.begin(), local_ranks_.end(), rank);
}

void UdpNodeSocket::share(int udp_fd, const std::string &addr, uint64_t timeout_ms)
{
    if (addr.size() > kMaxAddrLen)
        throw Error(LLC_ERR_STATE, "udp node socket: address too long: " + addr);
    for (int r : local_ranks_) {
        if (r == rank_)
            continue;
        UnixAddress to = abstract_address(socket_name(job_id_, r));
        iovec iov[2] = {{const_cast<char *>(kShareMagic), sizeof(kShareMagic)},
                        {const_cast<char *>(addr.data()), addr.size()}};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        msghdr mh{};
        mh.msg_name = &to.sa;
        mh.msg_namelen = to.len;
        mh.msg_iov = iov;
        mh.msg_iovlen = 2;
        mh.msg_control = control;
        mh.msg_controllen = sizeof(control);
        cmsghdr *c = CMSG_FIRSTHDR(&mh);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &udp_fd, sizeof(int));
        const uint64_t deadline = monotonic_us() + timeout_ms * 1000;
        for (;;) {
            if (::sendmsg(own_.get(), &mh, MSG_NOSIGNAL) >= 0)
                break;
            int err = errno;
            if (err == EINTR)
                continue;
            if ((err == EAGAIN || err == EWOULDBLOCK) && monotonic_us() < deadline) {
                sleep_us(1000);
                continue;
            }
            throw_errno(LLC_ERR_SYSTEM,
                        "LLC_UDP_SHARED_RECV=1: the node leader (rank " + std::to_string(rank_) +
                            ") could not pass the node's udp socket to rank " + std::to_string(r) +
                            " (has it failed in MPI_Init? set LLC_UDP_SHARED_RECV=0 to give every process its own "
                            "socket)",
                        err);
        }
    }
}

UniqueFd UdpNodeSocket::receive(std::string &addr, uint64_t timeout_ms)
{
    const int leader = local_ranks_.front();
    const uint64_t deadline = monotonic_us() + timeout_ms * 1000;
    for (;;) {
        char data[sizeof(kShareMagic) + kMaxAddrLen];
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        iovec iov{data, sizeof(data)};
        msghdr mh{};
        mh.msg_iov = &iov;
        mh.msg_iovlen = 1;
        mh.msg_control = control;
        mh.msg_controllen = sizeof(control);
        ssize_t n = ::recvmsg(own_.get(), &mh, MSG_CMSG_CLOEXEC);
        if (n < 0) {
            int err = errno;
            if (err == EINTR)
                continue;
            if (err != EAGAIN && err != EWOULDBLOCK)
                throw_errno(LLC_ERR_SYSTEM, "recvmsg() on the udp hand-over socket", err);
            uint64_t now = monotonic_us();
            if (now >= deadline)
                throw Error(LLC_ERR_BOOTSTRAP,
                            "LLC_UDP_SHARED_RECV=1: the node leader (rank " + std::to_string(leader) +
                                ") did not pass the node's udp socket within " + std::to_string(timeout_ms) +
                                " ms (LLC_KVS_TIMEOUT_MS); did it fail in MPI_Init, or is LLC_UDP_SHARED_RECV not "
                                "the same on every process?");
            pollfd p{own_.get(), POLLIN, 0};
            ::poll(&p, 1, int(std::min<uint64_t>((deadline - now) / 1000 + 1, 100)));
            continue;
        }
        int fd = -1;
        for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(sizeof(int)))
                std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
        UniqueFd got(fd);
        if (size_t(n) < sizeof(kShareMagic) || std::memcmp(data, kShareMagic, sizeof(kShareMagic)) != 0 ||
            (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || !got.valid())
            continue; // not the leader's message (nothing else is sent before the second fence)
        addr.assign(data + sizeof(kShareMagic), size_t(n) - sizeof(kShareMagic));
        queues_ = HandoverQueues::open(buffers_name(job_id_, node_), leader, uint32_t(local_ranks_.size()), slots_,
                                       slot_bytes_);
        return got;
    }
}

bool UdpNodeSocket::knock_refused(int rank)
{
    UnixAddress to = abstract_address(socket_name(job_id_, rank));
    for (;;) {
        if (::sendto(own_.get(), "", 0, MSG_DONTWAIT | MSG_NOSIGNAL, reinterpret_cast<sockaddr *>(&to.sa), to.len) >= 0)
            return false;
        if (errno == EINTR)
            continue;
        return errno == ECONNREFUSED || errno == ENOENT;
    }
}

UdpNodeSocket::Handover UdpNodeSocket::hand_over(int dst, const sockaddr_in &from, const char *datagram, size_t len)
{
    bool sleeping = false;
    switch (queues_.put(index_of(dst), from, datagram, len, &sleeping)) {
    case HandoverQueues::Put::Done:
        if (sleeping)
            knock_refused(dst); // ring: it polls its unix socket
        return Handover::Sent;
    case HandoverQueues::Put::Closed:
        return Handover::Gone;
    case HandoverQueues::Put::Full:
        break;
    }
    // Full: nobody empties an inbox whose process died without closing it.
    return knock_refused(dst) ? Handover::Gone : Handover::Full;
}

size_t UdpNodeSocket::take_handed_over(char *buf, size_t cap, sockaddr_in &from)
{
    return queues_.take(my_index_, buf, cap, from);
}

bool UdpNodeSocket::prepare_sleep()
{
    queues_.set_sleeping(my_index_, true);
    if (queues_.empty(my_index_))
        return true;
    queues_.set_sleeping(my_index_, false);
    return false;
}

void UdpNodeSocket::finish_sleep()
{
    queues_.set_sleeping(my_index_, false);
    char b[64];
    while (::recv(own_.get(), b, sizeof(b), MSG_DONTWAIT) >= 0)
        ;
}

std::string UdpNodeSocket::describe() const
{
    return "udp: one socket per node (LLC_UDP_SHARED_RECV=1), shared by the " + std::to_string(local_ranks_.size()) +
           " processes of this node, " + (is_leader() ? "created by this process (node leader)" : "passed by the node leader (rank " + std::to_string(local_ranks_.front()) + ")") +
           "; its kernel receive buffer (LLC_UDP_SOCKBUF) is the node's, not counted here";
}

} // namespace llc
