// memory_mapping.hpp - owning mmap() region.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <utility>

namespace llc {

class MemoryMapping {
public:
    MemoryMapping() = default;
    MemoryMapping(void *addr, size_t len) : addr_(addr), len_(len) {}
    MemoryMapping(const MemoryMapping &) = delete;
    MemoryMapping &operator=(const MemoryMapping &) = delete;
    MemoryMapping(MemoryMapping &&other) noexcept
        : addr_(std::exchange(other.addr_, nullptr)), len_(std::exchange(other.len_, 0)) {}
    MemoryMapping &operator=(MemoryMapping &&other) noexcept
    {
        if (this != &other) {
            reset();
            addr_ = std::exchange(other.addr_, nullptr);
            len_ = std::exchange(other.len_, 0);
        }
        return *this;
    }
    ~MemoryMapping() { reset(); }

    char *data() const { return static_cast<char *>(addr_); }
    size_t size() const { return len_; }
    void reset()
    {
        if (addr_)
            ::munmap(addr_, len_);
        addr_ = nullptr;
        len_ = 0;
    }

private:
    void *addr_ = nullptr;
    size_t len_ = 0;
};

} // namespace llc
