// switch_policy.hpp - the receiver-driven hybrid's decision: which sources
// should send on the RC class (tcp here) and which on the DC class (udp).
//
// Pure logic, no sockets and no clock: Context feeds it the receive history
// of the sources it heard from recently, once per period, and turns its
// decisions into switch asks (switch_asks.hpp; doc/libllc.md, "Hybrid").
//
// The paper chooses, per source, the path that minimizes latency among
//   (a) DC channel (send/recv through shared receive buffers),
//   (b) RC RDMA (a connection and a ring buffer per source), and
//   (c) DC RDMA (a ring buffer per source, reached through DC).
// CostModel puts a per-message cost on each as a function of the mean message
// size.  All three are concrete paths in libllc: the DC channel is plain udp
// datagrams, RC RDMA is tcp read into a leased ring, DC RDMA is udp datagrams
// addressed to the slots of a ring leased for the source
// (SwitchWant::UdpRing, udp_ring_landing.hpp): no connection and no RC slot.
// decide() moves sources between the RC and DC classes; dc_moves() then
// picks DC channel or DC RDMA for the sources that stay on the DC class.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "hybrid/receive_history.hpp"

namespace llc {

enum class Channel : uint8_t { DcChannel, RcRdma, DcRdma };
const char *channel_name(Channel c);
// The class a channel belongs to: RC RDMA is tcp; both DC kinds are udp
// (DC RDMA: ring-addressed datagrams, chosen by dc_moves()).
inline bool channel_is_rc(Channel c) { return c == Channel::RcRdma; }

// Per-message cost (microseconds) of a path: fixed part plus bytes / bandwidth,
// and the per-period cost of holding an RC slot (connection + ring buffer),
// which only a busy enough source pays back.  Defaults: nominal InfiniBand-like
// ratios (DC channel copies through shared buffers: half the bandwidth; DC RDMA
// pays one more round of address/credit handling per message).
struct CostModel {
    double dc_channel_fixed_us = 1.2;
    double dc_channel_bytes_per_us = 3000;
    double rc_fixed_us = 1.0;
    double rc_bytes_per_us = 6000;
    double dc_rdma_fixed_us = 2.2;
    double dc_rdma_bytes_per_us = 6000;

    double per_message_us(Channel c, double mean_bytes) const;
    // The cheaper DC-class channel for this mean size (DC channel or DC RDMA).
    Channel best_dc(double mean_bytes) const;
    // What one message saves on RC compared with the best DC-class channel (may be <= 0).
    double rc_saving_us(double mean_bytes) const;
};

// One source as the policy sees it.
struct SourceLoad {
    int source = -1;
    double load = 0;       // ReceiveHistory::predicted_load(): messages expected per period
    double mean_bytes = 0;
    bool on_rc = false;    // on tcp now, or a promotion was asked for and is pending
    bool on_dc_rdma = false; // on udp, ring-addressed to a ring leased for it (or asked to be)
};

struct SwitchDecision {
    int source = -1;
    Channel want = Channel::DcChannel; // RcRdma: promote; DcChannel or DcRdma: demote (both go to udp)
};

class SwitchPolicy {
public:
    // promote_msgs: messages per period of the smallest size that make a DC
    // source worth an RC slot (LLC_HYBRID_PROMOTE_MSGS); larger messages
    // need fewer.  rc_cap: RC sources this receiver can hold.
    SwitchPolicy(CostModel model, uint64_t promote_msgs, size_t rc_cap);

    // What a source on RC saves per period, net of its slot's cost (< 0: not worth it).
    double rc_gain(const SourceLoad &s) const;
    // Whether the source's history is worth keeping: its saving on RC is at
    // or above the demotion level (a quarter of the slot's cost), so it is
    // or may soon be a candidate (the hybrid cap never drops such a source).
    bool busy(const SourceLoad &s) const
    {
        double saving = saving_per_period(s);
        return saving > 0 && saving >= slot_cost_us_ / 4;
    }
    // The channel this source would use if it had no RC slot.
    Channel dc_choice(const SourceLoad &s) const { return model_.best_dc(s.mean_bytes); }
    // The DC-class channel a source off RC should be on: DC RDMA when the
    // cost model prefers it for its mean size and the source is busy (its
    // saving on RC at the demotion level, a quarter of a slot's worth: the
    // sources the hybrid cap keeps anyway, so that a ring is not leased for
    // an occasional large message); one on DC RDMA keeps it down to half
    // that level, so that it does not flap.  Else the DC channel.
    Channel dc_target(const SourceLoad &s) const;
    // The DC-class moves for the sources off RC: those whose dc_target is
    // not the DC channel they are on (on_dc_rdma).  Sources on RC, and
    // those listed in `skip` (decide()'s promotions), are left alone.
    std::vector<SwitchDecision> dc_moves(const std::vector<SourceLoad> &sources,
                                         const std::vector<SwitchDecision> &skip = {}) const;

    // The switches to ask for: demotions of RC sources that fell below the
    // demotion level (hysteresis: a quarter of the promotion level), then
    // promotions of the DC sources above the promotion level, busiest
    // first, within the cap; when full, an RC source is evicted for a DC one
    // whose saving is at least twice its own.  Sources already where they
    // should be are not listed.
    // rc_cap: RC sources this receiver may hold now (the constructor's cap
    // by default; with node-shared slots, its own plus the node's free ones).
    std::vector<SwitchDecision> decide(const std::vector<SourceLoad> &sources) const { return decide(sources, rc_cap_); }
    std::vector<SwitchDecision> decide(const std::vector<SourceLoad> &sources, size_t rc_cap) const;

    const CostModel &model() const { return model_; }
    double slot_cost_us() const { return slot_cost_us_; }

private:
    double saving_per_period(const SourceLoad &s) const;

    CostModel model_;
    double slot_cost_us_; // per period: promote_msgs small messages' saving
    size_t rc_cap_;
};

} // namespace llc
