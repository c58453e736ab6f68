// coll_settings.hpp - libllccoll's settings (settings.def) as a constexpr array
// of typed descriptors (src/common/settings.hpp), and their readers
// (env_table.cpp).  Every environment variable of src/coll is read here.
#pragma once

#include "settings.hpp"

#include <cstddef>
#include <optional>

namespace llc::coll {

enum class SettingId : size_t {
#define COLL_SETTING(NAME, ...) NAME,
#include "settings.def"
#undef COLL_SETTING
};

inline constexpr settings::Setting kSettings[] = {
#define COLL_SETTING(NAME, TYPE, DEFAULT, ALLOWED, COMPONENT, HELP) \
    {#NAME, settings::Type::TYPE, DEFAULT, 0, 0, ALLOWED, COMPONENT, HELP},
#include "settings.def"
#undef COLL_SETTING
};

inline constexpr const settings::Setting &setting(SettingId id) { return kSettings[size_t(id)]; }

// The text of a setting; nullptr when unset or empty.
const char *setting_text(SettingId id);
// Its parsed value; nullopt when unset, empty or not valid (then a warning on
// stderr names the setting, the value and the allowed values).
std::optional<settings::Value> setting_value(SettingId id);
// Shorthands: assign a valid value of an Int (int, bool: nonzero) or Real
// setting to `v` and return true; leave `v` alone otherwise.
bool read_setting(SettingId id, int &v);
bool read_setting(SettingId id, bool &v);
bool read_setting(SettingId id, double &v);

}  // namespace llc::coll
