// lazy_array.hpp - an n-entry array of zero-initialised plain values whose
// memory is only committed for the pages that are written.
//
// Backed by an anonymous private mapping (MAP_NORESERVE, no transparent huge
// pages): the kernel hands out a page on the first write to it, so a per-peer
// array indexed by rank costs resident memory only for the ranks actually
// used (one 4 KiB page per 512 consecutive ranks of 8-byte values), while
// the lookup stays a plain index.  Used for the per-peer sequence numbers,
// which must survive for every rank (see doc/memory.md).
#pragma once

#include "core/errors.hpp"
#include "llc.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace llc {

template <class T> class LazyZeroArray {
    static_assert(std::is_trivially_copyable<T>::value, "LazyZeroArray holds plain values (all-zero bytes = 0)");

public:
    LazyZeroArray() = default;
    LazyZeroArray(const LazyZeroArray &) = delete;
    LazyZeroArray &operator=(const LazyZeroArray &) = delete;
    LazyZeroArray(LazyZeroArray &&o) noexcept
        : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), mapped_(std::exchange(o.mapped_, 0))
    {
    }
    LazyZeroArray &operator=(LazyZeroArray &&o) noexcept
    {
        if (this != &o) {
            release();
            data_ = std::exchange(o.data_, nullptr);
            size_ = std::exchange(o.size_, 0);
            mapped_ = std::exchange(o.mapped_, 0);
        }
        return *this;
    }
    ~LazyZeroArray() { release(); }

    // n zero entries (previous contents are dropped); the vector-like
    // signature accepts only a zero value.  Throws Error(LLC_ERR_NOMEM).
    void assign(size_t n, const T &zero)
    {
        static const T kZero{};
        if (std::memcmp(&zero, &kZero, sizeof(T)) != 0)
            throw std::logic_error("LazyZeroArray::assign: only zero-filled arrays are lazy");
        release();
        if (n == 0)
            return;
        size_t page = page_bytes();
        size_t bytes = (n * sizeof(T) + page - 1) / page * page;
        void *p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            throw_errno(LLC_ERR_NOMEM, "mmap of a " + std::to_string(bytes) + "-byte per-peer table", errno);
#ifdef MADV_NOHUGEPAGE
        ::madvise(p, bytes, MADV_NOHUGEPAGE); // a huge page would commit 2 MiB on the first write
#endif
        data_ = static_cast<T *>(p);
        size_ = n;
        mapped_ = bytes;
    }

    T &operator[](size_t i) { return data_[i]; }
    const T &operator[](size_t i) const { return data_[i]; }
    size_t size() const { return size_; }
    // Address space reserved (n entries rounded up to pages).
    size_t mapped_bytes() const { return mapped_; }
    // Pages the kernel reports present (mincore); a page only read so far
    // may be counted although it maps the shared zero page.
    size_t resident_bytes() const
    {
        if (!data_)
            return 0;
        size_t page = page_bytes();
        std::vector<unsigned char> vec(mapped_ / page);
        if (::mincore(data_, mapped_, vec.data()) != 0)
            return mapped_; // cannot tell: count it all
        size_t pages = 0;
        for (unsigned char v : vec)
            pages += v & 1;
        return pages * page;
    }

private:
    static size_t page_bytes() { return size_t(::sysconf(_SC_PAGESIZE)); }
    void release()
    {
        if (data_)
            ::munmap(data_, mapped_);
        data_ = nullptr;
        size_ = 0;
        mapped_ = 0;
    }

    T *data_ = nullptr;
    size_t size_ = 0;
    size_t mapped_ = 0;
};

} // namespace llc
