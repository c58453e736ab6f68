// verbs_handles.hpp - owners of the libibverbs resources that device
// discovery opens: the device list and an opened device context; and the
// protection domain that VerbsRegistrar (verbs_registrar.hpp) registers
// memory on.  Only compiled when libllc is built with libibverbs
// (LLC_HAVE_VERBS).
#pragma once

#ifdef LLC_HAVE_VERBS

#include <infiniband/verbs.h>

#include <cerrno>

namespace llc {

// ibv_get_device_list / ibv_free_device_list.  The call either returns an
// array (possibly with zero devices) or NULL with errno set (ENOSYS when the
// kernel has no RDMA support, EPERM, ENOMEM): both are kept.
class VerbsDeviceList {
public:
    VerbsDeviceList()
    {
        errno = 0;
        int n = 0;
        list_ = ibv_get_device_list(&n);
        error_ = list_ ? 0 : (errno ? errno : EIO);
        count_ = list_ && n > 0 ? n : 0;
    }
    ~VerbsDeviceList()
    {
        if (list_)
            ibv_free_device_list(list_);
    }
    VerbsDeviceList(const VerbsDeviceList &) = delete;
    VerbsDeviceList &operator=(const VerbsDeviceList &) = delete;

    bool failed() const { return list_ == nullptr; } // NULL returned
    int error_number() const { return error_; }      // errno when failed()
    int count() const { return count_; }
    ibv_device *operator[](int i) const { return list_[i]; }

private:
    ibv_device **list_ = nullptr;
    int count_ = 0;
    int error_ = 0;
};

// ibv_open_device / ibv_close_device.
class VerbsDeviceContext {
public:
    explicit VerbsDeviceContext(ibv_device *device)
    {
        errno = 0;
        ctx_ = ibv_open_device(device);
        error_ = ctx_ ? 0 : (errno ? errno : EIO);
    }
    ~VerbsDeviceContext()
    {
        if (ctx_)
            ibv_close_device(ctx_);
    }
    VerbsDeviceContext(const VerbsDeviceContext &) = delete;
    VerbsDeviceContext &operator=(const VerbsDeviceContext &) = delete;

    ibv_context *get() const { return ctx_; }
    int error_number() const { return error_; }

private:
    ibv_context *ctx_ = nullptr;
    int error_ = 0;
};

// ibv_alloc_pd / ibv_dealloc_pd.  Every memory region registered on it must
// be deregistered first (destroy the RegCache before its domain).
class VerbsProtectionDomain {
public:
    explicit VerbsProtectionDomain(ibv_context *ctx)
    {
        errno = 0;
        pd_ = ctx ? ibv_alloc_pd(ctx) : nullptr;
        error_ = pd_ ? 0 : (errno ? errno : EIO);
    }
    ~VerbsProtectionDomain()
    {
        if (pd_)
            ibv_dealloc_pd(pd_);
    }
    VerbsProtectionDomain(const VerbsProtectionDomain &) = delete;
    VerbsProtectionDomain &operator=(const VerbsProtectionDomain &) = delete;

    ibv_pd *get() const { return pd_; }
    int error_number() const { return error_; }

private:
    ibv_pd *pd_ = nullptr;
    int error_ = 0;
};

} // namespace llc

#endif // LLC_HAVE_VERBS
