// settings_table.hpp - libllc's settings (settings.def) as a constexpr array
// of typed descriptors, indexed by SettingId.
#pragma once

#include "settings.hpp"

#include <cstddef>
#include <cstdint>

namespace llc {

enum class SettingId : size_t {
#define LLC_SETTING(NAME, ...) NAME,
#define LLC_SETTING_SPECIAL(NAME, ...) NAME,
#include "core/settings.def"
#undef LLC_SETTING
#undef LLC_SETTING_SPECIAL
};

inline constexpr settings::Setting kSettings[] = {
#define LLC_SETTING_SPECIAL(NAME, TYPE, DEFAULT, MIN, MAX, ALLOWED, COMPONENT, HELP) \
    {#NAME, settings::Type::TYPE, DEFAULT, MIN, MAX, ALLOWED, COMPONENT, HELP},
#define LLC_SETTING(NAME, MEMBER, ...) LLC_SETTING_SPECIAL(NAME, __VA_ARGS__)
#include "core/settings.def"
#undef LLC_SETTING
#undef LLC_SETTING_SPECIAL
};

inline constexpr const settings::Setting &setting(SettingId id) { return kSettings[size_t(id)]; }

} // namespace llc
