// shm_name.hpp - the name of a POSIX shared-memory segment and whether this
// process still has to remove it.  The process that created a segment owns
// its name until it releases it (shm_unlink) or is destroyed, so a set-up
// that fails half-way, or a job that ends early, leaves nothing in /dev/shm.
#pragma once

#include <sys/mman.h>

#include <string>
#include <utility>

namespace llc {

class ShmName {
public:
    ShmName() = default;
    explicit ShmName(std::string name) : name_(std::move(name)) {} // not owned yet
    ShmName(const ShmName &) = delete;
    ShmName &operator=(const ShmName &) = delete;
    ShmName(ShmName &&other) noexcept : name_(std::move(other.name_)), owned_(std::exchange(other.owned_, false)) {}
    ShmName &operator=(ShmName &&other) noexcept
    {
        if (this != &other) {
            release();
            name_ = std::move(other.name_);
            owned_ = std::exchange(other.owned_, false);
        }
        return *this;
    }
    ~ShmName() { release(); }

    // This process created the segment: removing the name is its job.
    void own() { owned_ = true; }
    // Remove the name (the mappings stay valid).  Idempotent; a no-op when not owned.
    void release()
    {
        if (owned_) {
            ::shm_unlink(name_.c_str());
            owned_ = false;
        }
    }
    const std::string &str() const { return name_; }

private:
    std::string name_;
    bool owned_ = false;
};

} // namespace llc
