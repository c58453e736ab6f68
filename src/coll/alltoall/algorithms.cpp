// The nine Alltoall algorithms over llc_coll_p2p_t (see algorithms.hpp and
// doc/coll-alltoall.md for the reading of the barrier variants).
#include "alltoall/algorithms.hpp"

#include <cstring>
#include <vector>

namespace llc::coll::alltoall {
namespace {

const char *const kNames[kNumAlgs] = {"bruck",       "pairwise", "pairwise_lb",
                                      "pairwise_mb", "pairwise_ob", "ring",
                                      "ring_lb",     "ring_mb",  "ring_ob"};

bool is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

char *block(void *buf, int j, size_t bytes) { return static_cast<char *>(buf) + j * bytes; }
const char *block(const void *buf, int j, size_t bytes)
{
    return static_cast<const char *>(buf) + j * bytes;
}

void copy_bytes(void *dst, const void *src, size_t n)
{
    if (n)
        std::memcpy(dst, src, n);
}

enum class Sync { none, light, mpi, one };

Sync sync_of(Alg a)
{
    switch (a) {
    case Alg::pairwise_lb:
    case Alg::ring_lb:
        return Sync::light;
    case Alg::pairwise_mb:
    case Alg::ring_mb:
        return Sync::mpi;
    case Alg::pairwise_ob:
    case Alg::ring_ob:
        return Sync::one;
    default:
        return Sync::none;
    }
}

bool is_pairwise(Alg a)
{
    return a == Alg::pairwise || a == Alg::pairwise_lb || a == Alg::pairwise_mb ||
           a == Alg::pairwise_ob;
}

// Errors (doc/reliability.md, "Wrong arguments"): a request that cannot be
// started ends the algorithm at once (the transport failed); an error at
// completion (MPI_ERR_TRUNCATE when the processes passed different counts:
// every request of the step has completed) is remembered in `late` and the
// schedule goes on, so that no peer waits for a message that never comes
// and nothing is left in flight.  The first one is returned at the end.
void note(int *late, int rc)
{
    if (rc && !*late)
        *late = rc;
}

// Wait for one receive request, with its own error where the p2p can tell
// it (test): a wait for several requests says only "in status" (MPICH's
// MPIC_Waitall without statuses), not MPI_ERR_TRUNCATE.
int wait_recv(const llc_coll_p2p_t *p, void *req)
{
    if (p->test) {
        int done = 0, rc;
        while ((rc = p->test(p->arg, req, &done)) == 0 && !done) {
        }
        if (rc || done)
            return rc;
    }
    return p->waitall(p->arg, 1, &req);
}

// One data exchange: receive block from src, send block to dst.  Returns a
// failure to start; an error at completion goes to *late.
int exchange(const llc_coll_p2p_t *p, const void *sbuf, int dst, void *rbuf, int src,
             size_t bytes, int tag, int *late)
{
    void *req[2];
    int rc = p->irecv(p->arg, rbuf, bytes, src, tag, &req[0]);
    if (rc)
        return rc;
    rc = p->isend(p->arg, sbuf, bytes, dst, tag, &req[1]);
    if (rc) {
        p->waitall(p->arg, 1, req);
        return rc;
    }
    note(late, wait_recv(p, req[0]));
    note(late, p->waitall(p->arg, 1, &req[1]));
    return 0;
}

// Pairwise / ring and their barrier variants: size - 1 steps of one block.
int shift_family(Alg a, const llc_coll_p2p_t *p, const void *sendbuf, void *recvbuf,
                 size_t bytes)
{
    const int rank = p->rank, size = p->size;
    const int tag = alg_tag(a, 0), tok_tag = alg_tag(a, 1);
    const Sync sync = sync_of(a);
    int rc = 0, late = 0;

    if (sync == Sync::one) {
        // All receives first, then one barrier (every receive of every rank is
        // posted), then the steps' sends in schedule order.
        std::vector<void *> reqs(size - 1);
        for (int i = 1; i < size; i++) {
            int dst, src;
            step_partners(a, rank, size, i, &dst, &src);
            if ((rc = p->irecv(p->arg, block(recvbuf, src, bytes), bytes, src, tag, &reqs[i - 1])))
                return rc;  // NB: posted receives are leaked only on transport failure
        }
        rc = p->barrier(p->arg);
        for (int i = 1; i < size && !rc; i++) {
            int dst, src;
            step_partners(a, rank, size, i, &dst, &src);
            rc = p->send(p->arg, block(sendbuf, dst, bytes), bytes, dst, tag);
        }
        int rc2 = 0;
        for (void *r : reqs)
            note(&rc2, wait_recv(p, r));
        return rc ? rc : rc2;
    }

    for (int i = 1; i < size; i++) {
        int dst, src;
        step_partners(a, rank, size, i, &dst, &src);
        if (sync == Sync::mpi && (rc = p->barrier(p->arg)))
            return rc;
        if (sync == Sync::light) {
            // Light barrier: post the data receive, tell src "ready" with a
            // zero-byte token, and send to dst only after dst's token.
            void *rreq, *treq, *sreq;
            char dummy = 0;
            if ((rc = p->irecv(p->arg, block(recvbuf, src, bytes), bytes, src, tag, &rreq)))
                return rc;
            if ((rc = p->irecv(p->arg, &dummy, 0, dst, tok_tag, &treq)))
                return rc;
            if ((rc = p->send(p->arg, &dummy, 0, src, tok_tag)))
                return rc;
            note(&late, p->waitall(p->arg, 1, &treq));
            if ((rc = p->isend(p->arg, block(sendbuf, dst, bytes), bytes, dst, tag, &sreq)))
                return rc;
            note(&late, p->waitall(p->arg, 1, &sreq));
            note(&late, wait_recv(p, rreq));
        } else if ((rc = exchange(p, block(sendbuf, dst, bytes), dst, block(recvbuf, src, bytes),
                                  src, bytes, tag, &late))) {
            return rc;
        }
    }
    return late;
}

// Bruck: rotate, ceil(log2 size) rounds exchanging the blocks whose index has
// bit k set with rank +/- 2^k, rotate back.
int bruck(const llc_coll_p2p_t *p, const void *sendbuf, void *recvbuf, size_t bytes,
          Scratch *scratch)
{
    const int rank = p->rank, size = p->size;
    const int tag = alg_tag(Alg::bruck, 0);
    // one region: the rotated blocks, then the send and receive buffers of a
    // round (at most size / 2 + 1 blocks each)
    const size_t round_bytes = (size / 2 + 1) * bytes;
    char *tmp = scratch->get(size * bytes + 2 * round_bytes);
    char *sbuf = tmp + size * bytes, *rbuf = sbuf + round_bytes;
    for (int j = 0; j < size; j++)
        copy_bytes(block(tmp, j, bytes), block(sendbuf, (rank + j) % size, bytes), bytes);
    int late = 0;
    for (int k = 1; k < size; k <<= 1) {
        size_t n = 0;
        for (int j = 0; j < size; j++)
            if (j & k)
                copy_bytes(sbuf + bytes * n++, block(tmp, j, bytes), bytes);
        int dst = (rank + k) % size, src = (rank - k + size) % size;
        int rc = exchange(p, sbuf, dst, rbuf, src, n * bytes, tag, &late);
        if (rc)
            return rc;
        n = 0;
        for (int j = 0; j < size; j++)
            if (j & k)
                copy_bytes(block(tmp, j, bytes), rbuf + bytes * n++, bytes);
    }
    for (int j = 0; j < size; j++)
        copy_bytes(block(recvbuf, (rank - j + size) % size, bytes), block(tmp, j, bytes), bytes);
    return late;
}

}  // namespace

const char *alg_name(Alg a)
{
    return a == Alg::native ? "mpich" : kNames[static_cast<int>(a)];
}

bool alg_from_name(const std::string &name, Alg *out)
{
    for (int i = 0; i < kNumAlgs; i++)
        if (name == kNames[i]) {
            *out = static_cast<Alg>(i);
            return true;
        }
    return false;
}

void step_partners(Alg a, int rank, int size, int i, int *dst, int *src)
{
    if (is_pairwise(a) && is_pow2(size)) {
        *dst = *src = rank ^ i;
    } else {
        *dst = (rank + i) % size;
        *src = (rank - i + size) % size;
    }
}

char *Scratch::get(size_t bytes)
{
    if (bytes > cap_ || !buf_) {
        buf_.reset();  // the old one goes first: never both at once
        buf_.reset(new char[bytes ? bytes : 1]);  // not value-initialised: no memset
        cap_ = bytes;
    }
    return buf_.get();
}

void Scratch::release()
{
    buf_.reset();
    cap_ = 0;
}

int run(Alg a, const llc_coll_p2p_t *p2p, const void *sendbuf, void *recvbuf, size_t bytes,
        Scratch *scratch)
{
    if (a == Alg::native)
        return p2p->native_alltoall ? p2p->native_alltoall(p2p->arg, sendbuf, recvbuf, bytes)
                                    : LLC_COLL_ERR_ARG;
    if (p2p->size == 1 || a != Alg::bruck) {
        copy_bytes(block(recvbuf, p2p->rank, bytes), block(sendbuf, p2p->rank, bytes), bytes);
        if (p2p->size == 1)
            return 0;
        return shift_family(a, p2p, sendbuf, recvbuf, bytes);
    }
    Scratch own;
    return bruck(p2p, sendbuf, recvbuf, bytes, scratch ? scratch : &own);
}

}  // namespace llc::coll::alltoall
