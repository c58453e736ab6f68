// config_fuzz.cpp - libFuzzer target: the settings reader (src/llc/core/config.*)
// through its public entry point, Config::from_environment(), with fuzzed
// values for the variables it lists (env_vars()).
//
// Input: records of (variable index byte, value up to a 0 byte).
#include "core/config.hpp"
#include "core/errors.hpp"

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const auto &vars = llc::env_vars();
    std::vector<const char *> set;
    size_t i = 0;
    while (i < size) {
        const char *name = vars[data[i] % vars.size()].name;
        size_t j = i + 1;
        while (j < size && data[j] != 0)
            j++;
        std::string value(reinterpret_cast<const char *>(data + i + 1), j - i - 1);
        setenv(name, value.c_str(), 1);
        set.push_back(name);
        i = j + 1;
    }
    try {
        llc::Config c = llc::Config::from_environment();
        (void)c;
    } catch (const llc::Error &) {
        // a refused setting is reported as an llc error: fine
    }
    for (const char *name : set)
        unsetenv(name);
    return 0;
}
