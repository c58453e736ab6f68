// udp_node_socket.hpp - one udp receive socket per node shared by the node's
// processes (LLC_UDP_SHARED_RECV=1): the DC-class receive queue of the
// memory-saving design of Yamaguchi et al. (doc/references.md: receive
// buffers of the connectionless queues shared by the node's processes), in sockets.
//
// The node leader creates the udp socket as usual, and the node's receive
// buffers (udp_handover.hpp: one inbox per process in a shared-memory
// segment).  After the first init fence it passes the socket (SCM_RIGHTS)
// and its address to every other process of the node on that process's
// unix datagram socket (abstract name, bound before the first fence), and
// they map the buffers.  From then on the node has one udp address, one
// receive queue and one kernel receive buffer (LLC_UDP_SOCKBUF) instead of
// one per process.  Whoever of the node's processes reads a datagram
// addressed to another local rank (UdpHeader::dst) copies it into that
// rank's inbox, and rings its unix socket if it sleeps in poll().  A
// process that has left (its inbox closed, or full and its unix socket
// gone) is answered for by the reader (UdpType::Gone).
#pragma once

#include "transport/udp/udp_handover.hpp"
#include "support/unique_fd.hpp"

#include <netinet/in.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace llc {

class UdpNodeSocket {
public:
    // Before the first init fence.  local_ranks: the ranks of this node
    // (this process and the leader, its lowest, among them).  Binds this
    // process's unix socket; the leader also creates the node's receive
    // buffers: `slots` per process of slot_bytes (UdpHeader + LLC_UDP_MTU).
    // Throws Error.
    UdpNodeSocket(const std::string &job_id, int node, int rank, std::vector<int> local_ranks, uint32_t slots,
                  uint32_t slot_bytes);
    UdpNodeSocket(const UdpNodeSocket &) = delete;
    UdpNodeSocket &operator=(const UdpNodeSocket &) = delete;
    ~UdpNodeSocket(); // closes this process's inbox: the node answers Gone for it

    bool is_leader() const { return rank_ == local_ranks_.front(); }
    bool is_local(int rank) const;
    size_t processes() const { return local_ranks_.size(); }

    // After the first init fence.  Leader: send the udp socket and its
    // address to every other process of the node.  Throws Error.
    void share(int udp_fd, const std::string &addr, uint64_t timeout_ms);
    // After the first init fence, not the leader: wait for the leader's
    // socket (at most timeout_ms) and map the node's receive buffers.
    // Throws Error naming the leader.
    UniqueFd receive(std::string &addr, uint64_t timeout_ms);
    // After the second init fence (leader): remove the buffers' name.
    void release_name() { queues_.unlink_name(); }

    enum class Handover { Sent, Gone, Full };
    // Give datagram (len bytes, received from `from`) to local rank dst.
    Handover hand_over(int dst, const sockaddr_in &from, const char *datagram, size_t len);
    // A datagram another process handed to this one: its length (from
    // filled in), 0 when there is none.
    size_t take_handed_over(char *buf, size_t cap, sockaddr_in &from);

    int fd() const { return own_.get(); } // poll it for input (the doorbell)
    // Before blocking in poll(): false if a datagram is waiting already.
    bool prepare_sleep();
    // After it: no longer sleeping; the doorbell's bytes are read.
    void finish_sleep();

    // Memory report: bytes this object owns on the heap, and one line
    // saying how the node's socket is shared.
    uint64_t heap_bytes() const { return job_id_.capacity() + local_ranks_.capacity() * sizeof(int); }
    std::string describe() const;
    const HandoverQueues &queues() const { return queues_; }

    static std::string socket_name(const std::string &job_id, int rank); // abstract (leading NUL)
    static std::string buffers_name(const std::string &job_id, int node);

private:
    uint32_t index_of(int rank) const; // in local_ranks_
    // Zero bytes to rank's unix socket: a doorbell while it sleeps, and a
    // probe: true if refused (the process has left or died).
    bool knock_refused(int rank);

    std::string job_id_;
    int node_;
    int rank_;
    std::vector<int> local_ranks_;
    uint32_t my_index_ = 0;
    uint32_t slots_;
    uint32_t slot_bytes_;
    UniqueFd own_;          // this process's unix socket: the leader's socket arrives on it, then doorbells
    HandoverQueues queues_; // the node's receive buffers
};

} // namespace llc
