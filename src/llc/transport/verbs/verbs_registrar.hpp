// verbs_registrar.hpp - the RegCache's Registrar for InfiniBand / RoCE:
// ibv_reg_mr / ibv_dereg_mr on a protection domain.  Only compiled when
// libllc is built with libibverbs (LLC_HAVE_VERBS).
//
// The verbs transport's keyed reads (LLC_VERBS_RNDV_BYTES) register senders'
// payloads and receivers' landing buffers through a RegCache over it; it has
// never run against an RDMA device (the machines it was written on have
// none; see doc/libllc-verbs.md, "Registration cache").
#pragma once

#ifdef LLC_HAVE_VERBS

#include "transport/verbs/reg_cache.hpp"

#include <infiniband/verbs.h>

#include <cstdint>

namespace llc {

class VerbsRegistrar : public Registrar {
public:
    // Local write (receive buffers, RDMA read targets) and remote read/write
    // (RDMA targets of the single-copy path).
    static constexpr int kDefaultAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;

    // pd must outlive the registrar and every registration made through it.
    explicit VerbsRegistrar(ibv_pd *pd, int access = kDefaultAccess) : pd_(pd), access_(access) {}

    // ibv_reg_mr; Registration::handle is the ibv_mr*.
    RegResult register_region(void *addr, size_t len) override;
    // ibv_dereg_mr.  A failure (EBUSY: memory windows still bound) is counted
    // and its errno kept; the registration is then leaked.
    void deregister_region(const Registration &reg) override;

    ibv_pd *pd() const { return pd_; }
    uint64_t dereg_failures() const { return dereg_failures_; }
    int last_dereg_error() const { return last_dereg_error_; }

private:
    ibv_pd *pd_;
    int access_;
    uint64_t dereg_failures_ = 0;
    int last_dereg_error_ = 0;
};

} // namespace llc

#endif // LLC_HAVE_VERBS
