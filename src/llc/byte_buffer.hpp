// byte_buffer.hpp - growable uninitialised byte buffer (no zero-fill of large payloads).
#pragma once

#include <cstddef>
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
