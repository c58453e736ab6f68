// llc_memmodel - per-node memory of the communication library versus job
// size: the paper's baseline and designed models (errata applied) next to
// libllc's own model built from the sizeof of its real structures.  See
// doc/memory.md.
#include "mem/mem_accounting.hpp"
#include "mem_model.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

void usage(FILE *out)
{
    std::fputs("usage: llc_memmodel [-m M] [-c C] [-g GAMMA] [--min-log2 A] [--max-log2 B]\n"
               "                    [--ring-bytes R] [--udp-mtu U] [--breakdown LOG2 | --no-breakdown] [--csv]\n"
               "  per-node bytes at 2^A .. 2^B nodes (default 10 .. 22), M processes per node (4),\n"
               "  C communicators (10), GAMMA live contexts (1024); R: libllc shm ring bytes (262144);\n"
               "  U: libllc udp datagram payload bytes, LLC_UDP_MTU (16384).\n"
               "  --breakdown: per-component table at 2^LOG2 nodes (default 20, if in range).\n"
               "  Units: kB/MB/GB/TB are powers of 1000, as in the paper.\n",
               out);
}

std::string human(double bytes)
{
    static const char *units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (bytes >= 1000 && u < 5) {
        bytes /= 1000;
        u++;
    }
    char buf[32];
    std::snprintf(buf, sizeof(buf), u == 0 ? "%.0f %s" : "%.3g %s", bytes, units[u]);
    return buf;
}

bool parse_double(const char *text, double &out)
{
    char *end = nullptr;
    out = std::strtod(text, &end);
    return end != text && *end == '\0';
}

// For libllc's components: "  (paper: <component>)"; empty for the paper's own.
std::string paper_of(const std::string &name)
{
    for (int i = 0; i < int(llc::MemComponent::Count); i++) {
        const llc::MemComponentInfo &info = llc::mem_component_info(llc::MemComponent(i));
        if (name == info.name)
            return std::string("  paper: ") + info.paper;
    }
    return "";
}

void breakdown(const char *title, const std::vector<llc::ModelTerm> &terms, bool csv, int log2_nodes)
{
    if (csv) {
        for (const auto &t : terms)
            std::printf("%s,%d,\"%s\",%.0f,%.6g\n", title, log2_nodes, t.component.c_str(), t.bytes, t.n_coeff);
        return;
    }
    std::printf("\n%s at 2^%d nodes:\n", title, log2_nodes);
    std::printf("  %-30s %12s  %s\n", "component", "per node", "n-term (bytes x n)");
    for (const auto &t : terms) {
        char coeff[48];
        if (t.n_coeff > 0)
            std::snprintf(coeff, sizeof(coeff), "%.6g n  (grows)", t.n_coeff);
        else
            std::snprintf(coeff, sizeof(coeff), "-");
        std::string paper = paper_of(t.component);
        std::printf("  %-30s %12s  %-*s%s\n", t.component.c_str(), human(t.bytes).c_str(), paper.empty() ? 0 : 22,
                    coeff, paper.c_str());
    }
    std::printf("  %-30s %12s\n", "total", human(llc::model_total(terms)).c_str());
}

} // namespace

int main(int argc, char **argv)
{
    llc::ModelParams p;
    double lo = 10, hi = 22, detail = 20;
    bool csv = false, want_detail = true, detail_given = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto value = [&](double &out) {
            if (i + 1 >= argc || !parse_double(argv[i + 1], out)) {
                std::fprintf(stderr, "llc_memmodel: %s needs a number\n", a.c_str());
                std::exit(2);
            }
            i++;
        };
        if (a == "-m")
            value(p.m);
        else if (a == "-c")
            value(p.c);
        else if (a == "-g" || a == "--gamma")
            value(p.gamma);
        else if (a == "--min-log2")
            value(lo);
        else if (a == "--max-log2")
            value(hi);
        else if (a == "--ring-bytes")
            value(p.ring_bytes);
        else if (a == "--udp-mtu")
            value(p.udp_mtu);
        else if (a == "--breakdown") {
            value(detail);
            detail_given = true;
        } else if (a == "--no-breakdown")
            want_detail = false;
        else if (a == "--csv")
            csv = true;
        else if (a == "-h" || a == "--help") {
            usage(stdout);
            return 0;
        } else {
            std::fprintf(stderr, "llc_memmodel: unknown option %s\n", a.c_str());
            usage(stderr);
            return 2;
        }
    }
    if (p.m < 1 || p.c < 0 || p.gamma < 1 || p.udp_mtu < 1 || lo < 0 || hi < lo || hi > 40) {
        std::fprintf(stderr, "llc_memmodel: need m >= 1, c >= 0, gamma >= 1, udp-mtu >= 1, "
                             "0 <= min-log2 <= max-log2 <= 40\n");
        return 2;
    }
    if (!detail_given && (detail < lo || detail > hi))
        want_detail = false;

    if (csv)
        std::printf("log2_nodes,nodes,processes,paper_baseline,paper_designed,llc_all_peers,llc_capped,llc_udp,"
                    "llc_hybrid\n");
    else {
        std::printf("per-node memory, m=%g processes/node, c=%g, gamma=%g (paper: errata applied; "
                    "libllc: this build's structure sizes, shm rings %g B, udp mtu %g B)\n",
                    p.m, p.c, p.gamma, p.ring_bytes, p.udp_mtu);
        std::printf("%-8s %10s %12s %14s %14s %14s %14s %14s %14s\n", "nodes", "nodes", "processes", "paper base",
                    "paper design", "llc all peers", "llc capped", "llc udp", "llc hybrid");
    }
    for (int k = int(lo); k <= int(hi); k++) {
        double nodes = std::ldexp(1.0, k);
        double base = llc::model_total(llc::paper_baseline(nodes, p));
        double design = llc::model_total(llc::paper_designed(nodes, p));
        double all = llc::model_total(llc::llc_model(nodes, p, false));
        double capped = llc::model_total(llc::llc_model(nodes, p, true));
        double udp = llc::model_total(llc::llc_udp_model(nodes, p));
        double hybrid = llc::model_total(llc::llc_hybrid_model(nodes, p));
        if (csv)
            std::printf("%d,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n", k, nodes, nodes * p.m, base, design, all,
                        capped, udp, hybrid);
        else
            std::printf("2^%-6d %10.0f %12.0f %14s %14s %14s %14s %14s %14s\n", k, nodes, nodes * p.m,
                        human(base).c_str(), human(design).c_str(), human(all).c_str(), human(capped).c_str(),
                        human(udp).c_str(), human(hybrid).c_str());
    }
    if (want_detail) {
        int k = int(detail);
        double nodes = std::ldexp(1.0, k);
        if (csv)
            std::printf("\nmodel,log2_nodes,component,bytes_per_node,n_coeff\n");
        breakdown("paper_baseline", llc::paper_baseline(nodes, p), csv, k);
        breakdown("paper_designed", llc::paper_designed(nodes, p), csv, k);
        breakdown("llc_all_peers", llc::llc_model(nodes, p, false), csv, k);
        breakdown("llc_capped", llc::llc_model(nodes, p, true), csv, k);
        breakdown("llc_udp", llc::llc_udp_model(nodes, p), csv, k);
        breakdown("llc_hybrid", llc::llc_hybrid_model(nodes, p), csv, k);
    }
    return 0;
}
