// byte_buffer.hpp - growable uninitialised byte buffer (no zero-fill of large payloads).
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>

namespace llc {

class ByteBuffer {
public:
    // Make room for n bytes; previous contents are not preserved.
    char *reserve(size_t n)
    {
        if (n > capacity_) {
            data_.reset();
            data_.reset(new char[n]);
            capacity_ = n;
        }
        return data_.get();
    }
    // Make room for n bytes, keeping the first `keep` (<= capacity()).
    char *grow(size_t n, size_t keep)
    {
        if (n > capacity_) {
            std::unique_ptr<char[]> bigger(new char[n]);
            if (keep)
                std::memcpy(bigger.get(), data_.get(), keep);
            data_ = std::move(bigger);
            capacity_ = n;
        }
        return data_.get();
    }
    char *data() const { return data_.get(); }
    size_t capacity() const { return capacity_; }
    // Give memory back when a big message left a big buffer behind.
    void shrink_if_above(size_t limit)
    {
        if (capacity_ > limit) {
            data_.reset();
            capacity_ = 0;
        }
    }

private:
    std::unique_ptr<char[]> data_;
    size_t capacity_ = 0;
};

} // namespace llc
