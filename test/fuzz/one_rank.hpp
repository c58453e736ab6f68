// one_rank.hpp - what the fuzz targets that drive a whole one-rank context
// share: an in-memory bootstrap, the reader of the fuzzer's bytes, and the
// context itself.
#pragma once

#include "llc.h"

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace fuzz {

// The key-value store of a job of one process.
struct MemoryBootstrap {
    std::map<std::string, std::string> kv;

    llc_bootstrap_ops_t ops()
    {
        llc_bootstrap_ops_t o{};
        o.arg = this;
        o.put = [](void *arg, const char *key, const void *value, size_t len) {
            static_cast<MemoryBootstrap *>(arg)->kv[key].assign(static_cast<const char *>(value), len);
            return 0;
        };
        o.get = [](void *arg, int, const char *key, void *value, size_t *len) {
            auto &kv = static_cast<MemoryBootstrap *>(arg)->kv;
            auto it = kv.find(key);
            if (it == kv.end())
                return 1;
            std::memcpy(value, it->second.data(), std::min(*len, it->second.size()));
            *len = it->second.size();
            return 0;
        };
        o.fence = [](void *) { return 0; };
        return o;
    }
};

// The fuzzer's bytes, read in order; zeros once they run out.
struct Input {
    const uint8_t *p;
    size_t left;
    uint8_t byte() { return left ? (left--, *p++) : 0; }
    uint16_t u16() { return uint16_t(byte() | byte() << 8); }
    uint64_t u64()
    {
        uint64_t v = 0;
        for (int i = 0; i < 8; i++)
            v |= uint64_t(byte()) << (8 * i);
        return v;
    }
};

// A context of rank 0 of a job of one (aborts, naming `target`, if llc_init fails).
inline llc_context_t *one_rank_context(const char *target, MemoryBootstrap &boot)
{
    static int node = 0;
    const std::string job = std::string(target) + "-" + std::to_string(::getpid());
    llc_init_params_t params{};
    params.api_version = LLC_API_VERSION;
    params.rank = 0;
    params.size = 1;
    params.node_of_rank = &node;
    params.job_id = job.c_str();
    params.boot = boot.ops();
    llc_context_t *ctx = nullptr;
    if (llc_init(&params, &ctx) != LLC_OK) {
        std::fprintf(stderr, "%s: llc_init: %s\n", target, llc_last_error(nullptr));
        std::abort();
    }
    return ctx;
}

} // namespace fuzz
