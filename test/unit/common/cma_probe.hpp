// cma_probe.hpp - whether this process may read memory with
// process_vm_readv (ptrace rules, seccomp filters, kernels without CMA):
// tests of reads by CMA skip where it is not permitted.  Read from itself:
// the processes of a test job are forked from the test and share its
// credentials, so this answers for reads between them too.
#pragma once

#include <sys/uio.h>
#include <unistd.h>

namespace llctest {

inline bool cma_permitted()
{
    static char probe[8] = "probe";
    char buf[8] = {};
    iovec local{buf, sizeof(buf)}, remote{probe, sizeof(probe)};
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == ssize_t(sizeof(buf));
}

} // namespace llctest
