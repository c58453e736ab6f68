// self_transport.cpp - loopback delivery through a queue.
#include "transport/self/self_transport.hpp"

#include "core/context.hpp"
#include "mem/mem_accounting.hpp"

#include <unistd.h>

#include <cstring>

namespace llc {

const TransportCaps &SelfTransport::caps() const
{
    // CapRemoteRead: a request-to-send to itself is read in place (the CMA read of its own memory)
    static constexpr TransportCaps self = TransportCaps::named("self").with(CapOrdered | CapReliable | CapRemoteRead);
    return self;
}

int32_t SelfTransport::peer_pid(int rank) { return rank == ctx_.rank() ? int32_t(::getpid()) : -1; }

int SelfTransport::send(int, std::unique_ptr<OutgoingMessage> msg)
{
    ctx_.counters().self_msgs++;
    int rc = LLC_OK;
    if (msg->payload_len() <= ctx_.config().copy_max) {
        msg->own_payload();
    } else {
        msg->owes_callback = true;
        rc = LLC_INPROGRESS;
    }
    queue_.push_back(std::move(msg));
    return rc;
}

bool SelfTransport::progress()
{
    if (queue_.empty())
        return false;
    // Only what was queued before this call: a handler that sends to itself
    // again is served by the next llc_progress.
    std::deque<std::unique_ptr<OutgoingMessage>> batch;
    batch.swap(queue_);
    for (auto &msg : batch) {
        const auto &spans = msg->payload();
        const char *data = nullptr;
        if (spans.size() == 1) {
            data = spans[0].data;
        } else if (spans.size() > 1) {
            char *p = gather_.reserve(msg->payload_len());
            data = p;
            for (const ConstSpan &s : spans) {
                std::memcpy(p, s.data, s.len);
                p += s.len;
            }
        }
        ctx_.deliver(ctx_.rank(), msg->wire(), msg->hdr(), data, msg->payload_len());
        gather_.shrink_if_above(1u << 20);
        if (msg->owes_callback)
            ctx_.defer_completion(*msg, LLC_OK);
    }
    return true;
}

void SelfTransport::account(MemRegistry &r) const
{
    r.add(MemComponent::SelfTransport, sizeof(SelfTransport) + heap_bytes(queue_) + gather_.capacity(), 1);
    account_queue(r, queue_);
}

void SelfTransport::struct_sizes(StructSizes &s) { s.self_transport = sizeof(SelfTransport); }

} // namespace llc
