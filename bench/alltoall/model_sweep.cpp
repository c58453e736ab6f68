// Model-only sweep at the paper's scale: RICC fat tree (52 leaves x 20
// nodes, 4 uplinks, uplink = destination mod 4), 64..256 processes (one per
// node), the five placement patterns of paper 002; prints the sharing
// (B / min BS_ij), the predicted time of every algorithm and the set that
// pruning keeps.
//   model_sweep [--model hockney|loggp|logpq] [--bytes N] [--L s] [--B s/byte]
//               [--prune x] [--fabric file] [--bs paper|process]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "model/alltoall_model.hpp"
#include "model/topology.hpp"

using namespace llc::coll;

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
        else if (a == "--fabric") {
            std::string err;
            if (!model::load_fabric(v, &f, &err)) {
                std::fprintf(stderr, "%s\n", err.c_str());
                return 1;
            }
        }
    }
    model::derive(&p);
    std::printf("# model=%s bytes=%.0f L=%.3g B=%.3g prune=%.2f fabric=%s\n", model::kind_name(kind),
                bytes, p.L, p.B, prune, f.name.c_str());
    std::printf("# pattern: 0 = nodes mult. of 4, 1 = mult. of 2, 2/3/4 = first 4/8/16 of each leaf\n");
    std::printf("%5s %3s %7s", "P", "pat", "sharing");
    for (int a = 0; a < alltoall::kNumAlgs; a++)
        std::printf(" %11s", alltoall::alg_name(alltoall::Alg(a)));
    std::printf("  kept\n");
    for (int P : {64, 128, 192, 256})
        for (int pat = 0; pat < 5; pat++) {
            auto nodes = model::paper_placement(f, pat, P);
            if (nodes.empty())
                continue;
            auto an = model::analyze(f, nodes, bs);
            auto t = model::predict_alltoall_all(kind, P, bytes, p, an.sharing);
            std::printf("%5d %3d %7.3f", P, pat, an.sharing);
            for (double x : t)
                std::printf(" %9.1fus", x * 1e6);
            std::printf(" ");
            for (auto a : model::prune(t, prune))
                std::printf(" %s", alltoall::alg_name(a));
            std::printf("\n");
        }
    return 0;
}
