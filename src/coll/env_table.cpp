// The readers of libllccoll's settings (coll_settings.hpp, settings.def) and
// the C view of the table for llc_info and the netmod (llc_coll_env_vars,
// llc_coll_env_get, llc_coll_native_only).  The only getenv of src/coll for
// an LLC_* variable is here; a unit test (test/unit/core/info_test.cpp) checks it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>

#include "coll_settings.hpp"
#include "llc_coll.h"

namespace llc::coll {

const char *setting_text(SettingId id)
{
    const char *s = std::getenv(setting(id).name);
    return (s && *s) ? s : nullptr;
}

std::optional<settings::Value> setting_value(SettingId id)
{
    const char *text = setting_text(id);
    if (!text)
        return std::nullopt;
    std::optional<settings::Value> v = settings::parse(setting(id), text);
    if (!v)
        std::fprintf(stderr, "llc_coll: ignoring %s\n", settings::invalid_message(setting(id), text).c_str());
    return v;
}

bool read_setting(SettingId id, int &v)
{
    std::optional<settings::Value> x = setting_value(id);
    if (x)
        v = static_cast<int>(x->integer);
    return x.has_value();
}

bool read_setting(SettingId id, bool &v)
{
    int i = v;
    bool set = read_setting(id, i);
    v = i != 0;
    return set;
}

bool read_setting(SettingId id, double &v)
{
    std::optional<settings::Value> x = setting_value(id);
    if (x)
        v = x->real;
    return x.has_value();
}

}  // namespace llc::coll

namespace {

constexpr llc_coll_env_var_t kVars[] = {
#define COLL_SETTING(NAME, TYPE, DEFAULT, ALLOWED, COMPONENT, HELP) {#NAME, DEFAULT, HELP},
#include "settings.def"
#undef COLL_SETTING
};
static_assert(std::size(kVars) == std::size(llc::coll::kSettings));

bool selects_mpich(llc::coll::SettingId id)
{
    std::optional<llc::settings::Value> v = llc::coll::setting_value(id);
    return v && (v->text == "mpich" || v->text == "mpi");
}

}  // namespace

extern "C" size_t llc_coll_env_vars(const llc_coll_env_var_t **vars)
{
    if (vars)
        *vars = kVars;
    return std::size(kVars);
}

extern "C" const char *llc_coll_env_get(const char *name)
{
    for (const llc_coll_env_var_t &v : kVars)
        if (std::strcmp(v.name, name) == 0)
            return std::getenv(name);
    return nullptr;
}

extern "C" int llc_coll_native_only(void)
{
    using llc::coll::SettingId;
    return selects_mpich(SettingId::LLC_BCAST) && selects_mpich(SettingId::LLC_ALLTOALL);
}
