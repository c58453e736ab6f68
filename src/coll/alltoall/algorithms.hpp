// The nine Alltoall algorithms of the dynamic selection (Kurokawa's report), written
// against llc_coll_p2p_t.  Every function moves `bytes` bytes from block j of
// `sendbuf` to block `rank` of `recvbuf` on rank j, for any communicator size.
// `sendbuf` and `recvbuf` must not overlap (llc_coll_alltoall handles "in
// place" by copying the send data first).  Return 0 or the p2p error code.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "llc_coll.h"

namespace llc::coll::alltoall {

enum class Alg : int {
    bruck = 0,
    pairwise,
    pairwise_lb,  // light barrier: zero-byte ready token between the step partners
    pairwise_mb,  // MPI barrier (p2p->barrier) before every step
    pairwise_ob,  // one barrier after all receives are pre-posted
    ring,
    ring_lb,
    ring_mb,
    ring_ob,
    // Not one of the nine: the MPI's own Alltoall (p2p->native_alltoall),
    // timed as a tenth candidate when the caller supplies it.  No model
    // predicts it, so pruning never drops it.
    native,
};
constexpr int kNumAlgs = 9;  // the modelled nine (bruck .. ring_ob)

const char *alg_name(Alg a);  // native: "mpich"
// Parses one of the nine names; false if unknown ("mpich" is not an
// algorithm of this library: LLC_ALLTOALL=mpich declines the call).
bool alg_from_name(const std::string &name, Alg *out);

// Tags: each algorithm uses kTagBase + 8 * alg + {0: data, 1: token}.
constexpr int kTagBase = 1000;
constexpr int kTagsPerAlg = 8;
inline int alg_tag(Alg a, int sub) { return kTagBase + kTagsPerAlg * static_cast<int>(a) + sub; }
// The algorithm a tag belongs to (-1 if it is not an Alltoall algorithm tag).
inline int alg_of_tag(int tag)
{
    int i = (tag - kTagBase) / kTagsPerAlg;
    return (tag >= kTagBase && i < kNumAlgs) ? i : -1;
}

// Partner schedule of step i (1 <= i < size): send to dst, receive from src.
// pairwise: XOR exchange when size is a power of two, otherwise the
// (rank + i) / (rank - i) shift; ring: always the shift.
void step_partners(Alg a, int rank, int size, int i, int *dst, int *src);

// Working memory kept from one call to the next: a call that needs a buffer
// (Bruck's rotated copy and round buffers, the copy of an in-place call)
// neither zero-fills it nor faults in fresh pages each time.  At 1 MiB per
// rank and 8 ranks, fresh zeroed vectors made a Bruck call 20 times slower
// than a pairwise one: the time went to memset and page faults, not messages.
class Scratch {
  public:
    // At least `bytes` bytes, contents undefined; valid until the next get()
    // or release().
    char *get(size_t bytes);
    void release();
    size_t capacity() const { return cap_; }

  private:
    std::unique_ptr<char[]> buf_;
    size_t cap_ = 0;
};

// Alg::native calls p2p->native_alltoall (LLC_COLL_ERR_ARG if it is NULL).
// `scratch` (may be null: a temporary is used) serves Bruck's buffers.
int run(Alg a, const llc_coll_p2p_t *p2p, const void *sendbuf, void *recvbuf, size_t bytes,
        Scratch *scratch = nullptr);

}  // namespace llc::coll::alltoall
