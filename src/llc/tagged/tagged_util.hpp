// tagged_util.hpp - small helpers shared by the tagged protocol's files
// (tagged.cpp, tagged_offers.cpp, tagged_am.cpp).
#pragma once

#include "tagged/tag_matcher.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

namespace llc {

// The bit of an Await in a mask of accepted ones (Tagged::awaiting_request).
constexpr unsigned bit(TreqState::Await a) { return 1u << a; }

// A request starts: its state cleared, of this kind, for buf (capacity bytes).
inline void start_request(llc_treq_t *req, TreqState::Kind kind, void *buf, uint64_t capacity)
{
    TreqState &r = state_of(req);
    std::memset(&r, 0, sizeof(r));
    r.kind = kind;
    r.buf = buf;
    r.capacity = capacity;
    r.magic = TreqState::kMagic;
    req->status = LLC_OK;
}

inline std::string hex(uint64_t v)
{
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

} // namespace llc
