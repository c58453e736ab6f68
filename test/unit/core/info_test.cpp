// info_test.cpp - the environment tables (libllc's and libllccoll's) are
// complete, build information, and the paper's memory model (errata applied)
// reproduces its numbers.
#include "core/build_info.hpp"
#include "core/config.hpp"
#include "core/errors.hpp"
#include "llc_coll.h"
#include "mem/mem_accounting.hpp"
#include "mem_model.hpp"

#include <gtest/gtest.h>

#include <dirent.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>

namespace {

std::string slurp(const std::string &path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The files under dir whose names end with suffix.
std::vector<std::string> files_ending(const std::string &dir, const std::string &suffix)
{
    std::vector<std::string> files;
    DIR *d = opendir(dir.c_str());
    if (!d)
        return files;
    while (dirent *e = readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..")
            continue;
        std::string path = dir + "/" + name;
        if (e->d_type == DT_DIR) {
            auto sub = files_ending(path, suffix);
            files.insert(files.end(), sub.begin(), sub.end());
        } else if (name.size() > suffix.size() &&
                   name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
            files.push_back(path);
        }
    }
    closedir(d);
    return files;
}

// The C and C++ source files under dir.
std::vector<std::string> source_files(const std::string &dir)
{
    std::vector<std::string> files;
    for (const char *ext : {".cpp", ".hpp", ".h", ".c", ".cc"}) {
        auto some = files_ending(dir, ext);
        files.insert(files.end(), some.begin(), some.end());
    }
    return files;
}

// The text without comments (string and character literals kept).
std::string strip_comments(const std::string &in)
{
    std::string out;
    size_t i = 0;
    while (i < in.size()) {
        char c = in[i];
        if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < in.size() && in[j] != c) {
                if (in[j] == '\\')
                    j++;
                j++;
            }
            out.append(in, i, j + 1 - i);
            i = j + 1;
        } else if (in.compare(i, 2, "//") == 0) {
            while (i < in.size() && in[i] != '\n')
                i++;
        } else if (in.compare(i, 2, "/*") == 0) {
            size_t end = in.find("*/", i + 2);
            i = end == std::string::npos ? in.size() : end + 2;
            out += ' ';
        } else {
            out += c;
            i++;
        }
    }
    return out;
}

// The contents of the string literals of a text without comments.
std::vector<std::string> string_literals(const std::string &in)
{
    std::vector<std::string> out;
    size_t i = 0;
    while (i < in.size()) {
        char c = in[i];
        if (c != '"' && c != '\'') {
            i++;
            continue;
        }
        size_t j = i + 1;
        while (j < in.size() && in[j] != c) {
            if (in[j] == '\\')
                j++;
            j++;
        }
        if (c == '"')
            out.push_back(in.substr(i + 1, j - i - 1));
        i = j + 1;
    }
    return out;
}

