// verbs_qp_attr_test.cpp - the queue-pair transition builders
// (verbs_qp_attr.hpp): for RC RESET->INIT->RTR->RTS, DCI RESET->INIT->RTR->RTS
// and DCT RESET->INIT->RTR, every field the mask names is checked against the
// parameters and the peer's address, and the mask is exactly the documented
// set (a missing or extra bit fails).  Needs the libibverbs headers
// (LLC_HAVE_VERBS); no device.
#ifdef LLC_HAVE_VERBS

#include "transport/verbs/verbs_qp_attr.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace {

llc::VerbsQpParams params()
{
    llc::VerbsQpParams p;
    p.port = 2;
    p.pkey_index = 3;
    p.mtu = IBV_MTU_4096;
    p.sl = 4;
    p.sgid_index = 5;
    p.hop_limit = 33;
    p.timeout = 17;
    p.retry_cnt = 6;
    p.rnr_retry = 7;
    p.min_rnr_timer = 11;
    p.max_rd_atomic = 2;
    p.max_dest_rd_atomic = 3;
    p.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
    return p;
}

llc::VerbsAddress peer()
{
    llc::VerbsAddress a;
    a.lid = 0x77;
    a.port = 1;
    a.mtu = IBV_MTU_2048;
    a.dct_number = 0x1234;
    a.dc_key = 99;
    a.rc_qpn = 0xabcde;
    a.psn = 0x54321;
    return a;
}

llc::VerbsAddress with_gid(llc::VerbsAddress a)
{
    for (size_t i = 0; i < a.gid.size(); i++)
        a.gid[i] = uint8_t(i + 1);
    return a;
}

// RESET -> INIT with params(), as every kind of QP makes it; with the
// access flags when the QP is a target of the peers' RDMA (RC, DCT).
void expect_init(const llc::QpTransition &t, bool remote_access)
{
    const int access_bit = remote_access ? IBV_QP_ACCESS_FLAGS : 0;
    EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | access_bit);
    EXPECT_EQ(t.attr.qp_state, IBV_QPS_INIT);
    EXPECT_EQ(t.attr.pkey_index, 3);
    EXPECT_EQ(t.attr.port_num, 2);
    if (remote_access) {
        EXPECT_EQ(t.attr.qp_access_flags, unsigned(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ));
    }
}

// RTR -> RTS with params(), as both initiators (RC, DCI) make it.
void expect_rts(const llc::QpTransition &t, uint32_t sq_psn)
{
    EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                          IBV_QP_MAX_QP_RD_ATOMIC);
    EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTS);
    EXPECT_EQ(t.attr.timeout, 17);
    EXPECT_EQ(t.attr.retry_cnt, 6);
    EXPECT_EQ(t.attr.rnr_retry, 7);
    EXPECT_EQ(t.attr.sq_psn, sq_psn);
    EXPECT_EQ(t.attr.max_rd_atomic, 2);
}

} // namespace

TEST(VerbsQpAttr, RcResetToInit) { expect_init(llc::rc_reset_to_init(params()), true); }

TEST(VerbsQpAttr, RcInitToRtrNamesThePeer)
{
    llc::QpTransition t = llc::rc_init_to_rtr(params(), peer());
    EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
    EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTR);
    EXPECT_EQ(t.attr.path_mtu, IBV_MTU_2048); // min(local 4096, peer 2048)
    EXPECT_EQ(t.attr.dest_qp_num, 0xabcdeu);
    EXPECT_EQ(t.attr.rq_psn, 0x54321u);
    EXPECT_EQ(t.attr.max_dest_rd_atomic, 3);
    EXPECT_EQ(t.attr.min_rnr_timer, 11);
    EXPECT_EQ(t.attr.ah_attr.dlid, 0x77);
    EXPECT_EQ(t.attr.ah_attr.sl, 4);
    EXPECT_EQ(t.attr.ah_attr.port_num, 2);
    EXPECT_EQ(t.attr.ah_attr.is_global, 0); // InfiniBand LID, no GID: local routing
}

TEST(VerbsQpAttr, RcRtrToRts)
{
    expect_rts(llc::rc_rtr_to_rts(params(), 0x1abcdef), 0xabcdefu); // masked to 24 bits
}

