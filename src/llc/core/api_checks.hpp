// api_checks.hpp - the argument checks of the C API calls that take more
// than a handle: each throws Error(LLC_ERR_INVALID) saying which argument is
// wrong and what the valid values are.
#pragma once

#include "llc.h"

#include <cstddef>

namespace llc {

// The oldest LLC_API_VERSION llc_init still serves.
constexpr int kOldestServedApiVersion = 2;

// llc_init's parameters as this version reads them.  The struct of a caller
// of another version may be shorter (version 2 had no `endpoint`): only the
// fields every version has are read, and `endpoint` is 0.
llc_init_params_t current_init_params(const llc_init_params_t &caller);

// llc_init's parameters (as current_init_params gives them), before anything
// is created.
void check_init_params(const llc_init_params_t &params);

// llc_am_send's, in a job of `size` processes.
void check_am_send_args(int size, int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov,
                        int iovcnt);

} // namespace llc
