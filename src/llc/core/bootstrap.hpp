// bootstrap.hpp - checked wrapper around the caller's llc_bootstrap_ops_t.
#pragma once

#include "llc.h"

#include <string>

namespace llc {

class Bootstrap {
public:
    explicit Bootstrap(const llc_bootstrap_ops_t &ops) : ops_(ops) {}

    // Each throws Error(LLC_ERR_BOOTSTRAP) naming the operation and key on failure.
    void put(const std::string &key, const std::string &value);
    std::string get(int src_rank, const std::string &key);
    void fence();

private:
    llc_bootstrap_ops_t ops_;
};

} // namespace llc
