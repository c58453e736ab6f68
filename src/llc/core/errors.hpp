// errors.hpp - the exception type used inside libllc and status helpers.
#pragma once

#include <stdexcept>
#include <string>

namespace llc {

// Every failure inside the library is thrown as an Error carrying the llc_status
// code that the C API returns and a message for llc_last_error().
class Error : public std::runtime_error {
public:
    Error(int status, const std::string &message) : std::runtime_error(message), status_(status) {}
    int status() const { return status_; }

private:
    int status_;
};

// Throws Error(status, make()) with the message built out of line, so that a
// hot function's check costs a compare and a branch, and its body keeps no
// string code (which would cost it saved registers on every call):
//   if (bad) fail_with(LLC_ERR_PEER, [&] { return "..." + std::to_string(n); });
template <class MakeMessage> [[noreturn, gnu::cold, gnu::noinline]] void fail_with(int status, MakeMessage &&make)
{
    throw Error(status, make());
}

// "what: <strerror(err)>"
std::string errno_message(const std::string &what, int err);
[[noreturn]] void throw_errno(int status, const std::string &what, int err);

const char *status_text(int status);

// The one piece of global mutable state: the message of the last failed llc_init.
void set_last_init_error(const std::string &message);
const char *last_init_error();

} // namespace llc
