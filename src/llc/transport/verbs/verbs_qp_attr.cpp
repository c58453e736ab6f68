// verbs_qp_attr.cpp - see verbs_qp_attr.hpp.
#include "transport/verbs/verbs_qp_attr.hpp"

#ifdef LLC_HAVE_VERBS

#include <cstring>

namespace llc {

namespace {
// A GRH: the address has a GID and either it must be used (force_global) or
// there is no LID to route by (RoCE).
bool needs_grh(const VerbsQpParams &p, const VerbsAddress &a) { return a.has_gid() && (p.force_global || a.lid == 0); }

// RESET -> INIT, the same for every kind of QP but for the access flags,
// which a QP that is a target of the peers' RDMA (RC, DCT) needs and a DC
// initiator does not.
QpTransition reset_to_init(const VerbsQpParams &p, bool remote_access)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_INIT;
    t.attr.pkey_index = p.pkey_index;
    t.attr.port_num = p.port;
    t.mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
    if (remote_access) {
        t.attr.qp_access_flags = unsigned(p.access);
        t.mask |= IBV_QP_ACCESS_FLAGS;
    }
    return t;
}

// INIT -> RTR: what every kind of QP sets (the rest is per kind).
QpTransition init_to_rtr(const VerbsQpParams &p, ibv_mtu path_mtu)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_RTR;
    t.attr.path_mtu = path_mtu;
    t.mask = IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_AV;
    t.attr.ah_attr.port_num = p.port;
    return t;
}

// RTR -> RTS, the same for the two initiators (RC, DCI) but for the first PSN.
QpTransition rtr_to_rts(const VerbsQpParams &p, uint32_t sq_psn)
{
    QpTransition t;
    t.attr.qp_state = IBV_QPS_RTS;
    t.attr.timeout = p.timeout;
    t.attr.retry_cnt = p.retry_cnt;
    t.attr.rnr_retry = p.rnr_retry;
    t.attr.sq_psn = sq_psn;
    t.attr.max_rd_atomic = p.max_rd_atomic;
    t.mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
             IBV_QP_MAX_QP_RD_ATOMIC;
    return t;
}
} // namespace

ibv_ah_attr verbs_ah_attr(const VerbsQpParams &p, const VerbsAddress &remote)
{
    ibv_ah_attr ah{};
    ah.dlid = remote.lid;
    ah.sl = p.sl;
    ah.src_path_bits = 0;
    ah.port_num = p.port;
    if (needs_grh(p, remote)) {
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

QpTransition rc_reset_to_init(const VerbsQpParams &p) { return reset_to_init(p, true); }

QpTransition rc_init_to_rtr(const VerbsQpParams &p, const VerbsAddress &remote)
{
    QpTransition t = init_to_rtr(p, verbs_path_mtu(p, remote));
    t.attr.dest_qp_num = remote.rc_qpn;
    t.attr.rq_psn = remote.psn;
    t.attr.max_dest_rd_atomic = p.max_dest_rd_atomic;
    t.attr.min_rnr_timer = p.min_rnr_timer;
    t.attr.ah_attr = verbs_ah_attr(p, remote);
    t.mask |= IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
    return t;
}

QpTransition rc_rtr_to_rts(const VerbsQpParams &p, uint32_t local_psn) { return rtr_to_rts(p, local_psn & 0xffffffu); }

QpTransition dci_reset_to_init(const VerbsQpParams &p) { return reset_to_init(p, false); }

// The destination comes with each work request: the address vector names
// only the port.
QpTransition dci_init_to_rtr(const VerbsQpParams &p) { return init_to_rtr(p, p.mtu); }

QpTransition dci_rtr_to_rts(const VerbsQpParams &p) { return rtr_to_rts(p, 0); }

QpTransition dct_reset_to_init(const VerbsQpParams &p) { return reset_to_init(p, true); }

QpTransition dct_init_to_rtr(const VerbsQpParams &p, const VerbsAddress &local)
{
    QpTransition t = init_to_rtr(p, p.mtu);
    t.attr.min_rnr_timer = p.min_rnr_timer;
    t.attr.ah_attr.sl = p.sl;
    if (needs_grh(p, local)) {
        t.attr.ah_attr.is_global = 1;
        t.attr.ah_attr.grh.sgid_index = p.sgid_index;
        t.attr.ah_attr.grh.hop_limit = p.hop_limit;
    }
    t.mask |= IBV_QP_MIN_RNR_TIMER;
    return t;
}

} // namespace llc

#endif // LLC_HAVE_VERBS
