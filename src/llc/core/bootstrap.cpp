// bootstrap.cpp - calls into the caller's bootstrap service.
#include "core/bootstrap.hpp"

#include "core/errors.hpp"

namespace llc {

namespace {
constexpr size_t kMaxKeyBytes = 64;
constexpr size_t kMaxValueBytes = 1024;
} // namespace

void Bootstrap::put(const std::string &name, const std::string &value)
{
    const std::string key = key_prefix_ + name;
    if (key.size() > kMaxKeyBytes || value.size() > kMaxValueBytes)
        throw Error(LLC_ERR_INVALID, "bootstrap put of key \"" + key + "\": key or value too long");
    if (ops_.put(ops_.arg, key.c_str(), value.data(), value.size()) != 0)
        throw Error(LLC_ERR_BOOTSTRAP, "bootstrap put of key \"" + key + "\" failed");
}

std::string Bootstrap::get(int src_rank, const std::string &name)
{
    const std::string key = key_prefix_ + name;
    char value[kMaxValueBytes];
    size_t len = sizeof(value);
    if (ops_.get(ops_.arg, src_rank, key.c_str(), value, &len) != 0)
        throw Error(LLC_ERR_BOOTSTRAP, "bootstrap get of key \"" + key + "\" from rank " +
                                           std::to_string(src_rank) + " failed");
    if (len > sizeof(value))
        throw Error(LLC_ERR_BOOTSTRAP, "bootstrap get of key \"" + key + "\" returned " +
                                           std::to_string(len) + " bytes, more than the buffer");
    return std::string(value, len);
}

void Bootstrap::fence()
{
    if (ops_.fence(ops_.arg) != 0)
        throw Error(LLC_ERR_BOOTSTRAP, "bootstrap fence failed");
}

} // namespace llc
