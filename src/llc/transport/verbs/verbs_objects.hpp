// verbs_objects.hpp - owners (RAII, move-only) of the libibverbs objects the
// verbs transport creates: completion queue, shared receive queue, queue pair
// (RC through ibv_create_qp; DC initiator and target through
// mlx5dv_create_qp), memory region and address handle.  Each factory throws
// llc::Error (LLC_ERR_SYSTEM, or LLC_ERR_UNSUPPORTED where the device lacks
// the feature) with a message that names the call, the sizes asked for and
// what to try next.  Only compiled with libibverbs (LLC_HAVE_VERBS); the DC
// factories only with mlx5dv (LLC_HAVE_MLX5DV).  Never run on hardware.
#pragma once

#ifdef LLC_HAVE_VERBS

#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>
#include <utility>

namespace llc {

// One owned pointer with its destroy function (the ibv_destroy_* / dereg
// call).  A failing destroy is ignored: nothing useful can be done in a
// destructor, and the process is tearing the resource down anyway.
template <class T, int (*Destroy)(T *)> class VerbsOwner {
public:
    VerbsOwner() = default;
    explicit VerbsOwner(T *p) : p_(p) {}
    ~VerbsOwner() { reset(); }
    VerbsOwner(VerbsOwner &&o) noexcept : p_(std::exchange(o.p_, nullptr)) {}
    VerbsOwner &operator=(VerbsOwner &&o) noexcept
    {
        if (this != &o) {
            reset();
            p_ = std::exchange(o.p_, nullptr);
        }
        return *this;
    }
    VerbsOwner(const VerbsOwner &) = delete;
    VerbsOwner &operator=(const VerbsOwner &) = delete;

    T *get() const { return p_; }
    T *operator->() const { return p_; }
    explicit operator bool() const { return p_ != nullptr; }
    // Gives up ownership.
    T *release() { return std::exchange(p_, nullptr); }
    void reset()
    {
        if (p_)
            (void)Destroy(p_);
        p_ = nullptr;
    }

private:
    T *p_ = nullptr;
};

using VerbsCq = VerbsOwner<ibv_cq, ibv_destroy_cq>;
using VerbsSrq = VerbsOwner<ibv_srq, ibv_destroy_srq>;
using VerbsQp = VerbsOwner<ibv_qp, ibv_destroy_qp>;
using VerbsMr = VerbsOwner<ibv_mr, ibv_dereg_mr>;
using VerbsAh = VerbsOwner<ibv_ah, ibv_destroy_ah>;

// ibv_create_cq with `entries` entries (no completion channel).
VerbsCq make_verbs_cq(ibv_context *ctx, int entries, const char *what);
// ibv_create_srq: max_wr work requests of one scatter entry each.
VerbsSrq make_verbs_srq(ibv_pd *pd, uint32_t max_wr, const char *what);
// ibv_reg_mr of [addr, addr + len) with the given access.
VerbsMr make_verbs_mr(ibv_pd *pd, void *addr, size_t len, int access, const char *what);
// ibv_create_ah.
VerbsAh make_verbs_ah(ibv_pd *pd, const ibv_ah_attr &attr);
// An RC QP (ibv_create_qp) on the given CQs, receiving through srq (may be null).
VerbsQp make_rc_qp(ibv_pd *pd, ibv_cq *send_cq, ibv_cq *recv_cq, ibv_srq *srq, uint32_t max_send_wr,
                   uint32_t max_recv_wr);
// Applies a transition (verbs_qp_attr.hpp); throws naming `what` and the target state.
void modify_verbs_qp(ibv_qp *qp, ibv_qp_attr attr, int mask, const char *what);

#ifdef LLC_HAVE_MLX5DV
// A DC initiator (mlx5dv_create_qp, DCI) with the extended send interface
// (SEND and RDMA READ work requests through ibv_wr_*, destination set with
// mlx5dv_wr_set_dc_addr).  It has no receive queue; recv_cq must still be given.
VerbsQp make_dci(ibv_context *ctx, ibv_pd *pd, ibv_cq *send_cq, ibv_cq *recv_cq, uint32_t max_send_wr);
// A DC target (mlx5dv_create_qp, DCT) receiving through srq, opened by access_key.
VerbsQp make_dct(ibv_context *ctx, ibv_pd *pd, ibv_cq *cq, ibv_srq *srq, uint64_t access_key);
#endif

} // namespace llc

#endif // LLC_HAVE_VERBS
