// Pieces shared by the broadcast benchmarks of bench/bcast (MPI programs and
// the simulator): option lists, the seeded random loads, the sleep workload
// and the selection of the broadcast mode through LLC_BCAST*.
#pragma once

#include <time.h>

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace bcast_bench {

// "a,b,c" -> {"a", "b", "c"} (empty items dropped)
inline std::vector<std::string> split(const char *s)
{
    std::vector<std::string> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty())
            v.push_back(item);
    return v;
}

// splitmix64: reproducible pseudo-random numbers on any machine
inline std::uint64_t mix(std::uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

// the random-load experiment's load of `rank` in `pattern`: 0..max multiplies
inline std::uint64_t random_load(int pattern, int rank, std::uint64_t max)
{
    return mix((static_cast<std::uint64_t>(pattern) << 32) ^ static_cast<std::uint64_t>(rank)) % (max + 1);
}

inline void sleep_ns(double ns)
{
    timespec ts{static_cast<time_t>(ns / 1e9), static_cast<long>(static_cast<long long>(ns) % 1000000000LL)};
    nanosleep(&ts, nullptr);
}

// Mode of the next communicator's broadcast state (read when it is created):
// Ori = fixed binomial tree, MPI = the MPI's own MPI_Bcast, Opt = virtual
// ranks tuned at run time, Ide = binomial tree with the static table `ide`.
inline void set_bcast_mode(const std::string &mode, const std::string &ide)
{
    unsetenv("LLC_BCAST_TABLE");
    if (mode == "Ori")
        setenv("LLC_BCAST", "binomial", 1);
    else if (mode == "MPI")
        setenv("LLC_BCAST", "mpich", 1);
    else if (mode == "Opt")
        setenv("LLC_BCAST", "vrank", 1);
    else {
        setenv("LLC_BCAST", "binomial", 1);
        setenv("LLC_BCAST_TABLE", ide.c_str(), 1);
    }
}

}  // namespace bcast_bench
