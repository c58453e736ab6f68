// bootstrap.hpp - checked wrapper around the caller's llc_bootstrap_ops_t.
#pragma once

#include "llc.h"

#include <string>

namespace llc {

class Bootstrap {
public:
    // The keys of endpoint e > 0 carry the prefix "e<e>-", so that the
    // contexts of one process do not overwrite each other's values.
    explicit Bootstrap(const llc_bootstrap_ops_t &ops, int endpoint = 0)
        : ops_(ops), key_prefix_(endpoint > 0 ? "e" + std::to_string(endpoint) + "-" : std::string())
    {
    }

    // Each throws Error(LLC_ERR_BOOTSTRAP) naming the operation and key on failure.
    void put(const std::string &key, const std::string &value);
    std::string get(int src_rank, const std::string &key);
    void fence();

private:
    llc_bootstrap_ops_t ops_;
    std::string key_prefix_;
};

} // namespace llc
