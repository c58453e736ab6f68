// Model-only sweep at the paper's scale: RICC fat tree (52 leaves x 20
// nodes, 4 uplinks, uplink = destination mod 4), 64..256 processes (one per
// node), the five placement patterns of Kurokawa's report.  For each placement it
// prints the paper's system-wide sharing (B / min BS_ij), the mean per-step
// sharing of Bruck and pairwise from the per-step link analysis, the
// predicted Bruck/pairwise ratio and the set that pruning keeps under both
// sharing modes (LLC_ALLTOALL_MODEL_SHARING=paper|steps).  --times adds the
// predicted time of every algorithm for the chosen mode.
//   model_sweep [--model hockney|loggp|logpq] [--bytes N] [--L s] [--B s/byte]
//               [--prune x] [--fabric file] [--bs paper|process]
//               [--procs 64,128,...] [--times paper|steps]
//   model_sweep --nodes n0,n1,... [...]: one explicit placement (node of every
//               rank); prints "pred <paper|steps> <alg> <seconds>" lines and the
//               per-step sharing of every algorithm (used by placement_report.py)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "model/alltoall_model.hpp"
#include "model/step_links.hpp"
#include "model/topology.hpp"

using namespace llc::coll;
using alltoall::Alg;

namespace {

std::string kept(const std::vector<double> &t, double prune)
{
    auto k = model::prune(t, prune);
    if (static_cast<int>(k.size()) == alltoall::kNumAlgs)
        return "all";
    std::string s;
    bool first = true;
    // print the dropped ones (shorter): "-bruck,-pairwise_mb"
    for (int a = 0; a < alltoall::kNumAlgs; a++) {
        bool in = false;
        for (Alg x : k)
            in |= static_cast<int>(x) == a;
        if (!in) {
            s += first ? "all-" : ",-";
            s += alltoall::alg_name(Alg(a));
            first = false;
        }
    }
    if (k.size() <= 3) {  // short list: name the survivors instead
        s.clear();
        for (Alg x : k)
            s += (s.empty() ? "" : ",") + std::string(alltoall::alg_name(x));
    }
    return s;
}

double mean(const std::vector<double> &v)
{
    double s = 0;
    for (double x : v)
        s += x;
    return v.empty() ? 1 : s / v.size();
}

}  // namespace

