// Model parameters: LogPQ relations, environment, cache file, ping-pong.
#include "model/params.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "cache_file.hpp"
#include "coll_settings.hpp"
#include "model/p2p_ops.hpp"

namespace llc::coll::model {

const char *kind_name(Kind k)
{
    switch (k) {
    case Kind::loggp:
        return "loggp";
    case Kind::logpq:
        return "logpq";
    default:
        return "hockney";
    }
}

bool kind_from_name(const std::string &s, Kind *out)
{
    for (Kind k : {Kind::hockney, Kind::loggp, Kind::logpq})
        if (s == kind_name(k)) {
            *out = k;
            return true;
        }
    return false;
}

LogPQ logpq_from_words(double L0, double o0, double g0, double r, double n)
{
    return LogPQ{L0 + o0 + (r - 1) * g0, o0 + (r - 1) * g0, r * g0, n};
}

LogPQ logpq_from_logp(double Lstar, double ostar, double gstar, double m, double n)
{
    return LogPQ{Lstar + ostar, (ostar - n) / m, gstar / m, n};
}

LogPQ logpq(const Params &p) { return logpq_from_words(p.L0, p.o0, p.g0, p.r, p.n); }

void derive(Params *p)
{
    p->Lw = std::max(p->L - 2 * p->o, 0.0);
    p->G = p->B;
    p->L0 = p->Lw;
    p->o0 = p->o;
    p->g0 = p->B * p->w;
    p->n = p->o;
}

namespace {

// Field order of the broadcast.
std::vector<double *> fields(Params *p)
{
    return {&p->L, &p->B, &p->Lw, &p->o, &p->g, &p->G, &p->L0, &p->o0,
            &p->g0, &p->r, &p->w, &p->n, &p->SQ, &p->TQ, &p->RQ, &p->C};
}

const char *const kSources[] = {"default", "cache", "measured", "env"};

}  // namespace

bool apply_env(Params *p)
{
    bool l = read_setting(SettingId::LLC_MODEL_L, p->L);
    bool b = read_setting(SettingId::LLC_MODEL_B, p->B);
    read_setting(SettingId::LLC_MODEL_LW, p->Lw);
    read_setting(SettingId::LLC_MODEL_O, p->o);
    read_setting(SettingId::LLC_MODEL_GAP, p->g);
    read_setting(SettingId::LLC_MODEL_GBYTE, p->G);
    read_setting(SettingId::LLC_MODEL_L0, p->L0);
    read_setting(SettingId::LLC_MODEL_O0, p->o0);
    read_setting(SettingId::LLC_MODEL_G0, p->g0);
    read_setting(SettingId::LLC_MODEL_R, p->r);
    read_setting(SettingId::LLC_MODEL_W, p->w);
    read_setting(SettingId::LLC_MODEL_N, p->n);
    read_setting(SettingId::LLC_MODEL_SQ, p->SQ);
    read_setting(SettingId::LLC_MODEL_TQ, p->TQ);
    read_setting(SettingId::LLC_MODEL_RQ, p->RQ);
    read_setting(SettingId::LLC_MODEL_C, p->C);
    return l && b;
}

std::string cache_path()
{
    if (const char *e = setting_text(SettingId::LLC_MODEL_CACHE))
        return std::string(e) == "off" ? std::string() : std::string(e);
    return default_cache_file("model-params");
}

std::string host_name()
{
    char buf[256] = {0};
    if (gethostname(buf, sizeof buf - 1) != 0)
        return "unknown";
    return buf;
}

bool cache_load(const std::string &path, const std::string &host, Params *p)
{
    if (path.empty())
        return false;
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        std::string h, kv;
        if (!(ls >> h) || h != host)
            continue;
        Params q = *p;
        int got = 0;
        while (ls >> kv) {
            auto eq = kv.find('=');
            if (eq == std::string::npos)
                continue;
            std::string k = kv.substr(0, eq);
            double v = std::strtod(kv.c_str() + eq + 1, nullptr);
            if (k == "L")
                q.L = v, got |= 1;
            else if (k == "B")
                q.B = v, got |= 2;
            else if (k == "o")
                q.o = v;
            else if (k == "g")
                q.g = v;
            else if (k == "C")
                q.C = v, got |= 4;
        }
        if (got == 7) {
            *p = q;
            return true;
        }
    }
    return false;
}

bool cache_store(const std::string &path, const std::string &host, const Params &p)
{
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s L=%.6g B=%.6g o=%.6g g=%.6g C=%.6g", host.c_str(), p.L, p.B, p.o, p.g, p.C);
    return replace_cache_line(
        path,
        [&](const std::string &line) {
            std::istringstream ls(line);
            std::string h;
            return (ls >> h) && h == host;
        },
        buf);
}