TEST(VerbsQpAttr, AddressVectorUsesAGrhOnlyWhenNeeded)
{
    llc::VerbsQpParams p = params();
    // A GID but a LID too, not forced: local routing.
    ibv_ah_attr ah = llc::verbs_ah_attr(p, with_gid(peer()));
    EXPECT_EQ(ah.is_global, 0);
    // RoCE (LID 0) with a GID: global.
    llc::VerbsAddress roce = with_gid(peer());
    roce.lid = 0;
    ah = llc::verbs_ah_attr(p, roce);
    EXPECT_EQ(ah.is_global, 1);
    EXPECT_EQ(std::memcmp(ah.grh.dgid.raw, roce.gid.data(), 16), 0);
    EXPECT_EQ(ah.grh.sgid_index, 5);
    EXPECT_EQ(ah.grh.hop_limit, 33);
    EXPECT_EQ(ah.port_num, 2);
    // Forced (Ethernet link layer) with a GID: global even with a LID.
    p.force_global = true;
    EXPECT_EQ(llc::verbs_ah_attr(p, with_gid(peer())).is_global, 1);
    // Forced but the peer published no GID: nothing to route to globally.
    EXPECT_EQ(llc::verbs_ah_attr(p, peer()).is_global, 0);
    // In an RC RTR too.
    llc::QpTransition t = llc::rc_init_to_rtr(p, with_gid(peer()));
    EXPECT_EQ(t.attr.ah_attr.is_global, 1);
    EXPECT_EQ(t.attr.ah_attr.grh.dgid.raw[15], 16);
}

TEST(VerbsQpAttr, PathMtuIsTheSmallerKnownOne)
{
    llc::VerbsQpParams p = params();
    llc::VerbsAddress a = peer();
    a.mtu = IBV_MTU_4096;
    p.mtu = IBV_MTU_1024;
    EXPECT_EQ(llc::verbs_path_mtu(p, a), IBV_MTU_1024);
    a.mtu = IBV_MTU_256;
    EXPECT_EQ(llc::verbs_path_mtu(p, a), IBV_MTU_256);
    a.mtu = 0; // unknown
    EXPECT_EQ(llc::verbs_path_mtu(p, a), IBV_MTU_1024);
    a.mtu = 9; // invalid
    EXPECT_EQ(llc::verbs_path_mtu(p, a), IBV_MTU_1024);
}

TEST(VerbsQpAttr, DciTransitions)
{
    expect_init(llc::dci_reset_to_init(params()), false); // no access flags: an initiator only

    llc::QpTransition t = llc::dci_init_to_rtr(params());
    EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_AV); // no peer: no DEST_QPN, no RQ_PSN
    EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTR);
    EXPECT_EQ(t.attr.path_mtu, IBV_MTU_4096);
    EXPECT_EQ(t.attr.ah_attr.port_num, 2);
    EXPECT_EQ(t.attr.ah_attr.dlid, 0);

    expect_rts(llc::dci_rtr_to_rts(params()), 0);
}

TEST(VerbsQpAttr, DctTransitions)
{
    expect_init(llc::dct_reset_to_init(params()), true);

    llc::VerbsAddress local = peer();
    llc::QpTransition t = llc::dct_init_to_rtr(params(), local);
    EXPECT_EQ(t.mask, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU); // a DCT stops at RTR
    EXPECT_EQ(t.attr.qp_state, IBV_QPS_RTR);
    EXPECT_EQ(t.attr.min_rnr_timer, 11);
    EXPECT_EQ(t.attr.path_mtu, IBV_MTU_4096);
    EXPECT_EQ(t.attr.ah_attr.port_num, 2);
    EXPECT_EQ(t.attr.ah_attr.sl, 4);
    EXPECT_EQ(t.attr.ah_attr.is_global, 0);
    local = with_gid(local);
    local.lid = 0; // RoCE
    t = llc::dct_init_to_rtr(params(), local);
    EXPECT_EQ(t.attr.ah_attr.is_global, 1);
    EXPECT_EQ(t.attr.ah_attr.grh.sgid_index, 5);
    EXPECT_EQ(t.attr.ah_attr.grh.hop_limit, 33);
}

// The defaults are the documented ones (doc/libllc-verbs.md).
TEST(VerbsQpAttr, DefaultParameters)
{
    llc::VerbsQpParams p;
    EXPECT_EQ(p.port, 1);
    EXPECT_EQ(p.mtu, IBV_MTU_4096);
    EXPECT_EQ(p.timeout, 14);
    EXPECT_EQ(p.retry_cnt, 7);
    EXPECT_EQ(p.rnr_retry, 7);
    EXPECT_EQ(p.min_rnr_timer, 12);
    EXPECT_EQ(p.access, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
}

#else

#include <gtest/gtest.h>

TEST(VerbsQpAttr, NeedsLibibverbs) { GTEST_SKIP() << "built without libibverbs (LLC_HAVE_VERBS)"; }

#endif
