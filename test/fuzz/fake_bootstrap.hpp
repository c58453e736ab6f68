// fake_bootstrap.hpp - an in-memory llc_bootstrap_ops_t for the fuzz targets:
// get() answers every key with `value` (len bytes, may claim more than the buffer).
#pragma once

#include "llc.h"

#include <cstring>
#include <string>

namespace fuzz {

struct FakeBootstrap {
    std::string value;
    size_t claimed_len = size_t(-1); // what get() reports; -1: value.size()

    llc_bootstrap_ops_t ops()
    {
        llc_bootstrap_ops_t o{};
        o.arg = this;
        o.put = [](void *, const char *, const void *, size_t) { return 0; };
        o.get = [](void *arg, int, const char *, void *buf, size_t *len) {
            auto *self = static_cast<FakeBootstrap *>(arg);
            std::memcpy(buf, self->value.data(), std::min(*len, self->value.size()));
            *len = self->claimed_len == size_t(-1) ? self->value.size() : self->claimed_len;
            return 0;
        };
        o.fence = [](void *) { return 0; };
        return o;
    }
};

} // namespace fuzz