int measure(const llc_coll_p2p_t *p2p, int peer, Params *out)
{
    const bool root = p2p->rank == 0;
    const int other = root ? peer : 0;
    const int tag = kTagPing;
    constexpr int kSmall = 20, kBig = 4, kBurst = 10;
    constexpr size_t kBigBytes = 256 * 1024;
    std::vector<char> big(kBigBytes);
    char one = 0;
    int rc = 0;
    auto ping = [&](void *buf, size_t n) {
        if (root) {
            if ((rc = p2p->send(p2p->arg, buf, n, other, tag)))
                return;
            rc = p2p->recv(p2p->arg, buf, n, other, tag);
        } else {
            if ((rc = p2p->recv(p2p->arg, buf, n, other, tag)))
                return;
            rc = p2p->send(p2p->arg, buf, n, other, tag);
        }
    };
    // minimum over the round trips: robust against a loaded machine
    auto min_half_rtt = [&](void *buf, size_t n, int reps) {
        double best = 1e30;
        for (int i = 0; i < reps && !rc; i++) {
            double t = p2p->wtime(p2p->arg);
            ping(buf, n);
            best = std::min(best, (p2p->wtime(p2p->arg) - t) / 2);
        }
        return best;
    };
    min_half_rtt(&one, 1, 3);  // warm-up
    double L = min_half_rtt(&one, 1, kSmall);
    double tb = min_half_rtt(big.data(), kBigBytes, kBig);
    double B = tb > L ? (tb - L) / kBigBytes : tb / kBigBytes;
    // o: time to post a 1-byte send; g: spacing of a burst of 1-byte sends.
    double o = 0;
    for (int i = 0; i < kBurst && !rc; i++) {
        if (root) {
            void *req;
            double t = p2p->wtime(p2p->arg);
            if ((rc = p2p->isend(p2p->arg, &one, 1, other, tag, &req)))
                break;
            o += p2p->wtime(p2p->arg) - t;
            rc = p2p->waitall(p2p->arg, 1, &req);
        } else {
            rc = p2p->recv(p2p->arg, &one, 1, other, tag);
        }
    }
    o /= kBurst;
    double t0 = p2p->wtime(p2p->arg);
    for (int i = 0; i < kBurst && !rc; i++)
        rc = root ? p2p->send(p2p->arg, &one, 1, other, tag)
                  : p2p->recv(p2p->arg, &one, 1, other, tag);
    if (!rc)
        rc = root ? p2p->recv(p2p->arg, &one, 0, other, tag)
                  : p2p->send(p2p->arg, &one, 0, other, tag);
    double g = (p2p->wtime(p2p->arg) - t0 - 2 * L) / kBurst;
    if (rc)
        return rc;
    // C: the best of a few copies between two buffers touched before (an
    // algorithm's steady state, not its first call), larger than the caches
    // are (a copy of 256 KiB stays in them: 10x too fast for Bruck's 8 MiB of
    // blocks at 1 MiB per rank and 8 ranks)
    double C = 0;
    if (root) {
        constexpr size_t kCopyBytes = 8 << 20;
        std::vector<char> from(kCopyBytes, 1), to(kCopyBytes, 0);
        double best = 1e30;
        for (int i = 0; i < 3; i++) {
            double t = p2p->wtime(p2p->arg);
            std::memcpy(to.data(), from.data(), kCopyBytes);
            best = std::min(best, p2p->wtime(p2p->arg) - t);
            from[i] = to[kCopyBytes - 1 - i];  // keep the copies from being merged
        }
        C = best / kCopyBytes;
    }
    out->C = std::max(C, 1e-13);
    out->L = std::max(L, 1e-9);
    out->B = std::max(B, 1e-13);
    out->o = std::max(o, 1e-9);
    out->g = std::max(g, out->o);
    out->source = "measured";
    return 0;
}

int acquire(const llc_coll_p2p_t *p2p, Params *out)
{
    Params p;
    double need = 0;  // decided by rank 0
    if (p2p->rank == 0) {
        if (apply_env(&p)) {
            p.source = "env";
        } else if (cache_load(cache_path(), host_name(), &p)) {
            p.source = "cache";
        } else if (p2p->size > 1) {
            need = 1;
        }
    }
    int rc = bcast_bytes(p2p, &need, sizeof need, kTagParams);
    if (rc)
        return rc;
    if (need != 0 && (p2p->rank == 0 || p2p->rank == p2p->size - 1)) {
        if ((rc = measure(p2p, p2p->size - 1, &p)))
            return rc;
        if (p2p->rank == 0)
            cache_store(cache_path(), host_name(), p);
    }
    std::vector<double> v;
    if (p2p->rank == 0) {
        std::string src = p.source;
        derive(&p);
        apply_env(&p);
        for (double *f : fields(&p))
            v.push_back(*f);
        double code = 0;
        for (int i = 0; i < 4; i++)
            if (src == kSources[i])
                code = i;
        v.push_back(code);
    } else {
        v.assign(fields(&p).size() + 1, 0.0);
    }
    if ((rc = bcast_bytes(p2p, v.data(), v.size() * sizeof(double), kTagParams)))
        return rc;
    auto f = fields(&p);
    for (size_t i = 0; i < f.size(); i++)
        *f[i] = v[i];
    p.source = kSources[std::clamp(static_cast<int>(v.back()), 0, 3)];
    *out = p;
    return 0;
}

}  // namespace llc::coll::model
