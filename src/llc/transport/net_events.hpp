// net_events.hpp - what the two socket transports (tcp, udp) tell the layer
// that routes inter-node messages between them, and what they ask it.
//
// The transports know this interface only; the router (hybrid/net_router.hpp)
// subscribes to it when it is created (TcpTransport::subscribe,
// UdpTransport::subscribe) and is the only implementation.  With LLC_NET=tcp
// or udp the router sends everything one way and its answers are those of a
// single transport: nothing to switch, no rings, every udp state droppable.
//
// The switching records (Switch on tcp, SwitchAck on udp) and the switching
// channel's asks and answers are the hybrid's protocol (doc/libllc-hybrid.md);
// the transports only carry them and report what arrived.
#pragma once

#include "wire/am_protocol.hpp"

#include <cstddef>
#include <cstdint>

namespace llc {

class NetEvents {
public:
    // The path a message arrived on.
    enum class Arrival : uint8_t { Udp, Tcp };

    // A message (bytes: its payload) from src arrived on `path`.
    virtual void note_arrival(int src, Arrival path, uint64_t bytes) = 0;
    // A Switch record arrived on tcp from src: its tcp stream is drained.
    virtual void on_switch_marker(int src) = 0;
    // A SwitchAck record arrived on udp from src.
    virtual void on_switch_ack(int src) = 0;
    // A SwitchAsk (number: the asker's round) arrived from src on the switching channel.
    virtual SwitchVerdict on_switch_request(int src, uint64_t want, uint64_t number) = 0;
    // The answer to one of our asks: want is what it asked for (SwitchWant),
    // point the source's next psn to us when it answered (the change point
    // of ring addressing, see udp_ring_landing.hpp).
    virtual void on_switch_answer(int src, uint64_t number, SwitchVerdict verdict, uint64_t want,
                                  uint64_t point) = 0;
    // udp may drop its state for dest: no route of dest is on tcp, switching
    // or holding sends.
    virtual bool udp_state_droppable(int dest) const = 0;
    // The ring leased for src's tcp stream (landing_for) or for its
    // ring-addressed udp datagrams (udp_landing_for), or nullptr.  An answer
    // holds until landing_epoch() changes; a ring is never returned while a
    // transport reads into it (returns wait for the end of the tcp progress
    // call, and udp is told first: UdpTransport::detach_landing).
    virtual uint64_t landing_epoch() const = 0;
    virtual char *landing_for(int src, size_t &bytes) = 0;
    virtual char *udp_landing_for(int src, size_t &bytes) = 0;
    // src's accepted tcp connection broke.
    virtual void on_tcp_source_failed(int src) = 0;

protected:
    ~NetEvents() = default;
};

} // namespace llc
