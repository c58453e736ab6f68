// transport.cpp - the interface's default idle wait.
#include "transport/transport.hpp"

#include "core/clock.hpp"

namespace llc {

void Transport::idle_wait(uint64_t us) { sleep_us(us); }

} // namespace llc
