// In-process transport for the Alltoall tests: `size` threads act as the
// ranks of one communicator and talk through llc_coll_p2p_t (per-rank
// mailboxes guarded by a mutex + condition variable; sends are eager, a
// receive takes the oldest message with its (source, tag), so traffic is
// non-overtaking as in MPI).  Optional fake clock: wtime() returns a per-rank
// counter that every send advances by cost(tag, bytes).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "llc_coll.h"

namespace a2a_test {

class Net {
  public:
    using Cost = std::function<double(int tag, size_t bytes)>;

    explicit Net(int size);
    int size() const { return size_; }
    const llc_coll_p2p_t *p2p(int rank) const { return &eps_[rank].p2p; }
    // Runs fn(rank) on one thread per rank and joins them.
    void run(const std::function<void(int rank)> &fn);
    // Fake clock (nullptr: the real monotonic clock).  Set between runs.
    void set_cost(Cost c) { cost_ = std::move(c); }
    double clock(int rank) const { return eps_[rank].clock; }
    size_t pending();  // messages never received
    int errors() const { return errors_; }
    // Supplies p2p->native_alltoall (a plain exchange with tag kNativeTag,
    // standing in for the MPI's own Alltoall) on every rank.  Set between runs.
    static constexpr int kNativeTag = 999;
    void enable_native(bool on);
    long native_calls() const { return native_calls_; }

  private:
    struct Msg {
        int src, tag;
        std::vector<char> data;
    };
    struct Box {
        std::mutex mu;
        std::condition_variable cv;
        std::deque<Msg> q;
    };
    struct Req {
        bool is_recv;
        void *buf;
        size_t bytes;
        int peer, tag;
    };
    struct Ep {
        Net *net;
        int rank;
        double clock = 0;
        llc_coll_p2p_t p2p;
    };
    static int send(void *arg, const void *buf, size_t bytes, int dest, int tag);
    static int recv(void *arg, void *buf, size_t bytes, int src, int tag);
    static int isend(void *arg, const void *buf, size_t bytes, int dest, int tag, void **req);
    static int irecv(void *arg, void *buf, size_t bytes, int src, int tag, void **req);
    static int waitall(void *arg, int n, void **reqs);
    static int barrier(void *arg);
    static double wtime(void *arg);
    static int native_alltoall(void *arg, const void *sendbuf, void *recvbuf, size_t bytes);

    int size_;
    std::vector<Box> boxes_;
    std::vector<Ep> eps_;
    Cost cost_;
    std::mutex bmu_;
    std::condition_variable bcv_;
    int bcount_ = 0;
    long bgen_ = 0;
    std::atomic<int> errors_{0};
    std::atomic<long> native_calls_{0};
};

}  // namespace a2a_test
