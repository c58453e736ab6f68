// self_transport.hpp - messages a process sends to itself: queued, delivered by
// the next llc_progress (never inside llc_am_send).
#pragma once

#include "support/byte_buffer.hpp"
#include "transport/transport.hpp"
#include "wire/outgoing_message.hpp"

#include <deque>
#include <memory>

namespace llc {

class Context;
struct StructSizes;

class SelfTransport final : public Transport {
public:
    explicit SelfTransport(Context &ctx) : ctx_(ctx) {}
    const TransportCaps &caps() const override;
    // dest is this process.
    int send(int dest, std::unique_ptr<OutgoingMessage> msg) override;
    bool progress() override;
    bool has_pending_sends() const override { return !queue_.empty(); }
    // Its own process (rank is this process).
    int32_t peer_pid(int rank) override;
    // Its object, queue and gather buffer, and the queued records.
    void account(MemRegistry &r) const override;
    static void struct_sizes(StructSizes &s);

private:
    Context &ctx_;
    std::deque<std::unique_ptr<OutgoingMessage>> queue_;
    ByteBuffer gather_;
};

} // namespace llc
