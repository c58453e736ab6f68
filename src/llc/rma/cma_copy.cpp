// cma_copy.cpp - process_vm_writev / process_vm_readv in a loop (cma_copy.hpp).
#include "rma/cma_copy.hpp"

#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>

namespace llc {

namespace {

CmaResult cma_copy(bool write, int32_t pid, uint64_t addr, char *local, size_t n, int *err)
{
#ifdef HAVE_PROCESS_VM_READV
    size_t done = 0;
    while (done < n) {
        struct iovec mine = {local + done, n - done};
        struct iovec theirs = {reinterpret_cast<void *>(uintptr_t(addr + done)), n - done};
        ssize_t moved = write ? ::process_vm_writev(pid_t(pid), &mine, 1, &theirs, 1, 0)
                              : ::process_vm_readv(pid_t(pid), &mine, 1, &theirs, 1, 0);
        if (moved < 0 && errno == EINTR)
            continue;
        if (moved <= 0) {
            const int e = moved < 0 ? errno : EFAULT;
            if (err)
                *err = e;
            if (done == 0 && (e == EPERM || e == ENOSYS))
                return CmaResult::NotPermitted;
            return e == ESRCH ? CmaResult::NoProcess : CmaResult::BadAddress;
        }
        done += size_t(moved);
    }
    return CmaResult::Done;
#else
    (void)write, (void)pid, (void)addr, (void)local, (void)n;
    if (err)
        *err = ENOSYS;
    return CmaResult::NotPermitted;
#endif
}

} // namespace

CmaResult cma_write(int32_t pid, uint64_t addr, const void *local, size_t n, int *err)
{
    return cma_copy(true, pid, addr, const_cast<char *>(static_cast<const char *>(local)), n, err);
}

CmaResult cma_read(int32_t pid, uint64_t addr, void *local, size_t n, int *err)
{
    return cma_copy(false, pid, addr, static_cast<char *>(local), n, err);
}

} // namespace llc
