// Network topology for the models: a small fabric description (file format
// in doc/coll-alltoall.md, example: src/coll/model/ricc.fabric) plus the node
// of every rank, and the per-link expected sharers / minimum average
// bandwidth of Kurokawa's report (RCV_ij, BS_ij).  Shared by the Alltoall and the
// broadcast.
#pragma once

#include <istream>
#include <map>
#include <string>
#include <vector>

namespace llc::coll::model {

struct Fabric {
    std::string name = "flat";
    int levels = 1;            // 1: one switch; 2: leaf switches + upper switches
    int leaves = 0;            // number of leaf switches (informational, 0 = unknown)
    int hosts_per_leaf = 0;    // node n is on leaf n / hosts_per_leaf (0: all on one leaf)
    int uplinks_per_leaf = 0;  // leaf -> upper links
    // bandwidth of one uplink relative to a node link ("uplink_speed 0.5":
    // half as fast); 1 in Kurokawa's fabric.
    double uplink_speed = 1.0;
    // routing rule of inter-leaf traffic: the uplink is dest_node mod uplinks
    // (the only rule supported: "route dest_mod_uplinks").
    std::map<std::string, int> host_numbers;  // optional "host <name> <node number>"

    int leaf_of(int node) const { return hosts_per_leaf > 0 ? node / hosts_per_leaf : 0; }
    int uplink_of(int node) const { return uplinks_per_leaf > 0 ? node % uplinks_per_leaf : 0; }
};

bool parse_fabric(std::istream &in, Fabric *f, std::string *err);
bool load_fabric(const std::string &path, Fabric *f, std::string *err);
// The RICC fat tree of Kurokawa's report: 52 leaves x 20 nodes, 4 uplinks per leaf.
Fabric ricc_fabric();

// How the inter-leaf term of BS_ij counts the off-leaf partners:
// paper:   (Nnode - N_i) * RCV_ij        (as printed in Kurokawa's report)
// process: (Nnode - N_i) * Pn * RCV_ij   (every off-leaf process counted)
enum class BsVariant { paper, process };

// RCV_ij = 1 + (NUL_ij*Pn - 1) * (Nnode - N_i) * Pn / (Nnode*maxn - 1)
double rcv(double nul, double pn, double nnode, double ni, double maxn);
// B / BS_ij = (Pn - 1 + (N_i - 1)*Pn*Pn + (Nnode - N_i)*RCV_ij) / (Nnode*Pn - 1)
// (uplink_speed < 1: RCV_ij / uplink_speed, the uplink's flows count more;
// Kurokawa's report has equal link speeds, uplink_speed 1)
double bs_divisor(double pn, double ni, double nnode, double rcv_ij, BsVariant v,
                  double uplink_speed = 1.0);

struct LinkShare {
    int leaf, uplink;  // uplink -1: no uplink term (single leaf / flat)
    int ni, nul;
    double rcv, divisor;  // BS_ij = B / divisor
};
struct Analysis {
    int nnode = 0;
    double pn = 1;   // processes per node (P / Nnode)
    int maxn = 1;    // most processes on one node
    std::vector<LinkShare> links;
    // max over links of the divisor: the per-byte time of the models is
    // multiplied by this (system bandwidth = B / sharing = min BS_ij).
    double sharing = 1;
};
// node_of_rank: absolute node number of every rank (the fabric's numbering).
Analysis analyze(const Fabric &f, const std::vector<int> &node_of_rank,
                 BsVariant v = BsVariant::paper);

// Placement patterns of Kurokawa's report on a fabric (one process per node):
// 0: node numbers multiple of 4, 1: multiple of 2, 2/3/4: first 4/8/16 nodes
// of each leaf; `per_leaf` nodes per leaf for patterns 0..2 (4, or 5 when
// the leaves run out).  Returns the node of each of `procs` ranks (empty if
// the fabric is too small).
std::vector<int> paper_placement(const Fabric &f, int pattern, int procs);

}  // namespace llc::coll::model
