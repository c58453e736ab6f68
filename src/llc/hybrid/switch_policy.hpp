// switch_policy.hpp - the receiver-driven hybrid's decision: which sources
// should send on the connected class (tcp; the paper's RC) and which on the
// connectionless class (udp; the paper's DC).
//
// Pure logic, no sockets and no clock: Context feeds it the receive history
// of the sources it heard from recently, once per period, and turns its
// decisions into switch asks (switch_asks.hpp; doc/libllc-hybrid.md).
//
// The paper chooses, per source, the path that minimizes latency among
//   (a) DC channel (send/recv through shared receive buffers),
//   (b) RC RDMA (a connection and a ring buffer per source), and
//   (c) DC RDMA (a ring buffer per source, reached through DC).
// CostModel puts a per-message cost on each as a function of the mean message
// size.  All three are concrete paths in libllc (Channel): Connectionless
// (the paper's DC channel) is plain udp datagrams, Connected (the paper's RC
// RDMA) is tcp read into a leased ring, RingLanding (the paper's DC RDMA) is
// udp datagrams addressed to the slots of a ring leased for the source
// (SwitchWant::UdpRing, udp_ring_landing.hpp): no connection and no
// connected slot.  decide() moves sources between the connected and
// connectionless classes; connectionless_moves() then picks plain udp or
// ring landing for the sources that stay on the connectionless class.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hybrid/receive_history.hpp"

namespace llc {

enum class Channel : uint8_t { Connectionless, Connected, RingLanding };
// Connectionless: plain udp (the paper's DC channel); Connected: tcp into a
// leased ring (the paper's RC RDMA); RingLanding: ring-addressed udp
// datagrams landing in a leased ring (the paper's DC RDMA).
// channel_name() gives the paper's names.
const char *channel_name(Channel c);
// The class a channel belongs to: Connected is tcp; both others are udp
// (RingLanding: ring-addressed datagrams, chosen by connectionless_moves()).
inline bool channel_is_connected(Channel c) { return c == Channel::Connected; }

// Per-message cost (microseconds) of a path: fixed part plus bytes / bandwidth,
// and the per-period cost of holding a connected slot (connection + ring
// buffer), which only a busy enough source pays back.  Defaults: nominal
// InfiniBand-like ratios (the paper's DC channel copies through shared
// buffers: half the bandwidth; its DC RDMA pays one more round of
// address/credit handling per message).
struct CostModel {
    double connectionless_fixed_us = 1.2;
    double connectionless_bytes_per_us = 3000;
    double connected_fixed_us = 1.0;
    double connected_bytes_per_us = 6000;
    double ring_landing_fixed_us = 2.2;
    double ring_landing_bytes_per_us = 6000;

    double per_message_us(Channel c, double mean_bytes) const;
    // The cheaper connectionless-class channel for this mean size (Connectionless or RingLanding).
    Channel best_connectionless(double mean_bytes) const;
    // What one message saves on Connected compared with the best connectionless-class channel (may be <= 0).
    double connected_saving_us(double mean_bytes) const;
};

// One source as the policy sees it.
struct SourceLoad {
    int source = -1;
    double load = 0;              // ReceiveHistory::predicted_load(): messages expected per period
    double mean_bytes = 0;
    bool on_connected = false;    // on tcp now, or a promotion was asked for and is pending
    bool on_ring_landing = false; // on udp, ring-addressed to a ring leased for it (or asked to be)
};

struct SwitchDecision {
    int source = -1;
    Channel want = Channel::Connectionless; // Connected: promote; Connectionless or RingLanding: demote (both go to udp)
};

class SwitchPolicy {
public:
    // promote_msgs: messages per period of the smallest size that make a
    // connectionless source worth a connected slot (LLC_HYBRID_PROMOTE_MSGS);
    // larger messages need fewer.  connected_cap: connected (tcp) sources
    // this receiver can hold.
    SwitchPolicy(CostModel model, uint64_t promote_msgs, size_t connected_cap);

    // What a source on tcp saves per period, net of its slot's cost (< 0: not worth it).
    double connected_gain(const SourceLoad &s) const;
    // Whether the source's history is worth keeping: its saving on tcp is at
    // or above the demotion level (a quarter of the slot's cost), so it is
    // or may soon be a candidate (the hybrid cap never drops such a source).
    bool busy(const SourceLoad &s) const
    {
        double saving = saving_per_period(s);
        return saving > 0 && saving >= slot_cost_us_ / 4;
    }
    // The channel this source would use if it had no connected slot.
    Channel connectionless_choice(const SourceLoad &s) const { return model_.best_connectionless(s.mean_bytes); }
    // The connectionless-class channel a source off tcp should be on:
    // RingLanding when the cost model prefers it for its mean size and the
    // source is busy (its saving on tcp at the demotion level, a quarter of
    // a slot's worth: the sources the hybrid cap keeps anyway, so that a
    // ring is not leased for an occasional large message); one on
    // RingLanding keeps it down to half that level, so that it does not
    // flap.  Else Connectionless (plain udp).
    Channel connectionless_target(const SourceLoad &s) const;
    // The connectionless-class moves for the sources off tcp: those whose
    // connectionless_target is not the channel they are on (on_ring_landing).
    // Sources on tcp, and
    // those listed in `skip` (decide()'s promotions), are left alone.
    std::vector<SwitchDecision> connectionless_moves(const std::vector<SourceLoad> &sources,
                                         const std::vector<SwitchDecision> &skip = {}) const;

    // The switches to ask for: demotions of connected sources that fell
    // below the demotion level (hysteresis: a quarter of the promotion
    // level), then promotions of the connectionless sources above the
    // promotion level, busiest first, within the cap; when full, a connected
    // source is evicted for a connectionless one whose saving is at least
    // twice its own.  Sources already where they should be are not listed.
    // connected_cap: connected sources this receiver may hold now (the constructor's cap
    // by default; with node-shared slots, its own plus the node's free ones).
    std::vector<SwitchDecision> decide(const std::vector<SourceLoad> &sources) const { return decide(sources, connected_cap_); }
    std::vector<SwitchDecision> decide(const std::vector<SourceLoad> &sources, size_t connected_cap) const;

    const CostModel &model() const { return model_; }
    double slot_cost_us() const { return slot_cost_us_; }

private:
    double saving_per_period(const SourceLoad &s) const;

    CostModel model_;
    double slot_cost_us_; // per period: promote_msgs small messages' saving
    size_t connected_cap_;
};

} // namespace llc
