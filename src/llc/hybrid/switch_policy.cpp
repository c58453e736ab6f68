// switch_policy.cpp - cost model and the per-period choice.
#include "hybrid/switch_policy.hpp"

#include <algorithm>
#include <limits>

namespace llc {

// The paper's names (switch_policy.hpp).
const char *channel_name(Channel c)
{
    switch (c) {
    case Channel::Connectionless: return "DC channel";
    case Channel::Connected: return "RC RDMA";
    case Channel::RingLanding: return "DC RDMA";
    }
    return "?";
}

// ------------------------------------------------------------------ cost model

double CostModel::per_message_us(Channel c, double mean_bytes) const
{
    switch (c) {
    case Channel::Connectionless: return connectionless_fixed_us + mean_bytes / connectionless_bytes_per_us;
    case Channel::Connected: return connected_fixed_us + mean_bytes / connected_bytes_per_us;
    case Channel::RingLanding: return ring_landing_fixed_us + mean_bytes / ring_landing_bytes_per_us;
    }
    return std::numeric_limits<double>::infinity();
}

Channel CostModel::best_connectionless(double mean_bytes) const
{
    return per_message_us(Channel::RingLanding, mean_bytes) < per_message_us(Channel::Connectionless, mean_bytes)
               ? Channel::RingLanding
               : Channel::Connectionless;
}

double CostModel::connected_saving_us(double mean_bytes) const
{
    return per_message_us(best_connectionless(mean_bytes), mean_bytes) - per_message_us(Channel::Connected, mean_bytes);
}

// ------------------------------------------------------------------ policy

SwitchPolicy::SwitchPolicy(CostModel model, uint64_t promote_msgs, size_t connected_cap)
    : model_(model), slot_cost_us_(double(promote_msgs) * model.connected_saving_us(0)), connected_cap_(connected_cap)
{
}

double SwitchPolicy::saving_per_period(const SourceLoad &s) const
{
    return s.load * model_.connected_saving_us(s.mean_bytes);
}

double SwitchPolicy::connected_gain(const SourceLoad &s) const { return saving_per_period(s) - slot_cost_us_; }

std::vector<SwitchDecision> SwitchPolicy::decide(const std::vector<SourceLoad> &sources, size_t connected_cap) const
{
    struct Ranked {
        double saving; // per period on RC
        const SourceLoad *s;
    };
    std::vector<SwitchDecision> out;
    const double demote_below = slot_cost_us_ / 4;

    std::vector<Ranked> staying;    // RC sources worth keeping
    std::vector<Ranked> candidates; // DC sources worth a slot
    for (const SourceLoad &s : sources) {
        double saving = saving_per_period(s);
        if (s.on_connected) {
            if (saving < demote_below || saving <= 0)
                out.push_back({s.source, connectionless_choice(s)});
            else
                staying.push_back({saving, &s});
        } else if (saving >= slot_cost_us_ && saving > 0) {
            candidates.push_back({saving, &s});
        }
    }
    // Least saving first: eviction victims come from the front.
    std::sort(staying.begin(), staying.end(), [](const Ranked &a, const Ranked &b) {
        return a.saving < b.saving || (a.saving == b.saving && a.s->source > b.s->source);
    });
    // Busiest first.
    std::sort(candidates.begin(), candidates.end(), [](const Ranked &a, const Ranked &b) {
        return a.saving > b.saving || (a.saving == b.saving && a.s->source < b.s->source);
    });
    size_t victim = 0; // staying[victim..] are on RC
    // Over the cap (it shrank, or more promotions were granted than asked): keep the busiest.
    while (staying.size() - victim > connected_cap) {
        out.push_back({staying[victim].s->source, connectionless_choice(*staying[victim].s)});
        victim++;
    }
    size_t connected_count = staying.size() - victim;
    for (const Ranked &c : candidates) {
        if (connected_count < connected_cap) {
            out.push_back({c.s->source, Channel::Connected});
            connected_count++;
            continue;
        }
        // Full: evict the least busy RC source if this one saves at least twice as much.
        if (victim >= staying.size() || staying[victim].saving * 2 > c.saving)
            break; // candidates are sorted: no later one qualifies either
        out.push_back({staying[victim].s->source, connectionless_choice(*staying[victim].s)});
        out.push_back({c.s->source, Channel::Connected});
        victim++;
    }
    return out;
}

Channel SwitchPolicy::connectionless_target(const SourceLoad &s) const
{
    if (connectionless_choice(s) != Channel::RingLanding)
        return Channel::Connectionless;
    const double level = s.on_ring_landing ? slot_cost_us_ / 8 : slot_cost_us_ / 4;
    const double saving = saving_per_period(s);
    return saving > 0 && saving >= level ? Channel::RingLanding : Channel::Connectionless;
}

std::vector<SwitchDecision> SwitchPolicy::connectionless_moves(const std::vector<SourceLoad> &sources,
                                                   const std::vector<SwitchDecision> &skip) const
{
    std::vector<SwitchDecision> out;
    for (const SourceLoad &s : sources) {
        if (s.on_connected || std::any_of(skip.begin(), skip.end(), [&](const SwitchDecision &d) { return d.source == s.source; }))
            continue;
        Channel target = connectionless_target(s);
        if ((target == Channel::RingLanding) != s.on_ring_landing)
            out.push_back({s.source, target});
    }
    return out;
}

} // namespace llc
