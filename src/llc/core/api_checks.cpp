// api_checks.cpp - see api_checks.hpp.
#include "core/api_checks.hpp"

#include "core/errors.hpp"
#include "wire/am_protocol.hpp"

#include <cstddef>
#include <cstring>
#include <string>

namespace llc {

namespace {

std::string range_text(int size) { return "0.." + std::to_string(size - 1); }

} // namespace

llc_init_params_t current_init_params(const llc_init_params_t &caller)
{
    if (caller.api_version == LLC_API_VERSION)
        return caller;
    llc_init_params_t p{};
    std::memcpy(&p, &caller, offsetof(llc_init_params_t, endpoint));
    return p;
}

void check_init_params(const llc_init_params_t &p)
{
    auto invalid = [](const std::string &what) { throw Error(LLC_ERR_INVALID, "llc_init: " + what); };
    if (p.api_version != LLC_API_VERSION && p.api_version != kOldestServedApiVersion)
        invalid("api_version is " + std::to_string(p.api_version) + " but this libllc implements " +
                std::to_string(LLC_API_VERSION) + " (and serves callers of " + std::to_string(kOldestServedApiVersion) +
                ")");
    if (p.endpoint < 0 || p.endpoint >= LLC_MAX_ENDPOINTS)
        invalid("endpoint " + std::to_string(p.endpoint) + " is out of range: valid endpoints are " +
                range_text(LLC_MAX_ENDPOINTS));
    if (p.size < 1)
        invalid("size must be at least 1 (got " + std::to_string(p.size) + ")");
    if (p.rank < 0 || p.rank >= p.size)
        invalid("rank " + std::to_string(p.rank) + " is out of range: valid ranks are " + range_text(p.size));
    if (!p.node_of_rank)
        invalid("node_of_rank is NULL (it must hold `size` node indices)");
    for (int r = 0; r < p.size; r++)
        if (p.node_of_rank[r] < 0)
            invalid("node_of_rank[" + std::to_string(r) + "] is negative (" +
                    std::to_string(p.node_of_rank[r]) + ")");
    if (!p.job_id || !*p.job_id)
        invalid("job_id is NULL or empty");
    size_t job_len = 0;
    while (job_len <= 64 && p.job_id[job_len])
        job_len++;
    if (job_len > 64)
        invalid("job_id is longer than 64 bytes");
    if (!p.boot.put || !p.boot.get || !p.boot.fence)
        invalid("the bootstrap's put, get and fence callbacks are required");
}

void check_am_send_args(int size, int dest, unsigned id, const void *hdr, size_t hdr_len, const llc_iov_t *iov,
                        int iovcnt)
{
    auto invalid = [](const std::string &what) { throw Error(LLC_ERR_INVALID, "llc_am_send: " + what); };
    if (dest < 0 || dest >= size)
        invalid("destination rank " + std::to_string(dest) + " is out of range: valid ranks are " +
                range_text(size));
    if (id >= LLC_AM_MAX_HANDLERS)
        invalid("handler id " + std::to_string(id) + " is out of range: valid ids are 0.." +
                std::to_string(LLC_AM_MAX_HANDLERS - 1));
    if (hdr_len > LLC_AM_HDR_MAX)
        invalid("header of " + std::to_string(hdr_len) + " bytes exceeds LLC_AM_HDR_MAX (" +
                std::to_string(LLC_AM_HDR_MAX) + ")");
    if (hdr_len > 0 && !hdr)
        invalid("hdr is NULL but hdr_len is " + std::to_string(hdr_len));
    if (iovcnt < 0 || (iovcnt > 0 && !iov))
        invalid("iov is NULL or iovcnt is negative");
    for (int i = 0; i < iovcnt; i++)
        if (!iov[i].base && iov[i].len > 0)
            invalid("iov[" + std::to_string(i) + "].base is NULL with a non-zero length");
}

} // namespace llc
