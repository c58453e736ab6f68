// tagged_test_util.hpp - small helpers of the offer and split-copy tests
// (tagged_offer_test.cpp, tagged_split_test.cpp).
#pragma once

#include "common/test_util.hpp"

#include "core/context.hpp"
#include "tagged/tagged.hpp"

namespace llctest {

// A tagged request has completed (its state let go of it).
inline bool done(const llc_treq_t &req) { return llc::state_of(const_cast<llc_treq_t *>(&req)).magic == 0; }

inline llc_stats_t stats(llc_context_t *ctx)
{
    llc_stats_t s{};
    EXPECT_EQ(llc_get_stats(ctx, &s), LLC_OK);
    return s;
}

// Offers this process holds from its peers.
inline size_t offers_held(llc_context_t *ctx) { return llc::context_of(ctx).tagged().offers().size(); }

} // namespace llctest