int main(int argc, char **argv)
{
    model::Kind kind = model::Kind::hockney;
    double bytes = 16384, prune = 2.0;
    model::Params p;
    p.L = 2e-6;          // RICC-like InfiniBand DDR defaults
    p.B = 1.0 / 1.5e9;
    p.o = 0.5e-6;
    p.g = 0.5e-6;
    model::Fabric f = model::ricc_fabric();
    model::BsVariant bs = model::BsVariant::paper;
    std::vector<int> procs = {64, 128, 192, 256};
    std::string times;
    std::vector<int> explicit_nodes;
    for (int i = 1; i + 1 < argc; i += 2) {
        std::string a = argv[i], v = argv[i + 1];
        if (a == "--model")
            model::kind_from_name(v, &kind);
        else if (a == "--bytes")
            bytes = std::atof(v.c_str());
        else if (a == "--L")
            p.L = std::atof(v.c_str());
        else if (a == "--B")
            p.B = std::atof(v.c_str());
        else if (a == "--prune")
            prune = std::atof(v.c_str());
        else if (a == "--bs")
            bs = v == "process" ? model::BsVariant::process : model::BsVariant::paper;
        else if (a == "--times")
            times = v;
        else if (a == "--nodes") {
            std::stringstream ss(v);
            std::string x;
            while (std::getline(ss, x, ','))
                explicit_nodes.push_back(std::atoi(x.c_str()));
        }
        else if (a == "--procs") {
            procs.clear();
            std::stringstream ss(v);
            std::string x;
            while (std::getline(ss, x, ','))
                procs.push_back(std::atoi(x.c_str()));
        } else if (a == "--fabric") {
            std::string err;
            if (!model::load_fabric(v, &f, &err)) {
                std::fprintf(stderr, "%s\n", err.c_str());
                return 1;
            }
        }
    }
    model::derive(&p);
    if (!explicit_nodes.empty()) {
        const int P = static_cast<int>(explicit_nodes.size());
        auto an = model::analyze(f, explicit_nodes, bs);
        auto tp = model::predict_alltoall_all(kind, P, bytes, p, an.sharing);
        auto ts = model::predict_alltoall_all_steps(kind, f, explicit_nodes, bytes, p);
        std::printf("# model=%s bytes=%.0f L=%.3g B=%.3g fabric=%s P=%d paper_sharing=%.4f\n",
                    model::kind_name(kind), bytes, p.L, p.B, f.name.c_str(), P, an.sharing);
        for (int a = 0; a < alltoall::kNumAlgs; a++)
            std::printf("pred paper %s %.6g\n", alltoall::alg_name(Alg(a)), tp[a]);
        for (int a = 0; a < alltoall::kNumAlgs; a++)
            std::printf("pred steps %s %.6g\n", alltoall::alg_name(Alg(a)), ts[a]);
        for (int a = 0; a < alltoall::kNumAlgs; a++) {
            std::printf("steps_sharing %s", alltoall::alg_name(Alg(a)));
            for (double x : model::alltoall_step_sharing(f, explicit_nodes, Alg(a)))
                std::printf(" %g", x);
            std::printf("\n");
        }
        for (const char *m : {"paper", "steps"}) {
            std::printf("kept %s", m);
            for (Alg a : model::prune(std::string(m) == "paper" ? tp : ts, prune))
                std::printf(" %s", alltoall::alg_name(a));
            std::printf("\n");
        }
        return 0;
    }
    std::printf("# model=%s bytes=%.0f L=%.3g B=%.3g prune=%.2f fabric=%s\n", model::kind_name(kind),
                bytes, p.L, p.B, prune, f.name.c_str());
    std::printf("# pattern: 0 = nodes mult. of 4, 1 = mult. of 2, 2/3/4 = first 4/8/16 of each leaf\n");
    std::printf("# s_paper: B / min BS_ij (one factor for all); s_bruck, s_pw: mean per-step sharing\n");
    std::printf("# br/pw: predicted Bruck / pairwise time; kept: pruning result (threshold %.2f)\n",
                prune);
    std::printf("%5s %3s %7s %7s %7s %8s %8s  %-30s %s\n", "P", "pat", "s_paper", "s_bruck", "s_pw",
                "br/pw:pa", "br/pw:st", "kept (paper)", "kept (steps)");
    for (int P : procs)
        for (int pat = 0; pat < 5; pat++) {
            auto nodes = model::paper_placement(f, pat, P);
            if (nodes.empty())
                continue;
            auto an = model::analyze(f, nodes, bs);
            auto tp = model::predict_alltoall_all(kind, P, bytes, p, an.sharing);
            auto ts = model::predict_alltoall_all_steps(kind, f, nodes, bytes, p);
            double sb = mean(model::alltoall_step_sharing(f, nodes, Alg::bruck));
            double sp = mean(model::alltoall_step_sharing(f, nodes, Alg::pairwise));
            const int br = static_cast<int>(Alg::bruck), pw = static_cast<int>(Alg::pairwise);
            std::printf("%5d %3d %7.3f %7.3f %7.3f %8.2f %8.2f  %-30s %s\n", P, pat, an.sharing, sb,
                        sp, tp[br] / tp[pw], ts[br] / ts[pw], kept(tp, prune).c_str(),
                        kept(ts, prune).c_str());
            if (!times.empty()) {
                const auto &t = times == "steps" ? ts : tp;
                std::printf("      %s:", times.c_str());
                for (int a = 0; a < alltoall::kNumAlgs; a++)
                    std::printf(" %s=%.1fus", alltoall::alg_name(Alg(a)), t[a] * 1e6);
                std::printf("\n");
            }
        }
    return 0;
}
