// In-process "network" implementing llc_coll_p2p_t for N threads acting as
// the ranks of one communicator: per-destination queues + condition
// variables.  Sends are buffered (complete at once); receives match the
// first queued message with the same (source, tag), so messages between a
// pair with one tag are non-overtaking as in MPI.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "llc_coll.h"

namespace llc_test {

class ThreadNet {
  public:
    explicit ThreadNet(int size);
    int size() const { return size_; }
    // the p2p of rank `r` (valid as long as the ThreadNet)
    const llc_coll_p2p_t *p2p(int r) const { return &eps_[r].p2p; }
    // a simple barrier over all ranks (for the tests, not part of p2p timing)
    void barrier();
    // messages still queued (should be 0 when a test ends)
    size_t pending();

  private:
    struct Msg {
        int src, tag;
        std::vector<unsigned char> data;
    };
    struct Box {
        std::mutex mu;
        std::condition_variable cv;
        std::deque<Msg> q;
    };
    struct RecvReq {
        void *buf;
        size_t bytes;
        int src, tag;
    };
    struct Endpoint {
        ThreadNet *net;
        int rank;
        llc_coll_p2p_t p2p;
        // receives posted and not completed, owned here: a collective that
        // ends in an error may leave one behind (the p2p has no cancel)
        std::unordered_map<RecvReq *, std::unique_ptr<RecvReq>> open;
    };
    static int send(void *arg, const void *buf, size_t bytes, int dest, int tag);
    static int recv(void *arg, void *buf, size_t bytes, int src, int tag);
    static int isend(void *arg, const void *buf, size_t bytes, int dest, int tag, void **req);
    static int irecv(void *arg, void *buf, size_t bytes, int src, int tag, void **req);
    static int waitall(void *arg, int n, void **reqs);
    static int test(void *arg, void *req, int *done);
    static int barrier_fn(void *arg);
    static double wtime(void *arg);

    int size_;
    std::vector<Box> boxes_;
    std::vector<Endpoint> eps_;
    std::mutex bmu_;
    std::condition_variable bcv_;
    int bcount_ = 0;
    unsigned long bgen_ = 0;
};

}  // namespace llc_test
