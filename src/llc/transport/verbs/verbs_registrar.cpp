// verbs_registrar.cpp - see verbs_registrar.hpp.
#include "transport/verbs/verbs_registrar.hpp"

#ifdef LLC_HAVE_VERBS

#include <cerrno>
#include <cstring>

namespace llc {

RegResult VerbsRegistrar::register_region(void *addr, size_t len)
{
    RegResult r;
    errno = 0;
    ibv_mr *mr = ibv_reg_mr(pd_, addr, len, access_);
    if (!mr) {
        r.error = errno ? errno : EIO;
        r.message = std::string("ibv_reg_mr: ") + std::strerror(r.error);
        if (r.error == ENOMEM)
            r.message += " (locked-memory limit, see ulimit -l, or adapter memory full)";
        return r;
    }
    r.reg.handle = mr;
    r.reg.lkey = mr->lkey;
    r.reg.rkey = mr->rkey;
    return r;
}

void VerbsRegistrar::deregister_region(const Registration &reg)
{
    if (!reg.handle)
        return;
    if (int rc = ibv_dereg_mr(static_cast<ibv_mr *>(reg.handle)); rc != 0) {
        dereg_failures_++;
        last_dereg_error_ = rc > 0 ? rc : errno;
    }
}

} // namespace llc

#endif // LLC_HAVE_VERBS