bool ends_with(const std::string &s, const std::string &suffix)
{
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A one table (core/settings.def, core/counters.def) as the compiler reads
// it, comments removed: each #include "X" line replaced by the text of
// src/llc/X (a fragment of the table), whose path is appended to fragments.
std::string one_table_text(const std::string &table, std::vector<std::string> &fragments)
{
    std::string def = strip_comments(slurp(std::string(LLC_SRCDIR) + "/" + table));
    std::regex include_line(R"re(#\s*include\s*"([^"]+)")re");
    std::string out;
    auto last = def.cbegin();
    for (auto it = std::sregex_iterator(def.begin(), def.end(), include_line); it != std::sregex_iterator(); ++it) {
        out.append(last, (*it)[0].first);
        std::string path = (*it)[1].str();
        fragments.push_back(path);
        std::string text = slurp(std::string(LLC_SRCDIR) + "/" + path);
        EXPECT_FALSE(text.empty()) << table << " includes " << path << ", which is missing or empty";
        out += strip_comments(text);
        last = (*it)[0].second;
    }
    out.append(last, def.cend());
    return out;
}

// A one table's fragments: every file of src/llc whose name ends with
// fragment_suffix is included by the table exactly once, and no other file of
// src/llc has a row (a match of row).
void expect_fragments_in_one_table(const std::string &table, const std::string &fragment_suffix, const std::regex &row)
{
    std::vector<std::string> fragments;
    one_table_text(table, fragments);
    std::set<std::string> included;
    for (const auto &f : fragments)
        EXPECT_TRUE(included.insert(f).second) << table << " includes " << f << " twice";
    std::set<std::string> on_disk;
    for (const auto &f : files_ending(LLC_SRCDIR, fragment_suffix))
        on_disk.insert(f.substr(std::strlen(LLC_SRCDIR) + 1));
    EXPECT_FALSE(on_disk.empty());
    EXPECT_EQ(included, on_disk) << "a *" << fragment_suffix << " under src/llc that " << table
                                 << " does not include (or an include of a missing file)";
    std::vector<std::string> others = source_files(LLC_SRCDIR);
    for (const auto &f : files_ending(LLC_SRCDIR, ".def"))
        others.push_back(f);
    for (const auto &f : others) {
        std::string rel = f.substr(std::strlen(LLC_SRCDIR) + 1);
        if (rel != table && !on_disk.count(rel))
            EXPECT_FALSE(std::regex_search(strip_comments(slurp(f)), row)) << f << " has a row outside " << table;
    }
}

std::set<std::string> table_names()
{
    std::set<std::string> names;
    for (const auto &v : llc::env_vars())
        names.insert(v.name);
    return names;
}

std::vector<llc_coll_env_var_t> coll_table()
{
    const llc_coll_env_var_t *vars = nullptr;
    size_t n = llc_coll_env_vars(&vars);
    return std::vector<llc_coll_env_var_t>(vars, vars + n);
}

} // namespace

// The only getenv in src/llc is env_get in config.cpp, and every variable
// config.cpp reads is in the table, and every table entry is read.
TEST(EnvTable, EveryVariableReadInSrcLlcIsListed)
{
    auto files = source_files(LLC_SRCDIR);
    ASSERT_GT(files.size(), 10u) << "sources not found under " << LLC_SRCDIR;
    std::regex getenv_call(R"(\bgetenv\s*\()");
    std::regex secure_getenv_call(R"(\bsecure_getenv\s*\()");
    int getenv_sites = 0;
    for (const auto &f : files) {
        std::string text = strip_comments(slurp(f));
        auto n = std::distance(std::sregex_iterator(text.begin(), text.end(), getenv_call), std::sregex_iterator());
        n += std::distance(std::sregex_iterator(text.begin(), text.end(), secure_getenv_call), std::sregex_iterator());
        if (f.size() >= 10 && f.compare(f.size() - 10, 10, "config.cpp") == 0)
            getenv_sites += int(n);
        else
            EXPECT_EQ(n, 0) << f << " calls getenv: read environment variables through config.cpp's table";
    }
    EXPECT_EQ(getenv_sites, 1) << "config.cpp should call getenv only inside env_get";

    // settings.def declares each setting once (the rows of its fragments
    // included); config.cpp stores the plain ones through the X-macro and must
    // apply every special one by hand.
    std::vector<std::string> fragments;
    std::string def = one_table_text("core/settings.def", fragments);
    std::string config = strip_comments(slurp(std::string(LLC_SRCDIR) + "/core/config.cpp"));
    std::regex row(R"(\bLLC_SETTING(_SPECIAL)?\(\s*(LLC_[A-Z0-9_]+)\s*,)");
    std::set<std::string> declared;
    for (auto it = std::sregex_iterator(def.begin(), def.end(), row); it != std::sregex_iterator(); ++it) {
        EXPECT_TRUE(declared.insert((*it)[2].str()).second) << (*it)[2].str() << " is declared twice";
        if ((*it)[1].matched) {
            EXPECT_NE(config.find("SettingId::" + (*it)[2].str()), std::string::npos)
                << (*it)[2].str() << " is LLC_SETTING_SPECIAL but config.cpp never reads it";
        }
    }
    EXPECT_EQ(declared, table_names());
}

// The one tables' fragments (a component's rows beside its code, see
// core/settings.def and core/counters.def): every *_settings.def of src/llc
// is included by core/settings.def exactly once, every *_counters.def by
// core/counters.def, and no other file of src/llc declares a setting or a
// counter.  (counters.hpp checks at compile time that the counters name
// every llc_stats_t member once.)
TEST(EnvTable, EverySettingsFragmentIsInTheOneTable)
{
    expect_fragments_in_one_table("core/settings.def", "_settings.def",
                                  std::regex(R"(\bLLC_SETTING(_SPECIAL)?\(\s*LLC_)"));
}

TEST(EnvTable, EveryCountersFragmentIsInTheOneTable)
{
    expect_fragments_in_one_table("core/counters.def", "_counters.def", std::regex(R"(\bLLC_COUNTER\(\s*[a-z])"));
}

TEST(EnvTable, ReadersRefuseUnlistedNamesAndEveryEntryHasText)
{
    EXPECT_THROW(llc::env_get("LLC_NOT_A_VARIABLE"), std::logic_error);
    EXPECT_NO_THROW(llc::Config::from_environment());
    for (const auto &v : llc::env_vars()) {
        EXPECT_EQ(std::string(v.name).rfind("LLC_", 0), 0u) << v.name;
        EXPECT_GT(std::strlen(v.default_text), 0u) << v.name;
        EXPECT_GT(std::strlen(v.description), 10u) << v.name;
    }
}

// src/coll reads its variables through its settings table (settings.def,
// coll_settings.hpp: SettingId::LLC_..., whose readers in env_table.cpp are
// the only getenv of an LLC_* name), so every "LLC_..." string literal or
// SettingId of its sources must be in libllccoll's table, and every table
// entry must be named in the sources.
TEST(EnvTable, EveryVariableNamedInSrcCollIsListed)
{
    auto files = source_files(LLC_COLL_SRCDIR);
    ASSERT_GT(files.size(), 10u) << "sources not found under " << LLC_COLL_SRCDIR;
    std::set<std::string> listed;
    for (const auto &v : coll_table())
        EXPECT_TRUE(listed.insert(v.name).second) << v.name << " is listed twice";
    EXPECT_EQ(llc_coll_env_vars(nullptr), listed.size());
    // Variables that are not libllccoll's own, read to find the model cache.
    const std::set<std::string> system_vars = {"HOME", "XDG_CACHE_HOME"};
    // A getenv's argument is a literal or a helper's parameter (whose
    // callers' literals are checked below); nothing else.
    std::regex getenv_call(R"(\b(secure_)?getenv\s*\()");
    std::regex getenv_arg(R"re(\b(secure_)?getenv\s*\(\s*("([^"]*)"|[A-Za-z_][A-Za-z0-9_]*)\s*\))re");
    std::regex llc_name(R"(LLC_[A-Z0-9_]+)");
    std::regex setting_id(R"(\bSettingId::(LLC_[A-Z0-9_]+))");
    std::set<std::string> named;
    int getenv_sites = 0;
    for (const auto &f : files) {
        if (ends_with(f, "/env_table.cpp"))
            continue;
        std::string text = strip_comments(slurp(f));
        auto calls = std::distance(std::sregex_iterator(text.begin(), text.end(), getenv_call), std::sregex_iterator());
        getenv_sites += int(calls);
        long plain = 0;
        for (auto it = std::sregex_iterator(text.begin(), text.end(), getenv_arg); it != std::sregex_iterator(); ++it) {
            plain++;
            if ((*it)[3].matched) {
                std::string name = (*it)[3].str();
                EXPECT_TRUE(system_vars.count(name))
                    << f << " reads " << name << ": declare it in src/coll/settings.def and read it through coll_settings.hpp";
            }
        }
        EXPECT_EQ(plain, calls) << f << ": a getenv whose argument is neither a literal nor a parameter";
        for (const std::string &lit : string_literals(text))
            if (std::regex_match(lit, llc_name)) {
                named.insert(lit);
                EXPECT_TRUE(listed.count(lit)) << f << " names " << lit << ", which src/coll/settings.def does not list";
            }
        for (auto it = std::sregex_iterator(text.begin(), text.end(), setting_id); it != std::sregex_iterator(); ++it)
            named.insert((*it)[1].str());
    }
    EXPECT_LE(getenv_sites, int(system_vars.size())) << "src/coll reads LLC_* variables only through coll_settings.hpp";
    for (const std::string &name : listed)
        EXPECT_TRUE(named.count(name)) << name << " is listed but no source of src/coll names it";
    for (const char *name : {"LLC_BCAST_INTERVAL", "LLC_ALLTOALL_PRUNE", "LLC_MODEL_CACHE", "LLC_COLL_FABRIC"})
        EXPECT_TRUE(named.count(name)) << name << " not found in the sources: is the scan broken?";
}

TEST(EnvTable, CollEntriesHaveText)
{
    for (const auto &v : coll_table()) {
        EXPECT_EQ(std::string(v.name).rfind("LLC_", 0), 0u) << v.name;
        EXPECT_GT(std::strlen(v.default_text), 0u) << v.name;
        EXPECT_GT(std::strlen(v.description), 10u) << v.name;
        EXPECT_EQ(std::strchr(v.description, '\n'), nullptr) << v.name << ": one line";
    }
}

// Every numeric variable in the table is really parsed: a bad value is refused
// with a message naming it.
// Restores the variables' values from before the test.
class SavedEnvironment {
public:
    SavedEnvironment()
    {
        for (const auto &v : llc::env_vars())
            if (const char *value = std::getenv(v.name))
                saved_.push_back({v.name, value});
    }
    ~SavedEnvironment()
    {
        for (const auto &v : llc::env_vars())
            unsetenv(v.name);
        for (const auto &kv : saved_)
            setenv(kv.first.c_str(), kv.second.c_str(), 1);
    }

private:
    std::vector<std::pair<std::string, std::string>> saved_;
};

TEST(EnvTable, EveryNumericEntryIsParsed)
{
    SavedEnvironment saved;
    for (const auto &v : llc::env_vars())
        unsetenv(v.name);
    for (const auto &v : llc::env_vars()) {
        if (std::string(v.name) == "LLC_TCP_ADDR" || std::string(v.name) == "LLC_UDP_ADDR")
            continue; // checked when tcp / udp starts (inet_address.cpp)
        setenv(v.name, "bogus", 1);
        try {
            llc::Config::from_environment();
            ADD_FAILURE() << v.name << "=bogus was accepted: not read by Config::from_environment";
        } catch (const llc::Error &e) {
            EXPECT_NE(std::string(e.what()).find(v.name), std::string::npos) << e.what();
        }
        unsetenv(v.name);
    }
    setenv("LLC_MAX_CONTEXTS", "2048", 1);
    setenv("LLC_MEM_REPORT", "1", 1);
    llc::Config c = llc::Config::from_environment();
    EXPECT_EQ(c.max_contexts, 2048u);
    EXPECT_TRUE(c.mem_report);
    unsetenv("LLC_MAX_CONTEXTS");
    unsetenv("LLC_MEM_REPORT");
    llc::Config d = llc::Config::from_environment();
    EXPECT_EQ(d.max_contexts, 1024u);
    EXPECT_FALSE(d.mem_report);
}

TEST(BuildInfo, TransportsAndCaps)
{
    std::set<std::string> names;
    for (const auto &t : llc::built_transports()) {
        names.insert(t.name);
        EXPECT_TRUE(t.caps & LLC_CAP_AM) << t.name;
    }
    EXPECT_TRUE(names.count("self") && names.count("shm") && names.count("tcp"));
    EXPECT_EQ(llc::caps_text(LLC_CAP_AM | LLC_CAP_RMA), "AM|RMA");
    EXPECT_EQ(llc::caps_text(0), "none");
    EXPECT_STRNE(llc::package_version(), "");
}

// Yamaguchi et al.'s model with the errata (doc/references.md): at 2^20 nodes, m = 4, c = 10,
// gamma = 1024: baseline 1.74 TB, designed 1.07 GB per node (powers of 1000).
TEST(MemModel, PaperTotalsAt2To20Nodes)
{
    llc::ModelParams p;
    double nodes = std::ldexp(1.0, 20);
    auto base = llc::paper_baseline(nodes, p);
    auto design = llc::paper_designed(nodes, p);
    EXPECT_NEAR(llc::model_total(base) / 1e12, 1.74, 0.005);
    EXPECT_NEAR(llc::model_total(design) / 1e9, 1.07, 0.005);

    // The per-component values of the paper's table 1 (errata applied).
    auto value = [](const std::vector<llc::ModelTerm> &t, const std::string &name) {
        for (const auto &x : t)
            if (x.component == name)
                return x.bytes;
        ADD_FAILURE() << "no component " << name;
        return 0.0;
    };
    EXPECT_NEAR(value(base, "communication buffers") / 1e12, 1.12, 0.005);
    EXPECT_NEAR(value(base, "low-level contexts (QPs)") / 1e9, 523, 0.5);
    EXPECT_NEAR(value(base, "high-level contexts (VC/BoC)") / 1e9, 15.9, 0.05);
    EXPECT_NEAR(value(base, "communicator tables") / 1e9, 3.32, 0.005);
    EXPECT_NEAR(value(base, "shared-memory comm") / 1e6, 521, 0.5);
    EXPECT_NEAR(value(base, "process manager (KVS)") / 1e9, 71.0, 0.05);
    EXPECT_NEAR(value(base, "other") / 1e6, 53.3, 0.05);
    EXPECT_NEAR(value(design, "communication buffers") / 1e6, 151, 0.5);
    EXPECT_NEAR(value(design, "low-level contexts (QPs)") / 1e6, 106, 0.5);
    EXPECT_NEAR(value(design, "high-level contexts (VC/BoC)") / 1e6, 34.5, 0.05);
    EXPECT_NEAR(value(design, "transport/buffer switching") / 1e6, 407, 0.5);
    EXPECT_NEAR(value(design, "communicator tables") / 1e6, 204, 0.5);
    EXPECT_NEAR(value(design, "shared-memory comm") / 1e6, 118, 0.5);
    EXPECT_NEAR(value(design, "process manager (KVS)") / 1e3, 216, 0.5);

    // The n-terms of table 1.
    double m = p.m, c = p.c;
    EXPECT_DOUBLE_EQ(llc::model_total(base) - llc::model_total(llc::paper_baseline(nodes - 1, p)),
                     m * (((16 * c + 99066) * m + (8 * c + 2352) / m + 16352)));
    double dn = 0;
    for (const auto &t : design)
        dn += t.n_coeff;
    EXPECT_DOUBLE_EQ(dn, 14 * m + 4 * c + 40);
}

// libllc's own model: the n-sized tables are the node-shared rank -> node
// table (4 bytes per rank per node) and the sequence numbers (16 per rank per
// process); the tcp rank table grows only with connected peers (hash node,
// bucket, list slot), and the per-peer terms come from the real structures.
TEST(MemModel, LlcModelFromStructSizes)
{
    llc::ModelParams p;
    const auto s = llc::MemWalk::struct_sizes();
    double nodes = 1024, n = p.m * nodes;
    auto capped = llc::llc_model(nodes, p, true);
    auto all = llc::llc_model(nodes, p, false);
    double n_coeff = 0;
    for (const auto &t : capped)
        n_coeff += t.n_coeff;
    // capped (at 2^10 nodes the sequence-number pages are all touched): the
    // node's one rank -> node table and the sequence numbers are n-sized; no
    // per-process rank table of shm or tcp is.
    EXPECT_DOUBLE_EQ(n_coeff, s.node_entry + p.m * 2 * s.seq_entry);
    double n_coeff_all = 0;
    for (const auto &t : llc::llc_model(nodes, p, false))
        if (t.component != "tcp_conn_state" && t.component != "tcp_buffers")
            n_coeff_all += t.n_coeff;
    EXPECT_DOUBLE_EQ(n_coeff_all, s.node_entry + p.m * (2 * s.seq_entry + s.tcp_out_entry + 2 * s.pointer));
    for (const auto &t : all) {
        if (t.component == "rank_table") { // once per node, not m times
            EXPECT_DOUBLE_EQ(t.bytes, n * s.node_entry + s.node_map_header);
        } else if (t.component == "shm_rank_table") { // m ranks and m - 1 peers per process
            EXPECT_DOUBLE_EQ(t.bytes, p.m * (4 * p.m + (p.m - 1) * s.pointer));
        }
    }
    double per_peer = double(s.tcp_out_conn + s.empty_deque_heap + s.tcp_in_conn + s.stream_decoder);
    double conn_all = 0, conn_capped = 0;
    for (const auto &t : all)
        if (t.component == "tcp_conn_state")
            conn_all = t.bytes;
    for (const auto &t : capped)
        if (t.component == "tcp_conn_state")
            conn_capped = t.bytes;
    EXPECT_DOUBLE_EQ(conn_all, p.m * (n - p.m) * per_peer);
    EXPECT_DOUBLE_EQ(conn_capped, p.m * p.gamma * per_peer);
    EXPECT_LT(llc::model_total(capped), llc::model_total(all));
    // At 2^20 nodes the capped sequence numbers are one page per used peer
    // (gamma remote + m local) and per array, no longer 16 n.
    for (const auto &t : llc::llc_model(std::ldexp(1.0, 20), p, true))
        if (t.component == "seq_numbers") {
            EXPECT_DOUBLE_EQ(t.bytes, p.m * 2 * (p.gamma + p.m) * 4096);
            EXPECT_DOUBLE_EQ(t.n_coeff, 0);
        }
    // Doubling the job roughly doubles the uncapped model but not the capped one's per-peer part.
    double big = llc::model_total(llc::llc_model(2 * nodes, p, false));
    EXPECT_GT(big, 1.9 * llc::model_total(all) - 1e7);
}
