// errors.cpp - status names, errno formatting and the "last init error" string.
#include "core/errors.hpp"

#include "llc.h"

#include <cstring>
#include <mutex>

namespace llc {

std::string errno_message(const std::string &what, int err)
{
    char buf[256];
    // GNU strerror_r returns the string (possibly not in buf).
    const char *text = strerror_r(err, buf, sizeof(buf));
    return what + ": " + text;
}

void throw_errno(int status, const std::string &what, int err)
{
    throw Error(status, errno_message(what, err));
}

const char *status_text(int status)
{
    switch (status) {
    case LLC_OK: return "success";
    case LLC_INPROGRESS: return "operation in progress";
    case LLC_ERR_INVALID: return "invalid argument";
    case LLC_ERR_NOMEM: return "out of memory";
    case LLC_ERR_SYSTEM: return "operating-system call failed";
    case LLC_ERR_PEER: return "peer process failed or its connection broke";
    case LLC_ERR_BOOTSTRAP: return "bootstrap callback failed";
    case LLC_ERR_UNSUPPORTED: return "operation not supported";
    case LLC_ERR_TIMEOUT: return "timed out";
    case LLC_ERR_STATE: return "call not allowed in the current state";
    case LLC_ERR_TRUNCATE: return "message longer than the receive buffer (truncated)";
    case LLC_ERR_CANCELED: return "receive cancelled";
    case LLC_ERR_RANGE:
        return "outside the target region";
    case LLC_ERR_KEY:
        return "region key names no region of the target";
    default: return "unknown status code";
    }
}

namespace {
std::mutex last_init_error_lock;
std::string last_init_error_text = "no error";
} // namespace

void set_last_init_error(const std::string &message)
{
    std::lock_guard<std::mutex> guard(last_init_error_lock);
    last_init_error_text = message;
}

const char *last_init_error()
{
    std::lock_guard<std::mutex> guard(last_init_error_lock);
    return last_init_error_text.c_str();
}

} // namespace llc
