// switch_policy.cpp - cost model and the per-period choice.
#include "hybrid/switch_policy.hpp"

#include <algorithm>
#include <limits>

namespace llc {

const char *channel_name(Channel c)
{
    switch (c) {
    case Channel::DcChannel: return "DC channel";
    case Channel::RcRdma: return "RC RDMA";
    case Channel::DcRdma: return "DC RDMA";
    }
    return "?";
}

// ------------------------------------------------------------------ cost model

double CostModel::per_message_us(Channel c, double mean_bytes) const
{
    switch (c) {
    case Channel::DcChannel: return dc_channel_fixed_us + mean_bytes / dc_channel_bytes_per_us;
    case Channel::RcRdma: return rc_fixed_us + mean_bytes / rc_bytes_per_us;
    case Channel::DcRdma: return dc_rdma_fixed_us + mean_bytes / dc_rdma_bytes_per_us;
    }
    return std::numeric_limits<double>::infinity();
}

Channel CostModel::best_dc(double mean_bytes) const
{
    return per_message_us(Channel::DcRdma, mean_bytes) < per_message_us(Channel::DcChannel, mean_bytes)
               ? Channel::DcRdma
               : Channel::DcChannel;
}

double CostModel::rc_saving_us(double mean_bytes) const
{
    return per_message_us(best_dc(mean_bytes), mean_bytes) - per_message_us(Channel::RcRdma, mean_bytes);
}

// ------------------------------------------------------------------ policy

SwitchPolicy::SwitchPolicy(CostModel model, uint64_t promote_msgs, size_t rc_cap)
    : model_(model), slot_cost_us_(double(promote_msgs) * model.rc_saving_us(0)), rc_cap_(rc_cap)
{
}

double SwitchPolicy::saving_per_period(const SourceLoad &s) const
{
    return s.load * model_.rc_saving_us(s.mean_bytes);
}

double SwitchPolicy::rc_gain(const SourceLoad &s) const { return saving_per_period(s) - slot_cost_us_; }

std::vector<SwitchDecision> SwitchPolicy::decide(const std::vector<SourceLoad> &sources, size_t rc_cap) const
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
        if (s.on_rc) {
            if (saving < demote_below || saving <= 0)
                out.push_back({s.source, dc_choice(s)});
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
    while (staying.size() - victim > rc_cap) {
        out.push_back({staying[victim].s->source, dc_choice(*staying[victim].s)});
        victim++;
    }
    size_t rc_count = staying.size() - victim;
    for (const Ranked &c : candidates) {
        if (rc_count < rc_cap) {
            out.push_back({c.s->source, Channel::RcRdma});
            rc_count++;
            continue;
        }
        // Full: evict the least busy RC source if this one saves at least twice as much.
        if (victim >= staying.size() || staying[victim].saving * 2 > c.saving)
            break; // candidates are sorted: no later one qualifies either
        out.push_back({staying[victim].s->source, dc_choice(*staying[victim].s)});
        out.push_back({c.s->source, Channel::RcRdma});
        victim++;
    }
    return out;
}

Channel SwitchPolicy::dc_target(const SourceLoad &s) const
{
    if (dc_choice(s) != Channel::DcRdma)
        return Channel::DcChannel;
    const double level = s.on_dc_rdma ? slot_cost_us_ / 8 : slot_cost_us_ / 4;
    const double saving = saving_per_period(s);
    return saving > 0 && saving >= level ? Channel::DcRdma : Channel::DcChannel;
}

std::vector<SwitchDecision> SwitchPolicy::dc_moves(const std::vector<SourceLoad> &sources,
                                                   const std::vector<SwitchDecision> &skip) const
{
    std::vector<SwitchDecision> out;
    for (const SourceLoad &s : sources) {
        if (s.on_rc || std::any_of(skip.begin(), skip.end(), [&](const SwitchDecision &d) { return d.source == s.source; }))
            continue;
        Channel target = dc_target(s);
        if ((target == Channel::DcRdma) != s.on_dc_rdma)
            out.push_back({s.source, target});
    }
    return out;
}

} // namespace llc
