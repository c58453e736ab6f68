// Fabric description and the link-sharing analysis of Kurokawa's report.
#include "model/topology.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

namespace llc::coll::model {

bool parse_fabric(std::istream &in, Fabric *f, std::string *err)
{
    Fabric r;
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
        lineno++;
        if (auto h = line.find('#'); h != std::string::npos)
            line.erase(h);
        std::istringstream ls(line);
        std::string key;
        if (!(ls >> key))
            continue;
        bool ok = true;
        if (key == "name")
            ok = static_cast<bool>(ls >> r.name);
        else if (key == "levels")
            ok = (ls >> r.levels) && r.levels >= 1 && r.levels <= 2;
        else if (key == "leaves")
            ok = (ls >> r.leaves) && r.leaves >= 0;
        else if (key == "hosts_per_leaf")
            ok = (ls >> r.hosts_per_leaf) && r.hosts_per_leaf >= 0;
        else if (key == "uplinks_per_leaf")
            ok = (ls >> r.uplinks_per_leaf) && r.uplinks_per_leaf >= 0;
        else if (key == "uplink_speed")
            ok = (ls >> r.uplink_speed) && r.uplink_speed > 0;
        else if (key == "route") {
            std::string rule;
            ok = (ls >> rule) && rule == "dest_mod_uplinks";
        } else if (key == "host") {
            std::string name;
            int num;
            ok = (ls >> name >> num) && num >= 0;
            if (ok)
                r.host_numbers[name] = num;
        } else
            ok = false;
        if (!ok) {
            if (err)
                *err = "line " + std::to_string(lineno) + ": cannot parse '" + line + "'";
            return false;
        }
    }
    if (r.levels == 1)
        r.uplinks_per_leaf = 0;
    *f = r;
    return true;
}

bool load_fabric(const std::string &path, Fabric *f, std::string *err)
{
    std::ifstream in(path);
    if (!in) {
        if (err)
            *err = "cannot open " + path;
        return false;
    }
    return parse_fabric(in, f, err);
}

Fabric ricc_fabric()
{
    Fabric f;
    f.name = "ricc";
    f.levels = 2;
    f.leaves = 52;
    f.hosts_per_leaf = 20;
    f.uplinks_per_leaf = 4;
    return f;
}

double rcv(double nul, double pn, double nnode, double ni, double maxn)
{
    return 1 + (nul * pn - 1) * (nnode - ni) * pn / (nnode * maxn - 1);
}

double bs_divisor(double pn, double ni, double nnode, double rcv_ij, BsVariant v,
                  double uplink_speed)
{
    double inter = (nnode - ni) * rcv_ij * (v == BsVariant::process ? pn : 1.0) / uplink_speed;
    return (pn - 1 + (ni - 1) * pn * pn + inter) / (nnode * pn - 1);
}

Analysis analyze(const Fabric &f, const std::vector<int> &node_of_rank, BsVariant v)
{
    Analysis a;
    std::map<int, int> procs_on_node;
    for (int n : node_of_rank)
        procs_on_node[n]++;
    a.nnode = static_cast<int>(procs_on_node.size());
    const int P = static_cast<int>(node_of_rank.size());
    if (P <= 1)
        return a;
    a.pn = static_cast<double>(P) / a.nnode;
    for (auto &kv : procs_on_node)
        a.maxn = std::max(a.maxn, kv.second);
    // N_i and NUL_ij (nodes, not processes)
    std::map<int, int> ni;
    std::map<std::pair<int, int>, int> nul;
    for (auto &kv : procs_on_node) {
        ni[f.leaf_of(kv.first)]++;
        nul[{f.leaf_of(kv.first), f.uplink_of(kv.first)}]++;
    }
    const bool uplinks = f.levels >= 2 && f.uplinks_per_leaf > 0;
    a.sharing = 0;
    for (auto &[leaf, n_i] : ni) {
        if (!uplinks || n_i == a.nnode) {
            // no inter-leaf traffic into this leaf (or no uplink model)
            double d = bs_divisor(a.pn, n_i, a.nnode, 1.0, v);
            a.links.push_back({leaf, -1, n_i, 0, 1.0, d});
            a.sharing = std::max(a.sharing, d);
            continue;
        }
        for (int j = 0; j < f.uplinks_per_leaf; j++) {
            auto it = nul.find({leaf, j});
            if (it == nul.end())
                continue;  // no receiver behind this link: it limits nobody
            double r = rcv(it->second, a.pn, a.nnode, n_i, a.maxn);
            double d = bs_divisor(a.pn, n_i, a.nnode, r, v, f.uplink_speed);
            a.links.push_back({leaf, j, n_i, it->second, r, d});
            a.sharing = std::max(a.sharing, d);
        }
    }
    if (a.sharing <= 0)
        a.sharing = 1;
    return a;
}

std::vector<int> paper_placement(const Fabric &f, int pattern, int procs)
{
    std::vector<int> nodes;
    const int hpl = f.hosts_per_leaf, leaves = f.leaves;
    if (hpl <= 0 || leaves <= 0)
        return nodes;
    if (pattern <= 2) {
        int stride = pattern == 0 ? 4 : pattern == 1 ? 2 : 1;
        int per_leaf = (procs + leaves - 1) / leaves;  // 4 up to 208 procs, 5 above
        per_leaf = std::max(per_leaf, 4);
        for (int l = 0; l < leaves && static_cast<int>(nodes.size()) < procs; l++)
            for (int k = 0; k < per_leaf && static_cast<int>(nodes.size()) < procs; k++) {
                int n = l * hpl + k * stride;
                if (k * stride >= hpl)
                    break;
                nodes.push_back(n);
            }
    } else {
        int per_leaf = pattern == 3 ? 8 : 16;
        for (int l = 0; l < leaves && static_cast<int>(nodes.size()) < procs; l++)
            for (int k = 0; k < per_leaf && static_cast<int>(nodes.size()) < procs; k++)
                nodes.push_back(l * hpl + k);
    }
    if (static_cast<int>(nodes.size()) < procs)
        nodes.clear();
    return nodes;
}

}  // namespace llc::coll::model
