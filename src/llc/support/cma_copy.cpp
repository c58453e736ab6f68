// cma_copy.cpp - process_vm_writev / process_vm_readv in a loop (cma_copy.hpp).
#include "support/cma_copy.hpp"

#include <sys/types.h>
#include <sys/uio.h>

#include <cerrno>
#include <climits>
#include <vector>

namespace llc {

namespace {

CmaResult failure(int e, bool nothing_moved, int *err)
{
    if (err)
        *err = e;
    if (nothing_moved && (e == EPERM || e == ENOSYS))
        return CmaResult::NotPermitted;
    return e == ESRCH ? CmaResult::NoProcess : CmaResult::BadAddress;
}

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
        if (moved <= 0)
            return failure(moved < 0 ? errno : EFAULT, done == 0, err);
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

CmaResult cma_read_spans(int32_t pid, const RemoteSpan *spans, size_t nspans, void *local, size_t n, int *err)
{
#ifdef HAVE_PROCESS_VM_READV
    char *dst = static_cast<char *>(local);
    size_t done = 0;
    size_t span = 0; // the remote cursor: spans[span], from offset `off`
    uint64_t off = 0;
    std::vector<struct iovec> remote;
    while (done < n) {
        remote.clear();
        for (size_t s = span, o = size_t(off); s < nspans && remote.size() < size_t(IOV_MAX); s++, o = 0)
            if (spans[s].len > o) // (a read of 0 bytes would look like a fault)
                remote.push_back({reinterpret_cast<void *>(uintptr_t(spans[s].addr + o)), size_t(spans[s].len - o)});
        struct iovec mine = {dst + done, n - done};
        ssize_t moved = remote.empty() ? 0 : ::process_vm_readv(pid_t(pid), &mine, 1, remote.data(), remote.size(), 0);
        if (moved < 0 && errno == EINTR)
            continue;
        if (moved <= 0)
            return failure(moved < 0 ? errno : EFAULT, done == 0, err);
        done += size_t(moved);
        for (size_t left = size_t(moved); left > 0 && span < nspans;) {
            uint64_t in_span = spans[span].len - off;
            if (left < in_span) {
                off += left;
                left = 0;
            } else {
                left -= size_t(in_span);
                span++;
                off = 0;
            }
        }
    }
    return CmaResult::Done;
#else
    (void)pid, (void)spans, (void)nspans, (void)local, (void)n;
    if (err)
        *err = ENOSYS;
    return CmaResult::NotPermitted;
#endif
}

CmaResult cma_write(int32_t pid, uint64_t addr, const void *local, size_t n, int *err)
{
    return cma_copy(true, pid, addr, const_cast<char *>(static_cast<const char *>(local)), n, err);
}

CmaResult cma_read(int32_t pid, uint64_t addr, void *local, size_t n, int *err)
{
    return cma_copy(false, pid, addr, static_cast<char *>(local), n, err);
}

} // namespace llc
