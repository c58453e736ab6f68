// api_checks.hpp - the argument checks of the C API calls that take more
// than a handle: each throws Error(LLC_ERR_INVALID) saying which argument is
// wrong and what the valid values are.
#pragma once

#include "llc.h"

#include <cstddef>

namespace llc {

// llc_init's parameters, before anything is created.
void check_init_params(const llc_init_params_t &params);

// llc_am_send's, in a job of `size` processes.
void check_am_send_args(int size, int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov,
                        int iovcnt);

} // namespace llc
