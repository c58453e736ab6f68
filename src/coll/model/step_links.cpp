// Per-step link analysis: schedules of the nine algorithms and flow counting
// on the fabric's links.
#include "model/step_links.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace llc::coll::model {

using alltoall::Alg;

const char *sharing_mode_name(SharingMode m) { return m == SharingMode::steps ? "steps" : "paper"; }

bool sharing_mode_from_name(const std::string &s, SharingMode *out)
{
    if (s == "paper")
        *out = SharingMode::paper;
    else if (s == "steps")
        *out = SharingMode::steps;
    else
        return false;
    return true;
}

std::vector<StepPattern> alltoall_schedule(Alg a, int P)
{
    std::vector<StepPattern> steps;
    if (P <= 1)
        return steps;
    if (a == Alg::bruck) {
        for (int bit = 1; bit < P; bit <<= 1) {
            StepPattern s;
            s.blocks = 0;  // block indices in [0, P) with this bit set
            for (int j = 0; j < P; j++)
                s.blocks += (j & bit) != 0;
            s.dst.resize(P);
            for (int r = 0; r < P; r++)
                s.dst[r] = (r + bit) % P;
            steps.push_back(std::move(s));
        }
        return steps;
    }
    for (int i = 1; i < P; i++) {
        StepPattern s;
        s.dst.resize(P);
        for (int r = 0; r < P; r++) {
            int dst, src;
            alltoall::step_partners(a, r, P, i, &dst, &src);
            s.dst[r] = dst;
        }
        steps.push_back(std::move(s));
    }
    return steps;
}

namespace {

// Link identity: (kind, a, b).  kind 0: node out (a = node), 1: node in
// (a = node), 2: downward uplink j = b of leaf a.
using Link = std::tuple<int, int, int>;

void links_of_flow(const Fabric &f, int sn, int dn, std::vector<Link> *out)
{
    out->clear();
    if (sn == dn)
        return;  // same node: memory, no network link
    out->emplace_back(0, sn, 0);
    out->emplace_back(1, dn, 0);
    if (f.levels >= 2 && f.uplinks_per_leaf > 0 && f.leaf_of(sn) != f.leaf_of(dn))
        out->emplace_back(2, f.leaf_of(dn), f.uplink_of(dn));
}

}  // namespace

double step_sharing(const Fabric &f, const std::vector<int> &node_of_rank, const StepPattern &s)
{
    const int P = static_cast<int>(node_of_rank.size());
    std::map<Link, int> load;
    std::vector<Link> ls;
    for (int r = 0; r < P && r < static_cast<int>(s.dst.size()); r++) {
        links_of_flow(f, node_of_rank[r], node_of_rank[s.dst[r]], &ls);
        for (auto &l : ls)
            load[l]++;
    }
    const double up = f.uplink_speed > 0 ? f.uplink_speed : 1.0;
    double worst = 1.0;
    for (auto &[l, n] : load)
        worst = std::max(worst, std::get<0>(l) == 2 ? n / up : double(n));
    return worst;
}

std::vector<double> alltoall_step_sharing(const Fabric &f, const std::vector<int> &node_of_rank,
                                          Alg a)
{
    std::vector<double> out;
    for (const StepPattern &s : alltoall_schedule(a, static_cast<int>(node_of_rank.size())))
        out.push_back(step_sharing(f, node_of_rank, s));
    return out;
}

}  // namespace llc::coll::model
