// cma_copy.hpp - copying to or from another process of the node with
// process_vm_writev / process_vm_readv (cross-memory attach): the one
// single-copy mechanism of libllc, used by the tagged layer's rendezvous
// (a receiver pulling a message, a sender writing into an offered receive,
// a large active message read where its sender keeps it) and by the
// one-sided operations' node-local path.
#pragma once

#include <cstddef>
#include <cstdint>

namespace llc {

enum class CmaResult : uint8_t {
    Done,
    NotPermitted, // EPERM or ENOSYS before any byte moved (ptrace rules, seccomp, no kernel support)
    NoProcess,    // ESRCH: the process is gone
    BadAddress,   // EFAULT, or the copy stopped part-way: memory the process does not have
};

// A piece of another process's memory.
struct RemoteSpan {
    uint64_t addr;
    uint64_t len;
};
static_assert(sizeof(RemoteSpan) == 16, "remote span layout (it travels on the wire)");

// Copy n bytes from local to addr in process pid (write), or from addr in pid
// to local (read).  err (may be nullptr) receives errno on failure.
CmaResult cma_write(int32_t pid, uint64_t addr, const void *local, size_t n, int *err);
CmaResult cma_read(int32_t pid, uint64_t addr, void *local, size_t n, int *err);
// Gather the spans of process pid, in order, into local (their lengths add
// up to n without overflow: the caller checked).  Empty spans are skipped.
CmaResult cma_read_spans(int32_t pid, const RemoteSpan *spans, size_t nspans, void *local, size_t n, int *err);

} // namespace llc
