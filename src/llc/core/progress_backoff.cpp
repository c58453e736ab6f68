// progress_backoff.cpp - the idle policy (see progress_backoff.hpp).
#include "core/progress_backoff.hpp"

#include <unistd.h>

namespace llc {

IdlePolicy idle_policy(const Config &config, int processes_on_node, long online_cpus)
{
    bool over = false;
    switch (config.oversubscribed) {
    case Config::Oversubscribed::On:
        over = true;
        break;
    case Config::Oversubscribed::Off:
        over = false;
        break;
    case Config::Oversubscribed::Auto:
        over = processes_on_node > online_cpus;
        break;
    }
    if (over)
        return {config.oversub_spin_count, config.oversub_idle_sleep_us, true};
    return {config.spin_count, config.idle_sleep_us, false};
}

long online_cpus()
{
    long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

} // namespace llc
