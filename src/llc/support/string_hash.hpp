// string_hash.hpp - FNV-1a hashes of strings (job ids, KVS keys): stable
// across processes and machines, unlike std::hash.
#pragma once

#include <cstdint>
#include <string>

namespace llc {

inline uint64_t fnv1a64(const std::string &s)
{
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ull;
    }
    return h;
}

inline uint32_t fnv1a32(const std::string &s)
{
    uint32_t h = 2166136261u;
    for (unsigned char c : s) {
        h ^= c;
        h *= 16777619u;
    }
    return h;
}

} // namespace llc
