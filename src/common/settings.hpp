// settings.hpp - typed descriptors of environment settings, shared by libllc
// (src/llc/core/settings.def) and libllccoll (src/coll/settings.def).
//
// Each library declares each of its settings once, as a row of an X-macro
// list; the rows become a constexpr array of Setting, and everything else
// comes from that array: the readers (parse_* below), llc_info's listing,
// the generated documentation (markdown_table) and the unit tests.
// Header-only: libllccoll does not link libllc, so the two libraries share
// the template and keep a table each.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llc::settings {

enum class Type {
    Unsigned, // integer in [min, max], optional k/m/g suffix (powers of 1024)
    Bool,     // 0 or 1
    Choice,   // one word of `allowed` ("a|b|c"); the value is its index
    Text,     // any string
    Int,      // signed integer (strtol, whole string)
    Real,     // floating point number (strtod, whole string)
};

struct Setting {
    const char *name;
    Type type;
    const char *default_text; // the default as shown (a value or a word such as "auto")
    uint64_t min, max;        // Unsigned only
    const char *allowed;      // Choice only: "a|b|c"; "" otherwise
    const char *component;    // owning component, e.g. "shm", "udp", "coll/bcast"
    const char *help;         // one line
};

// The words of a Choice setting, in order.
inline std::vector<std::string_view> choices(const Setting &s)
{
    std::vector<std::string_view> out;
    std::string_view all = s.allowed;
    while (!all.empty()) {
        size_t bar = all.find('|');
        out.push_back(all.substr(0, bar));
        all = bar == std::string_view::npos ? std::string_view() : all.substr(bar + 1);
    }
    return out;
}

// "an integer in [1, 10]", "tcp, udp or hybrid", ...: what a value must be.
inline std::string allowed_text(const Setting &s)
{
    switch (s.type) {
    case Type::Unsigned:
    case Type::Bool:
        return "an integer in [" + std::to_string(s.type == Type::Bool ? 0 : s.min) + ", " +
               std::to_string(s.type == Type::Bool ? 1 : s.max) + "]";
    case Type::Choice: {
        std::vector<std::string_view> words = choices(s);
        std::string out;
        for (size_t i = 0; i < words.size(); i++) {
            if (i > 0)
                out += i + 1 == words.size() ? " or " : ", ";
            out += words[i];
        }
        return out;
    }
    case Type::Int:
        return "an integer";
    case Type::Real:
        return "a number";
    case Type::Text:
        break;
    }
    return "any text";
}

// The message for a value that does not parse: names the setting, the value
// and what is allowed.
inline std::string invalid_message(const Setting &s, const char *text)
{
    return std::string("environment variable ") + s.name + "=\"" + text + "\" is not valid: expected " +
           allowed_text(s);
}

// The parsed value of a setting: `number` for Unsigned, Bool (0/1), Choice
// (the index into the allowed words) and Int; `real` for Real; `text` always.
struct Value {
    uint64_t number = 0;
    int64_t integer = 0;
    double real = 0;
    std::string text;
};

namespace detail {

inline std::optional<uint64_t> parse_unsigned(const char *text, uint64_t min, uint64_t max)
{
    errno = 0;
    char *end = nullptr;
    unsigned long long value = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || text[0] == '-')
        return std::nullopt;
    if (*end) {
        int shift = 0;
        switch (*end) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return std::nullopt;
        }
        if (end[1] != '\0')
            return std::nullopt;
        value <<= shift;
    }
    if (value < min || value > max)
        return std::nullopt;
    return value;
}

} // namespace detail

// Parses `text` (non-empty) as the value of `s`; nullopt when it is not valid
// (invalid_message says why).
inline std::optional<Value> parse(const Setting &s, const char *text)
{
    Value v;
    v.text = text;
    switch (s.type) {
    case Type::Unsigned:
    case Type::Bool: {
        auto n = detail::parse_unsigned(text, s.type == Type::Bool ? 0 : s.min, s.type == Type::Bool ? 1 : s.max);
        if (!n)
            return std::nullopt;
        v.number = *n;
        return v;
    }
    case Type::Choice: {
        std::vector<std::string_view> words = choices(s);
        for (size_t i = 0; i < words.size(); i++)
            if (words[i] == text) {
                v.number = i;
                return v;
            }
        return std::nullopt;
    }
    case Type::Int: {
        errno = 0;
        char *end = nullptr;
        long long x = std::strtoll(text, &end, 10);
        if (errno != 0 || end == text || *end)
            return std::nullopt;
        v.integer = x;
        return v;
    }
    case Type::Real: {
        char *end = nullptr;
        double x = std::strtod(text, &end);
        if (end == text || *end)
            return std::nullopt;
        v.real = x;
        return v;
    }
    case Type::Text:
        break;
    }
    return v;
}

// The settings as a markdown table (doc/settings.md is generated from it).
template <class Range>
std::string markdown_table(const Range &table)
{
    auto cell = [](std::string_view text) {
        std::string out;
        for (char ch : text)
            out += ch == '|' ? std::string("\\|") : std::string(1, ch);
        return out;
    };
    std::string out = "| Variable | Component | Default | Allowed values | Meaning |\n"
                      "|---|---|---|---|---|\n";
    for (const Setting &s : table)
        out += "| `" + std::string(s.name) + "` | " + s.component + " | `" + cell(s.default_text) + "` | " +
               cell(allowed_text(s)) + " | " + cell(s.help) + " |\n";
    return out;
}

} // namespace llc::settings
