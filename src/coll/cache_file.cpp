// Cache files of src/coll (see cache_file.hpp).
#include "cache_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

namespace llc::coll {

std::string default_cache_file(const char *name)
{
    std::string dir;
    if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
        dir = x;
    else if (const char *h = std::getenv("HOME"); h && *h)
        dir = std::string(h) + "/.cache";
    else
        return std::string();
    return dir + "/mpich-llc/" + name;
}

bool replace_cache_line(const std::string &path, const std::function<bool(const std::string &)> &same_key,
                        const std::string &line)
{
    if (path.empty())
        return false;
    for (size_t i = 1; i < path.size(); i++) // mkdir -p of the directory part
        if (path[i] == '/')
            mkdir(path.substr(0, i).c_str(), 0755);
    std::vector<std::string> keep;
    {
        std::ifstream in(path);
        std::string l;
        while (std::getline(in, l))
            if (!l.empty() && !same_key(l))
                keep.push_back(l);
    }
    const std::string tmp = path + ".tmp." + std::to_string(getpid());
    {
        std::ofstream out(tmp);
        if (!out)
            return false;
        for (const std::string &l : keep)
            out << l << '\n';
        out << line << '\n';
        if (!out) {
            std::remove(tmp.c_str());
            return false;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        return false;
    }
    return true;
}

} // namespace llc::coll
