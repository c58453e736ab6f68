// verbs_qp_attr.hpp - the ibv_qp_attr and attribute mask of every queue-pair
// state transition the verbs transport makes, as pure functions of the
// parameters and the peer's address (VerbsAddress), so that each field and
// mask bit is unit-tested without a device.  Only compiled with libibverbs
// (LLC_HAVE_VERBS).
//
//   RC  (ibv_create_qp):  RESET -> INIT -> RTR -> RTS, RTR names the peer's
//                         RC QP number and PSN and its address vector.
//   DCI (mlx5dv, the DC initiator): RESET -> INIT -> RTR -> RTS; no peer: the
//                         destination DCT is given per work request.
//   DCT (mlx5dv, the DC target): RESET -> INIT -> RTR and stays there.
//
// The masks follow the attributes ibv_modify_qp(3) lists as required for each
// transition of an RC QP; for DC, the ones the mlx5 kernel driver checks
// (DCT: INIT needs access flags, pkey index and port; RTR needs the minimum
// RNR timer, an address vector and the path MTU).  Never run on hardware
// (see doc/libllc-verbs.md).
#pragma once

#ifdef LLC_HAVE_VERBS

#include "transport/verbs/verbs_address.hpp"

#include <infiniband/verbs.h>

#include <cstdint>

namespace llc {

struct VerbsQpParams {
    uint8_t port = 1;             // local port (1-based)
    uint16_t pkey_index = 0;
    ibv_mtu mtu = IBV_MTU_4096;   // local active MTU; the path MTU is min(local, peer)
    uint8_t sl = 0;               // service level
    uint8_t sgid_index = 0;       // local GID table index (global routing only)
    uint8_t hop_limit = 64;       // global routing only
    uint8_t timeout = 14;         // local ACK timeout: 4.096 us * 2^14 = 67 ms
    uint8_t retry_cnt = 7;        // transport retries
    uint8_t rnr_retry = 7;        // 7: retry for ever on receiver-not-ready (SRQ momentarily empty)
    uint8_t min_rnr_timer = 12;   // 0.64 ms
    uint8_t max_rd_atomic = 1;    // RDMA reads in flight as initiator
    uint8_t max_dest_rd_atomic = 1; // as target
    int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
    bool force_global = false;    // always fill a GRH (RoCE: also when the peer's GID is known)
};

struct QpTransition {
    ibv_qp_attr attr{};
    int mask = 0;
};

// The address vector towards `remote`: its LID, our SL and port, and a GRH
// (dgid, sgid_index, hop_limit) when the peer has a GID and either
// force_global is set or the peer has no LID (RoCE).
ibv_ah_attr verbs_ah_attr(const VerbsQpParams &p, const VerbsAddress &remote);
// The smaller of the local MTU and the peer's (an unknown peer MTU: the local one).
ibv_mtu verbs_path_mtu(const VerbsQpParams &p, const VerbsAddress &remote);

QpTransition rc_reset_to_init(const VerbsQpParams &p);
QpTransition rc_init_to_rtr(const VerbsQpParams &p, const VerbsAddress &remote);
QpTransition rc_rtr_to_rts(const VerbsQpParams &p, uint32_t local_psn);

QpTransition dci_reset_to_init(const VerbsQpParams &p);
QpTransition dci_init_to_rtr(const VerbsQpParams &p);
QpTransition dci_rtr_to_rts(const VerbsQpParams &p);

QpTransition dct_reset_to_init(const VerbsQpParams &p);
// local: our own address (its GID fills the GRH fields a DCT on RoCE needs).
QpTransition dct_init_to_rtr(const VerbsQpParams &p, const VerbsAddress &local);

} // namespace llc

#endif // LLC_HAVE_VERBS
