// Learned Alltoall decisions kept across runs (see decision_cache.hpp).
#include "alltoall/decision_cache.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "cache_file.hpp"
#include "coll_settings.hpp"

namespace llc::coll::alltoall {

namespace {
constexpr const char *kFormat = "a2a1";
constexpr const char *kResult = " alg="; // where a line's key ends

// "name=v,v,...": n values >= 0, else false
bool parse_times(const std::string &field, const char *name, size_t n, std::vector<double> *out)
{
    const std::string head = std::string(name) + "=";
    if (field.compare(0, head.size(), head) != 0 || field.back() == ',') // "1,2," is not two values
        return false;
    std::vector<double> v;
    const char *p = field.c_str() + head.size();
    while (*p) {
        char *end = nullptr;
        const double x = std::strtod(p, &end);
        if (end == p || !(x >= 0))
            return false;
        v.push_back(x);
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return false;
    }
    if (v.size() != n)
        return false;
    *out = std::move(v);
    return true;
}

std::string format_times(const char *name, const std::vector<double> &v)
{
    std::string s = std::string(" ") + name + "=";
    char b[32];
    for (size_t i = 0; i < v.size(); i++) {
        std::snprintf(b, sizeof b, "%s%.6g", i ? "," : "", v[i]);
        s += b;
    }
    return s;
}
} // namespace

std::string DecisionKey::text() const
{
    std::ostringstream o;
    o << kFormat << ' ' << host << " P=" << procs << " nodes=" << nodes << " ppn=" << per_node
      << " class=" << size_class << " cands=";
    for (size_t i = 0; i < candidates.size(); i++)
        o << (i ? "," : "") << alg_name(candidates[i]);
    return o.str();
}

DecisionKey DecisionKey::of_job(const std::string &host, int procs, const std::vector<int> &node_of_rank,
                                int size_class, const std::vector<Alg> &candidates)
{
    DecisionKey k;
    k.host = host;
    k.procs = procs;
    k.size_class = size_class;
    k.candidates = candidates;
    std::map<int, int> per_node;
    for (int n : node_of_rank)
        per_node[n]++;
    k.nodes = static_cast<int>(per_node.size());
    for (const auto &e : per_node)
        k.per_node = std::max(k.per_node, e.second);
    return k;
}

std::string decision_cache_path()
{
    const char *e = setting_text(SettingId::LLC_ALLTOALL_DECISIONS);
    if (!e || std::string(e) == "auto")
        return default_cache_file("alltoall-decisions");
    return std::string(e) == "off" ? std::string() : std::string(e);
}

bool load_decision(const std::string &path, const DecisionKey &key, Decision *out)
{
    if (path.empty())
        return false;
    const std::string prefix = key.text() + kResult;
    std::ifstream in(path);
    std::string line;
    bool found = false;
    while (std::getline(in, line)) { // the last matching line counts
        if (line.compare(0, prefix.size(), prefix) != 0)
            continue;
        std::istringstream rest(line.substr(prefix.size()));
        std::string name, t;
        if (!(rest >> name >> t) || t.compare(0, 2, "t=") != 0)
            continue;
        char *end = nullptr;
        const double learned = std::strtod(t.c_str() + 2, &end);
        if (end == t.c_str() + 2 || *end != '\0' || !(learned > 0))
            continue;
        auto c = std::find_if(key.candidates.begin(), key.candidates.end(), [&](Alg a) { return name == alg_name(a); });
        if (c == key.candidates.end())
            continue;
        out->alg = *c;
        out->learned = learned;
        out->race.clear();
        out->steady.clear();
        std::string f1, f2;
        std::vector<double> race, steady;
        if (rest >> f1 >> f2 && parse_times(f1, "race", key.candidates.size(), &race) &&
            parse_times(f2, "steady", key.candidates.size(), &steady)) {
            out->race = std::move(race);
            out->steady = std::move(steady);
        }
        found = true;
    }
    return found;
}

bool store_decision(const std::string &path, const DecisionKey &key, const Decision &d)
{
    const std::string k = key.text();
    const std::string prefix = k + kResult;
    char t[64];
    std::snprintf(t, sizeof t, " t=%.6g", d.learned);
    std::string times;
    if (d.race.size() == key.candidates.size() && d.steady.size() == key.candidates.size())
        times = format_times("race", d.race) + format_times("steady", d.steady);
    return replace_cache_line(
        path, [&](const std::string &line) { return line.compare(0, prefix.size(), prefix) == 0; },
        prefix + alg_name(d.alg) + t + times);
}

} // namespace llc::coll::alltoall
