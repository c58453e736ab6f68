// config.cpp - Config::from_environment: reads every setting of settings.def.
#include "core/config.hpp"

#include "core/errors.hpp"
#include "llc.h"
#include "core/settings_table.hpp"

#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <type_traits>

namespace llc {

const std::vector<EnvVarInfo> &env_vars()
{
    static const std::vector<EnvVarInfo> table = [] {
        std::vector<EnvVarInfo> out;
        for (const settings::Setting &s : kSettings)
            out.push_back({s.name, s.default_text, s.help});
        return out;
    }();
    return table;
}

const char *env_get(const char *name)
{
    for (const settings::Setting &s : kSettings)
        if (std::strcmp(s.name, name) == 0)
            return std::getenv(name);
    throw std::logic_error(std::string("libllc reads environment variable ") + name +
                           " but it is not in settings.def");
}

namespace {

// The parsed value of one setting; nullopt when unset or empty.  Throws
// Error(LLC_ERR_INVALID) naming the setting, the value and what is allowed.
std::optional<settings::Value> read(SettingId id)
{
    const settings::Setting &s = setting(id);
    const char *text = env_get(s.name);
    if (!text || !*text)
        return std::nullopt;
    std::optional<settings::Value> v = settings::parse(s, text);
    if (!v)
        throw Error(LLC_ERR_INVALID, settings::invalid_message(s, text));
    return v;
}

// Stores a parsed value into a Config member of any of the types settings.def uses.
template <class T>
void store(T &member, const settings::Value &v)
{
    if constexpr (std::is_same_v<T, bool>)
        member = v.number != 0; // Bool, or a two-word Choice ("all|switch": switch)
    else if constexpr (std::is_enum_v<T>)
        member = static_cast<T>(v.number); // a Choice: the enum lists the words in order
    else if constexpr (std::is_integral_v<T>)
        member = static_cast<T>(v.number);
    else
        member = v.text;
}

uint64_t round_up_pow2(uint64_t value, uint64_t at_least)
{
    uint64_t p = at_least;
    while (p < value)
        p <<= 1;
    return p;
}

// The settings that are not one member each (LLC_SETTING_SPECIAL in settings.def).
void apply_special(Config &c)
{
    if (auto net = read(SettingId::LLC_NET)) {
        static constexpr Config::Net kNets[] = {Config::Net::Tcp, Config::Net::Udp, Config::Net::Hybrid};
        if (net->number < std::size(kNets))
            c.net = kNets[net->number];
        else
            c.net_verbs = true; // "verbs"
    }
    if (auto hybrid = read(SettingId::LLC_HYBRID); hybrid && hybrid->number) {
        if (c.net == Config::Net::Udp)
            throw Error(LLC_ERR_INVALID, "LLC_HYBRID=1 contradicts LLC_NET=udp");
        if (c.net_verbs)
            throw Error(LLC_ERR_INVALID,
                        "LLC_HYBRID=1 contradicts LLC_NET=verbs (for a hybrid fallback set LLC_VERBS_FALLBACK=hybrid)");
        c.net = Config::Net::Hybrid;
    }
    // The address cache is one more per-peer table: capped at gamma too unless set.
    auto kvs_cache = read(SettingId::LLC_KVS_CACHE);
    c.kvs_cache = kvs_cache ? kvs_cache->number : c.max_contexts;
}

// Checks that involve more than one value's range.
void normalize(Config &c)
{
    c.shm_ring_bytes = round_up_pow2(c.shm_ring_bytes, 4096);
    c.udp_handover_slots = round_up_pow2(c.udp_handover_slots, 2);
    if ((c.ring_slot_bytes & (c.ring_slot_bytes - 1)) != 0)
        throw Error(LLC_ERR_INVALID, "environment variable LLC_RING_SLOT_BYTES=\"" +
                                         std::string(env_get("LLC_RING_SLOT_BYTES")) +
                                         "\" is not valid: expected a power of two in [1024, 1048576]");
    if (c.ring_pool * c.ring_slots * c.ring_slot_bytes > (uint64_t(1) << 36))
        throw Error(LLC_ERR_INVALID, "LLC_RING_POOL x LLC_RING_SLOTS x LLC_RING_SLOT_BYTES = " +
                                         std::to_string(c.ring_pool) + " x " + std::to_string(c.ring_slots) +
                                         " x " + std::to_string(c.ring_slot_bytes) +
                                         " bytes is more than the ring pool's limit of 64 GiB of address space");
}

} // namespace

Config Config::from_environment()
{
    Config c;
#define LLC_SETTING(NAME, MEMBER, ...)              \
    if (auto v = read(SettingId::NAME))             \
        store(c.MEMBER, *v);
#define LLC_SETTING_SPECIAL(NAME, ...)
#include "core/settings.def"
#undef LLC_SETTING
#undef LLC_SETTING_SPECIAL
    apply_special(c);
    normalize(c);
    return c;
}

} // namespace llc
