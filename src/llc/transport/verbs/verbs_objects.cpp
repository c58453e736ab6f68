// verbs_objects.cpp - see verbs_objects.hpp.
#include "transport/verbs/verbs_objects.hpp"

#ifdef LLC_HAVE_VERBS

#include "core/errors.hpp"
#include "llc.h"

#ifdef LLC_HAVE_MLX5DV
#include <infiniband/mlx5dv.h>
#endif

#include <cerrno>
#include <string>

namespace llc {

namespace {

int saved_errno() { return errno ? errno : EIO; }

[[noreturn]] void fail(const std::string &what, int err, const std::string &hint)
{
    int status = (err == EOPNOTSUPP || err == ENOSYS || err == EPROTONOSUPPORT) ? LLC_ERR_UNSUPPORTED
                                                                               : LLC_ERR_SYSTEM;
    throw Error(status, errno_message("LLC_NET=verbs: " + what, err) + "; " + hint);
}

const char *kLimitsHint = "the device may allow less (see ibv_devinfo -v) or the locked-memory limit "
                          "(ulimit -l) may be too low; or use LLC_NET=udp or hybrid";

} // namespace

VerbsCq make_verbs_cq(ibv_context *ctx, int entries, const char *what)
{
    errno = 0;
    ibv_cq *cq = ibv_create_cq(ctx, entries, nullptr, nullptr, 0);
    if (!cq)
        fail(std::string("ibv_create_cq (") + what + ", " + std::to_string(entries) + " entries)", saved_errno(),
             kLimitsHint);
    return VerbsCq(cq);
}

VerbsSrq make_verbs_srq(ibv_pd *pd, uint32_t max_wr, const char *what)
{
    ibv_srq_init_attr a{};
    a.attr.max_wr = max_wr;
    a.attr.max_sge = 1;
    errno = 0;
    ibv_srq *srq = ibv_create_srq(pd, &a);
    if (!srq)
        fail(std::string("ibv_create_srq (") + what + ", " + std::to_string(max_wr) + " work requests)",
             saved_errno(), kLimitsHint);
    return VerbsSrq(srq);
}

VerbsMr make_verbs_mr(ibv_pd *pd, void *addr, size_t len, int access, const char *what)
{
    errno = 0;
    ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);
    if (!mr)
        fail(std::string("ibv_reg_mr (") + what + ", " + std::to_string(len) + " bytes)", saved_errno(),
             "raise the locked-memory limit (ulimit -l unlimited) or use LLC_NET=udp or hybrid");
    return VerbsMr(mr);
}

VerbsAh make_verbs_ah(ibv_pd *pd, const ibv_ah_attr &attr)
{
    ibv_ah_attr a = attr;
    errno = 0;
    ibv_ah *ah = ibv_create_ah(pd, &a);
    if (!ah)
        fail("ibv_create_ah (lid " + std::to_string(attr.dlid) + ", port " + std::to_string(attr.port_num) + ")",
             saved_errno(), "is the peer's port reachable (same subnet, or a GID published)?");
    return VerbsAh(ah);
}

VerbsQp make_rc_qp(ibv_pd *pd, ibv_cq *send_cq, ibv_cq *recv_cq, ibv_srq *srq, uint32_t max_send_wr,
                   uint32_t max_recv_wr)
{
    ibv_qp_init_attr a{};
    a.send_cq = send_cq;
    a.recv_cq = recv_cq;
    a.srq = srq;
    a.qp_type = IBV_QPT_RC;
    a.cap.max_send_wr = max_send_wr;
    a.cap.max_recv_wr = srq ? 0 : max_recv_wr;
    a.cap.max_send_sge = 1;
    a.cap.max_recv_sge = srq ? 0 : 1;
    errno = 0;
    ibv_qp *qp = ibv_create_qp(pd, &a);
    if (!qp)
        fail("ibv_create_qp (RC, " + std::to_string(max_send_wr) + " send work requests)", saved_errno(),
             kLimitsHint);
    return VerbsQp(qp);
}

void modify_verbs_qp(ibv_qp *qp, ibv_qp_attr attr, int mask, const char *what)
{
    static const char *const names[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
    int rc = ibv_modify_qp(qp, &attr, mask);
    if (rc != 0) {
        unsigned s = unsigned(attr.qp_state);
        fail(std::string("ibv_modify_qp (") + what + " to " + (s < 7 ? names[s] : "?") + ")", rc,
             "the port may be down or the peer's address stale; check ibv_devinfo, or use LLC_NET=udp or hybrid");
    }
}

#ifdef LLC_HAVE_MLX5DV

VerbsQp make_dci(ibv_context *ctx, ibv_pd *pd, ibv_cq *send_cq, ibv_cq *recv_cq, uint32_t max_send_wr)
{
    ibv_qp_init_attr_ex a{};
    a.qp_type = IBV_QPT_DRIVER;
    a.send_cq = send_cq;
    a.recv_cq = recv_cq;
    a.pd = pd;
    a.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
    a.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_READ;
    a.cap.max_send_wr = max_send_wr;
    a.cap.max_send_sge = 1;
    mlx5dv_qp_init_attr dv{};
    dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
    dv.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCI;
    errno = 0;
    ibv_qp *qp = mlx5dv_create_qp(ctx, &a, &dv);
    if (!qp)
        fail("mlx5dv_create_qp (DC initiator, " + std::to_string(max_send_wr) + " send work requests)",
             saved_errno(), "the device may not support DC (mlx5 ConnectX-IB or later is needed); use LLC_NET=udp "
                            "or hybrid, or LLC_VERBS_FALLBACK");
    return VerbsQp(qp);
}

VerbsQp make_dct(ibv_context *ctx, ibv_pd *pd, ibv_cq *cq, ibv_srq *srq, uint64_t access_key)
{
    ibv_qp_init_attr_ex a{};
    a.qp_type = IBV_QPT_DRIVER;
    a.send_cq = cq;
    a.recv_cq = cq;
    a.srq = srq;
    a.pd = pd;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    mlx5dv_qp_init_attr dv{};
    dv.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC;
    dv.dc_init_attr.dc_type = MLX5DV_DCTYPE_DCT;
    dv.dc_init_attr.dct_access_key = access_key;
    errno = 0;
    ibv_qp *qp = mlx5dv_create_qp(ctx, &a, &dv);
    if (!qp)
        fail("mlx5dv_create_qp (DC target)", saved_errno(),
             "the device may not support DC (mlx5 ConnectX-IB or later is needed); use LLC_NET=udp or hybrid, "
             "or LLC_VERBS_FALLBACK");
    return VerbsQp(qp);
}

#endif // LLC_HAVE_MLX5DV

} // namespace llc

#endif // LLC_HAVE_VERBS
