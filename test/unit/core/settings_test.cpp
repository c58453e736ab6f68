// settings_test.cpp - tests generated from the settings tables
// (src/llc/core/settings.def, src/coll/settings.def): every documented default is
// the real default, every allowed value is accepted, every bad value is
// refused with a message naming the setting, the value and the allowed values.
#include "coll_settings.hpp"
#include "core/config.hpp"
#include "core/errors.hpp"
#include "core/settings_table.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using llc::settings::Setting;
using llc::settings::Type;

// Unsets every setting of both tables for the life of the object (RAII),
// then restores the values from before.
class CleanEnvironment {
public:
    CleanEnvironment()
    {
        save(llc::kSettings);
        save(llc::coll::kSettings);
    }
    ~CleanEnvironment()
    {
        for (const auto &kv : saved_)
            setenv(kv.first.c_str(), kv.second.c_str(), 1);
    }

private:
    template <class Range>
    void save(const Range &table)
    {
        for (const Setting &s : table) {
            if (const char *v = std::getenv(s.name))
                saved_.push_back({s.name, v});
            unsetenv(s.name);
        }
    }
    std::vector<std::pair<std::string, std::string>> saved_;
};

std::string refusal(const char *name, const std::string &value)
{
    setenv(name, value.c_str(), 1);
    std::string what;
    try {
        llc::Config::from_environment();
    } catch (const llc::Error &e) {
        what = e.what();
    }
    unsetenv(name);
    return what;
}

bool accepted(const char *name, const std::string &value)
{
    setenv(name, value.c_str(), 1);
    bool ok = true;
    try {
        llc::Config::from_environment();
    } catch (const llc::Error &) {
        ok = false;
    }
    unsetenv(name);
    return ok;
}

template <class T>
std::string as_text(const T &member)
{
    if constexpr (std::is_same_v<T, std::string>)
        return member;
    else
        return std::to_string(static_cast<uint64_t>(member));
}

} // namespace

// The default shown by llc_info and doc/settings.md, where it is a value, is
// the value Config::from_environment gives with the variable unset.
TEST(Settings, DocumentedDefaultsAreTheDefaults)
{
    CleanEnvironment clean;
    const llc::Config c = llc::Config::from_environment();
    int checked = 0;
#define LLC_SETTING(NAME, MEMBER, ...)                                                                    \
    {                                                                                                     \
        const Setting &s = llc::setting(llc::SettingId::NAME);                                           \
        if (auto v = llc::settings::parse(s, s.default_text); v && s.type != Type::Text) {               \
            EXPECT_EQ(as_text(c.MEMBER), std::to_string(v->number)) << #NAME " default " << s.default_text; \
            checked++;                                                                                    \
        }                                                                                                 \
    }
#define LLC_SETTING_SPECIAL(NAME, ...)
#include "core/settings.def"
#undef LLC_SETTING
#undef LLC_SETTING_SPECIAL
    EXPECT_GT(checked, 30);
}

// One generic parser: every word of a Choice, both ends of an Unsigned range
// and 0/1 of a Bool are accepted; the word "bogus", one past either end and 2
// are refused, naming the setting, the value and what is allowed.
TEST(Settings, EveryAllowedValueIsAcceptedAndEveryBadOneExplained)
{
    CleanEnvironment clean;
    for (const Setting &s : llc::kSettings) {
        std::vector<std::string> good, bad = {"bogus"};
        switch (s.type) {
        case Type::Choice:
            for (std::string_view w : llc::settings::choices(s))
                good.emplace_back(w);
            break;
        case Type::Bool:
            good = {"0", "1"};
            bad.push_back("2");
            break;
        case Type::Unsigned:
            good = {std::to_string(s.min), std::to_string(s.max)};
            if (s.min > 0)
                bad.push_back(std::to_string(s.min - 1));
            bad.push_back(std::to_string(s.max + 1));
            break;
        default:
            continue; // Text: any value (addresses are checked when the transport starts)
        }
        for (const std::string &v : good)
            EXPECT_TRUE(accepted(s.name, v)) << s.name << "=" << v;
        for (const std::string &v : bad) {
            std::string what = refusal(s.name, v);
            EXPECT_NE(what.find(std::string(s.name) + "=\"" + v + "\""), std::string::npos) << what;
            EXPECT_NE(what.find(llc::settings::allowed_text(s)), std::string::npos) << what;
        }
    }
}

TEST(Settings, ChoiceMessagesListTheAllowedWords)
{
    CleanEnvironment clean;
    EXPECT_NE(refusal("LLC_NET", "ib").find("LLC_NET=\"ib\" is not valid: expected tcp, udp, hybrid or verbs"),
              std::string::npos);
    EXPECT_NE(refusal("LLC_KVS", "etcd").find("expected pmi or dist"), std::string::npos);
    setenv("LLC_NET", "verbs", 1);
    EXPECT_TRUE(llc::Config::from_environment().net_verbs);
    setenv("LLC_NET", "udp", 1);
    EXPECT_EQ(llc::Config::from_environment().net, llc::Config::Net::Udp);
    unsetenv("LLC_NET");
    setenv("LLC_UDP_DROP_ONLY", "switch", 1);
    EXPECT_TRUE(llc::Config::from_environment().udp_drop_switch_only);
    unsetenv("LLC_UDP_DROP_ONLY");
    setenv("LLC_HYBRID_DRIVER", "sender", 1);
    EXPECT_EQ(llc::Config::from_environment().hybrid_driver, llc::Config::HybridDriver::Sender);
    unsetenv("LLC_HYBRID_DRIVER");
    setenv("LLC_MAX_CONTEXTS", "100", 1);
    EXPECT_EQ(llc::Config::from_environment().kvs_cache, 100u) << "LLC_KVS_CACHE defaults to LLC_MAX_CONTEXTS";
    unsetenv("LLC_MAX_CONTEXTS");
}

// libllccoll's table: a bad value is ignored (the default stays) with a
// warning that names the setting, the value and the allowed values.
TEST(Settings, CollChoicesAndBadValues)
{
    CleanEnvironment clean;
    for (const Setting &s : llc::coll::kSettings) {
        const auto id = llc::coll::SettingId(&s - llc::coll::kSettings);
        if (s.type == Type::Choice)
            for (std::string_view w : llc::settings::choices(s)) {
                setenv(s.name, std::string(w).c_str(), 1);
                auto v = llc::coll::setting_value(id);
                ASSERT_TRUE(v.has_value()) << s.name << "=" << w;
                EXPECT_EQ(llc::settings::choices(s)[v->number], w);
            }
        if (s.type == Type::Text)
            continue;
        setenv(s.name, "bogus", 1);
        testing::internal::CaptureStderr();
        EXPECT_FALSE(llc::coll::setting_value(id).has_value()) << s.name;
        std::string err = testing::internal::GetCapturedStderr();
        EXPECT_NE(err.find(std::string(s.name) + "=\"bogus\""), std::string::npos) << err;
        EXPECT_NE(err.find(llc::settings::allowed_text(s)), std::string::npos) << err;
        unsetenv(s.name);
    }
    int interval = 1;
    setenv("LLC_BCAST_INTERVAL", "16", 1);
    EXPECT_TRUE(llc::coll::read_setting(llc::coll::SettingId::LLC_BCAST_INTERVAL, interval));
    EXPECT_EQ(interval, 16);
    unsetenv("LLC_BCAST_INTERVAL");
}
