// verbs_qp_attr.cpp - see verbs_qp_attr.hpp.
#include "verbs_qp_attr.hpp"

#ifdef LLC_HAVE_VERBS

#include <cstring>

namespace llc {

ibv_ah_attr verbs_ah_attr(const VerbsQpParams &p, const VerbsAddress &remote)
{
    ibv_ah_attr ah{};
    ah.dlid = remote.lid;
    ah.sl = p.sl;
    ah.src_path_bits = 0;
    ah.port_num = p.port;
    if (remote.has_gid() && (p.force_global || remote.lid == 0)) {
        ah.is_global = 1;
        std::memcpy(ah.grh.dgid.raw, remote.gid.data(), sizeof(ah.grh.dgid.raw));
        ah.grh.sgid_index = p.sgid_index;
        ah.grh.hop_limit = p.hop_limit;
    }
    return ah;
}

ibv_mtu verbs_path_mtu(const VerbsQpParams &p, const VerbsAddress &remote)
{
    if (remote.mtu >= IBV_MTU_256 && remote.mtu <= IBV_MTU_4096 && remote.mtu < p.mtu)
        return ibv_mtu(remote.mtu);
    return p.mtu;
}

QpTransition rc_reset_to_init(const VerbsQpParams &p)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_INIT;
    t.attr.pkey_index = p.pkey_index;
    t.attr.port_num = p.port;
    t.attr.qp_access_flags = unsigned(p.access);
    t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    return t;
}

QpTransition rc_init_to_rtr(const VerbsQpParams &p, const VerbsAddress &remote)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_RTR;
    t.attr.path_mtu = verbs_path_mtu(p, remote);
    t.attr.dest_qp_num = remote.rc_qpn;
    t.attr.rq_psn = remote.psn;
    t.attr.max_dest_rd_atomic = p.max_dest_rd_atomic;
    t.attr.min_rnr_timer = p.min_rnr_timer;
    t.attr.ah_attr = verbs_ah_attr(p, remote);
    t.mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    return t;
}

QpTransition rc_rtr_to_rts(const VerbsQpParams &p, uint32_t local_psn)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_RTS;
    t.attr.timeout = p.timeout;
    t.attr.retry_cnt = p.retry_cnt;
    t.attr.rnr_retry = p.rnr_retry;
    t.attr.sq_psn = local_psn & 0xffffffu;
    t.attr.max_rd_atomic = p.max_rd_atomic;
    t.mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
             IBV_QP_MAX_QP_RD_ATOMIC;
    return t;
}

QpTransition dci_reset_to_init(const VerbsQpParams &p)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_INIT;
    t.attr.pkey_index = p.pkey_index;
    t.attr.port_num = p.port;
    t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
    return t;
}

QpTransition dci_init_to_rtr(const VerbsQpParams &p)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_RTR;
    t.attr.path_mtu = p.mtu;
    t.attr.ah_attr.port_num = p.port; // the destination comes with each work request
    t.mask = IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_AV;
    return t;
}

QpTransition dci_rtr_to_rts(const VerbsQpParams &p)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_RTS;
    t.attr.timeout = p.timeout;
    t.attr.retry_cnt = p.retry_cnt;
    t.attr.rnr_retry = p.rnr_retry;
    t.attr.sq_psn = 0;
    t.attr.max_rd_atomic = p.max_rd_atomic;
    t.mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
             IBV_QP_MAX_QP_RD_ATOMIC;
    return t;
}

QpTransition dct_reset_to_init(const VerbsQpParams &p)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_INIT;
    t.attr.pkey_index = p.pkey_index;
    t.attr.port_num = p.port;
    t.attr.qp_access_flags = unsigned(p.access);
    t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
    return t;
}

QpTransition dct_init_to_rtr(const VerbsQpParams &p, const VerbsAddress &local)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_RTR;
    t.attr.path_mtu = p.mtu;
    t.attr.min_rnr_timer = p.min_rnr_timer;
    t.attr.ah_attr.port_num = p.port;
    t.attr.ah_attr.sl = p.sl;
    if (local.has_gid() && (p.force_global || local.lid == 0)) {
        t.attr.ah_attr.is_global = 1;
        t.attr.ah_attr.grh.sgid_index = p.sgid_index;
        t.attr.ah_attr.grh.hop_limit = p.hop_limit;
    }
    t.mask = IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU;
    return t;
}

} // namespace llc

#endif // LLC_HAVE_VERBS
