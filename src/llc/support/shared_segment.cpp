// shared_segment.cpp - shm_open/mmap of a job's shared-memory segments.
#include "support/shared_segment.hpp"

#include "core/errors.hpp"
#include "support/string_hash.hpp"
#include "llc.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace llc {

std::string shm_name_for(const std::string &job_id, const std::string &suffix)
{
    char buf[40];
    std::snprintf(buf, sizeof(buf), "/llc-%016llx-", (unsigned long long)fnv1a64(job_id));
    return buf + suffix;
}

UniqueFd shm_create_replacing(const std::string &name, const std::string &purpose)
{
    UniqueFd fd(::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
    if (!fd.valid() && errno == EEXIST) {
        // Left behind by a crashed job with the same id: replace it.
        ::shm_unlink(name.c_str());
        fd.reset(::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600));
    }
    if (!fd.valid())
        throw_errno(LLC_ERR_SYSTEM, "shm_open(" + name + ") for " + purpose, errno);
    return fd;
}

MemoryMapping shm_size_and_map(const UniqueFd &fd, const std::string &name, size_t bytes,
                               const std::string &ftruncate_hint)
{
    if (::ftruncate(fd.get(), off_t(bytes)) != 0)
        throw_errno(LLC_ERR_SYSTEM, "ftruncate(" + name + ", " + std::to_string(bytes) + ")" + ftruncate_hint,
                    errno);
    void *addr = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (addr == MAP_FAILED)
        throw_errno(LLC_ERR_SYSTEM, "mmap of " + name, errno);
    return MemoryMapping(addr, bytes);
}

MemoryMapping shm_open_and_map(const std::string &name, bool writable, const std::string &what)
{
    UniqueFd fd(::shm_open(name.c_str(), writable ? O_RDWR : O_RDONLY, 0));
    if (!fd.valid())
        throw_errno(LLC_ERR_SYSTEM, "shm_open(" + name + ") of " + what, errno);
    struct stat st;
    if (::fstat(fd.get(), &st) != 0)
        throw_errno(LLC_ERR_SYSTEM, "fstat(" + name + ")", errno);
    size_t bytes = size_t(st.st_size);
    if (bytes == 0)
        return MemoryMapping(); // nothing to map: the caller's size check says what is wrong
    void *addr = ::mmap(nullptr, bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd.get(), 0);
    if (addr == MAP_FAILED)
        throw_errno(LLC_ERR_SYSTEM, "mmap of " + name, errno);
    return MemoryMapping(addr, bytes);
}

} // namespace llc
