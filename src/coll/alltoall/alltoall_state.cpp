// Dynamic Alltoall: configuration, pruning by the performance models at the
// first call of a size class, STAR-MPI style learning / monitoring, and the
// C entry points llc_coll_alltoall / llc_coll_set_topology.
#include "alltoall/alltoall_state.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "coll_settings.hpp"
#include "model/alltoall_model.hpp"
#include "model/p2p_ops.hpp"

namespace llc::coll {

void AlltoallStateDeleter::operator()(AlltoallState *s) const { delete s; }

// llc_coll_alltoall_learning totals (process-wide; atomic: with
// MPI_THREAD_MULTIPLE, or the unit tests' thread-per-rank network, several
// communicators' calls count at the same time)
namespace {
std::atomic<double> g_learn_seconds{0};
std::atomic<long> g_learn_calls{0}, g_learn_phases{0};

void add_seconds(double dt)
{
    double cur = g_learn_seconds.load(std::memory_order_relaxed);
    while (!g_learn_seconds.compare_exchange_weak(cur, cur + dt, std::memory_order_relaxed))
        ;
}
}  // namespace

namespace alltoall {

Config config_from_env()
{
    Config c;
    if (auto v = setting_value(SettingId::LLC_ALLTOALL)) {
        Alg a;
        if (v->text == "mpich")
            c.mode = Config::Mode::mpich;
        else if (v->text == "auto")
            c.mode = Config::Mode::automatic;
        else if (alg_from_name(v->text, &a))
            c.mode = Config::Mode::forced, c.forced = a;
    }
    read_setting(SettingId::LLC_ALLTOALL_PRUNE, c.prune);
    if (read_setting(SettingId::LLC_ALLTOALL_WARMUP, c.tuner.warmup))
        c.tuner.warmup = std::max(0, c.tuner.warmup);
    if (read_setting(SettingId::LLC_ALLTOALL_SETTLE, c.tuner.settle))
        c.tuner.settle = std::max(0, c.tuner.settle);
    if (read_setting(SettingId::LLC_ALLTOALL_TRIALS, c.tuner.trials))
        c.tuner.trials = std::max(1, c.tuner.trials);
    if (read_setting(SettingId::LLC_ALLTOALL_MONITOR_PERIOD, c.tuner.period))
        c.tuner.period = std::max(0, c.tuner.period);
    read_setting(SettingId::LLC_ALLTOALL_RELEARN, c.tuner.relearn);
    if (read_setting(SettingId::LLC_ALLTOALL_CUTOFF, c.tuner.cutoff))
        c.tuner.cutoff = std::max(0.0, c.tuner.cutoff);
    if (read_setting(SettingId::LLC_ALLTOALL_RACE, c.tuner.race))
        c.tuner.race = std::max(0.0, c.tuner.race);
    if (read_setting(SettingId::LLC_ALLTOALL_CHALLENGE_CALLS, c.tuner.challenge_calls))
        c.tuner.challenge_calls = std::max(0, c.tuner.challenge_calls);
    if (read_setting(SettingId::LLC_ALLTOALL_CHALLENGE, c.tuner.challenge))
        c.tuner.challenge = std::max(0.0, c.tuner.challenge);
    if (read_setting(SettingId::LLC_ALLTOALL_MODEL_STOP, c.tuner.model_stop))
        c.tuner.model_stop = std::max(0.0, c.tuner.model_stop);
    if (auto v = setting_value(SettingId::LLC_ALLTOALL_MODEL))
        model::kind_from_name(v->text, &c.model);
    if (auto v = setting_value(SettingId::LLC_ALLTOALL_BS))
        c.bs = v->text == "process" ? model::BsVariant::process : model::BsVariant::paper;
    if (auto v = setting_value(SettingId::LLC_ALLTOALL_MODEL_SHARING))
        model::sharing_mode_from_name(v->text, &c.sharing);
    read_setting(SettingId::LLC_ALLTOALL_VERBOSE, c.verbose);
    read_setting(SettingId::LLC_ALLTOALL_NATIVE, c.native);
    c.decisions = decision_cache_path();
    return c;
}

}  // namespace alltoall

AlltoallState *alltoall_state(llc_coll_state_t *s)
{
    if (!s->alltoall) {
        s->alltoall.reset(new AlltoallState);
        s->alltoall->cfg = alltoall::config_from_env();
    }
    return s->alltoall.get();
}

int alltoall_size_class(size_t bytes)
{
    int c = 0;
    while (bytes >>= 1)
        c++;
    return c;
}

namespace {

using alltoall::Alg;

void set_topology(llc_coll_state_t *s, AlltoallState *a, const int *node_of_rank,
                  const model::Fabric &f)
{
    a->node_of_rank.resize(s->size);
    for (int r = 0; r < s->size; r++)
        a->node_of_rank[r] = node_of_rank ? node_of_rank[r] : r;
    // LLC_COLL_NODES="n0,n1,...": the fabric node number of every rank of
    // communicators of exactly that size (emulated clusters, where the MPI
    // cannot tell the fabric's numbering; bench/alltoall/placement.sh).
    if (const char *e = setting_text(SettingId::LLC_COLL_NODES)) {
        std::vector<int> v;
        for (const char *q = e; *q;) {
            char *end;
            long n = std::strtol(q, &end, 10);
            if (end == q)
                break;
            v.push_back(static_cast<int>(n));
            q = *end == ',' ? end + 1 : end;
        }
        if (static_cast<int>(v.size()) == s->size)
            a->node_of_rank = v;
    }
    a->fabric = f;
    a->analysis = model::analyze(a->fabric, a->node_of_rank, a->cfg.bs);
    a->have_topology = true;
}

int load_fabric_or_flat(const char *file, model::Fabric *f)
{
    if (!file)
        file = setting_text(SettingId::LLC_COLL_FABRIC);
    if (!file)
        return 0;
    std::string err;
    if (model::load_fabric(file, f, &err))
        return 0;
    std::fprintf(stderr, "llc_coll: fabric %s: %s (using one switch)\n", file, err.c_str());
    *f = model::Fabric();
    return LLC_COLL_ERR_ARG;
}

// First call of a size class: predictions, pruning, a fresh tuner.
int new_size_class(llc_coll_state_t *s, AlltoallState *a, const llc_coll_p2p_t *p2p,
                   size_t bytes, alltoall::SizeClass *out)
{
    std::vector<Alg> cand;
    if (a->cfg.prune > 0) {
        if (!a->have_params) {
            int rc = model::acquire(p2p, &a->params);
            if (rc)
                return rc;
            a->have_params = true;
        }
        if (!a->have_topology) {
            model::Fabric f;
            load_fabric_or_flat(nullptr, &f);
            set_topology(s, a, nullptr, f);
        }
        if (a->cfg.sharing == model::SharingMode::steps)
            out->predicted = model::predict_alltoall_all_steps(a->cfg.model, a->fabric,
                                                               a->node_of_rank, double(bytes),
                                                               a->params);
        else
            out->predicted = model::predict_alltoall_all(a->cfg.model, s->size, double(bytes),
                                                         a->params, a->analysis.sharing);
        cand = model::prune(out->predicted, a->cfg.prune);
        // learn the predicted fastest first: it sets the bar of the cutoff
        std::stable_sort(cand.begin(), cand.end(), [&](Alg x, Alg y) {
            return out->predicted[static_cast<int>(x)] < out->predicted[static_cast<int>(y)];
        });
    } else {
        for (int i = 0; i < alltoall::kNumAlgs; i++)
            cand.push_back(static_cast<Alg>(i));
    }
    // The MPI's own Alltoall has no model: it is never pruned, and it is
    // learned like the others (the same on every rank: same caller, same env).
    // It goes first: it is the MPI's choice for this size, a good bar.
    if (a->cfg.native && p2p->native_alltoall)
        cand.insert(cand.begin(), Alg::native);
    out->first_bytes = bytes;
    std::vector<double> pred;  // in candidate order; the MPI's own has none
    if (!out->predicted.empty())
        for (Alg c : cand)
            pred.push_back(c == Alg::native ? 0.0 : out->predicted[static_cast<int>(c)]);
    out->tuner = alltoall::Tuner(cand, a->cfg.tuner, pred);
    if (out->tuner.phase() == alltoall::Tuner::Phase::learning) {
        // What an earlier run of this shape learned (decision_cache.hpp):
        // rank 0 looks (and alone keeps the key: it alone writes the file),
        // every rank takes its answer, so all start alike.
        // [candidate index (-1: none), learned seconds, race time and time
        // in a row of every candidate (0: unknown)]
        const size_t n = cand.size();
        std::vector<double> found(2 + 2 * n, 0.0);
        found[0] = -1;
        if (s->rank == 0) {
            out->key = alltoall::DecisionKey::of_job(model::host_name(), s->size, a->node_of_rank,
                                                     alltoall_size_class(bytes), cand);
            alltoall::Decision d;
            if (alltoall::load_decision(a->cfg.decisions, out->key, &d)) {
                found[0] = static_cast<double>(std::find(cand.begin(), cand.end(), d.alg) - cand.begin());
                found[1] = d.learned;
                if (d.race.size() == n && d.steady.size() == n) {
                    std::copy(d.race.begin(), d.race.end(), found.begin() + 2);
                    std::copy(d.steady.begin(), d.steady.end(), found.begin() + 2 + static_cast<std::ptrdiff_t>(n));
                }
            }
        }
        int rc = model::bcast_bytes(p2p, found.data(), found.size() * sizeof(double), model::kTagDecisions);
        if (rc)
            return rc;
        if (found[0] >= 0 && found[0] < static_cast<double>(n)) {
            const auto race = found.begin() + 2, steady = race + static_cast<std::ptrdiff_t>(n);
            out->resumed =
                out->tuner.resume(cand[static_cast<size_t>(found[0])], found[1], std::vector<double>(race, steady),
                                  std::vector<double>(steady, found.end()));
        }
    }
    if (a->cfg.verbose && s->rank == 0) {
        if (out->predicted.empty())
            std::fprintf(stderr, "llc_coll alltoall: P=%d bytes=%zu class=%d no pruning; candidates:",
                         s->size, bytes, alltoall_size_class(bytes));
        else
            std::fprintf(stderr,
                         "llc_coll alltoall: P=%d bytes=%zu class=%d model=%s params=%s "
                         "(L=%.3g B=%.3g C=%.3g) sharing=%s (paper factor %.3f) candidates:",
                         s->size, bytes, alltoall_size_class(bytes), model::kind_name(a->cfg.model),
                         a->params.source.c_str(), a->params.L, a->params.B, a->params.C,
                         model::sharing_mode_name(a->cfg.sharing), a->analysis.sharing);
        for (Alg c : cand) {
            std::fprintf(stderr, " %s", alltoall::alg_name(c));
            if (!out->predicted.empty() && c != Alg::native)
                std::fprintf(stderr, "(%.3gs)", out->predicted[static_cast<int>(c)]);
        }
        std::fprintf(stderr, "\n");
        if (out->resumed)
            std::fprintf(stderr, "llc_coll alltoall: class %d %s learned %.3gs in an earlier run (%s): monitoring it\n",
                         alltoall_size_class(bytes), alltoall::alg_name(out->tuner.chosen()), out->tuner.learned_time(),
                         a->cfg.decisions.c_str());
    }
    return 0;
}

// One algorithm call with the state's scratch memory, which is freed as soon
// as a call runs an algorithm that does not use it.
int run_alg(AlltoallState *a, Alg alg, const llc_coll_p2p_t *p2p, const void *sendbuf,
            void *recvbuf, size_t bytes)
{
    if (alg != Alg::bruck)
        a->alg_scratch.release();
    return alltoall::run(alg, p2p, sendbuf, recvbuf, bytes, &a->alg_scratch);
}

}  // namespace
}  // namespace llc::coll

using namespace llc::coll;

extern "C" void llc_coll_alltoall_learning(double *seconds, long *calls, long *phases)
{
    if (seconds)
        *seconds = g_learn_seconds.load();
    if (calls)
        *calls = g_learn_calls.load();
    if (phases)
        *phases = g_learn_phases.load();
}

extern "C" int llc_coll_set_topology(llc_coll_state_t *state, const int *node_of_rank,
                                     const char *fabric_file)
{
    if (!state)
        return LLC_COLL_ERR_ARG;
    AlltoallState *a = alltoall_state(state);
    model::Fabric f;
    int rc = load_fabric_or_flat(fabric_file, &f);
    set_topology(state, a, node_of_rank, f);
    return rc;
}

extern "C" int llc_coll_alltoall(llc_coll_state_t *state, const llc_coll_p2p_t *p2p,
                                 const void *sendbuf, void *recvbuf, size_t bytes)
{
    if (!state || !p2p)
        return LLC_COLL_ERR_ARG;
    AlltoallState *a = alltoall_state(state);
    if (a->cfg.mode == alltoall::Config::Mode::mpich)
        return LLC_COLL_DECLINED;
    if (p2p->size != state->size || p2p->rank != state->rank || !recvbuf ||
        (!sendbuf && bytes))
        return LLC_COLL_ERR_ARG;
    a->calls++;
    if (bytes == 0)
        return 0;
    const size_t total = bytes * p2p->size;
    if (sendbuf == recvbuf) {  // in place: run from a copy of the send data
        char *copy = a->in_place_copy.get(total);
        std::memcpy(copy, recvbuf, total);
        sendbuf = copy;
    } else {
        a->in_place_copy.release();
    }
    if (a->cfg.mode == alltoall::Config::Mode::forced || p2p->size == 1)
        return run_alg(a, a->cfg.forced, p2p, sendbuf, recvbuf, bytes);

    const int cls = alltoall_size_class(bytes);
    auto it = a->classes.find(cls);
    if (it == a->classes.end()) {
        alltoall::SizeClass sc{0, {}, alltoall::Tuner({}, a->cfg.tuner), {}, false};
        int rc = new_size_class(state, a, p2p, bytes, &sc);
        if (rc)
            return rc;
        it = a->classes.emplace(cls, std::move(sc)).first;
    }
    alltoall::Tuner &t = it->second.tuner;
    const Alg alg = t.current();
    const bool in_learning = t.phase() == alltoall::Tuner::Phase::learning;
    double t0 = p2p->wtime(p2p->arg);
    // An error of the algorithm itself (e.g. MPI_ERR_TRUNCATE: the processes
    // passed different counts) is returned after the tuner's bookkeeping,
    // which every process does in step (its decisions are collective).
    const int alg_rc = run_alg(a, alg, p2p, sendbuf, recvbuf, bytes);
    int rc = 0;
    struct LearnClock {  // counts the call (and its decision) if it was a learning call
        bool on;
        double t0;
        const llc_coll_p2p_t *p;
        ~LearnClock()
        {
            if (on) {
                add_seconds(p->wtime(p->arg) - t0);
                g_learn_calls.fetch_add(1, std::memory_order_relaxed);
            }
        }
    } learn_clock{in_learning, t0, p2p};
    if (t.record(p2p->wtime(p2p->arg) - t0)) {
        const bool was_learning = t.phase() == alltoall::Tuner::Phase::learning;
        const Alg tried = t.current();
        const int skipped = t.skipped();
        const int model_skipped = t.model_skipped();
        const int raced_out = t.raced_out();
        const int challenges = t.challenges();
        const Alg challenger = t.current(), before = t.chosen();
        std::vector<double> d;
        const int nprocs = p2p->size;
        rc = model::agree(
            p2p, t.summary(), t.decision_len(),
            [&](const std::vector<double> &sum) { return t.decide(sum, nprocs); }, &d);
        if (rc)
            return alg_rc ? alg_rc : rc;
        t.apply(d);
        // a learning decision either ends the round or is a cutoff check
        const bool learning = was_learning && t.phase() == alltoall::Tuner::Phase::monitoring;
        const bool challenge_over = t.challenges() != challenges;
        if (learning)
            g_learn_phases.fetch_add(1, std::memory_order_relaxed);
        // the file learns the round's result and what each challenge found
        if ((learning || challenge_over) && state->rank == 0 && !a->cfg.decisions.empty() &&
            !alltoall::store_decision(a->cfg.decisions, it->second.key,
                                      {t.chosen(), t.learned_time(), t.learned_means(), t.steady_times()}) &&
            a->cfg.verbose)
            std::fprintf(stderr, "llc_coll alltoall: could not write the decision cache %s\n",
                         a->cfg.decisions.c_str());
        if (a->cfg.verbose && state->rank == 0 && challenge_over) {
            const auto &c = t.candidates();
            const size_t b = static_cast<size_t>(std::find(c.begin(), c.end(), before) - c.begin());
            std::fprintf(stderr, "llc_coll alltoall: class %d challenge: %s %.3gs in a row against %s %.3gs -> %s\n",
                         cls, alltoall::alg_name(challenger), d[1], alltoall::alg_name(before),
                         b < c.size() ? t.steady_times()[b] : 0.0, alltoall::alg_name(t.chosen()));
        }
        if (a->cfg.verbose && state->rank == 0 && t.skipped() != skipped)
            std::fprintf(
                stderr,
                "llc_coll alltoall: class %d %d candidate(s) cut off after one counted call "
                "(last tried: %s, %.3gs)\n",
                cls, t.skipped() - skipped, alltoall::alg_name(tried),
                d[3 + (std::find(t.candidates().begin(), t.candidates().end(), tried) - t.candidates().begin())]);
        if (a->cfg.verbose && state->rank == 0 && t.raced_out() != raced_out)
            std::fprintf(stderr, "llc_coll alltoall: class %d %d candidate(s) out of the race (LLC_ALLTOALL_RACE)\n",
                         cls, t.raced_out() - raced_out);
        if (a->cfg.verbose && state->rank == 0 && t.model_skipped() != model_skipped)
            std::fprintf(stderr,
                         "llc_coll alltoall: class %d %d candidate(s) ranked behind %s by the model "
                         "skipped untried (LLC_ALLTOALL_MODEL_STOP)\n",
                         cls, t.model_skipped() - model_skipped, alltoall::alg_name(tried));
        if (a->cfg.verbose && state->rank == 0 && (learning || !was_learning)) {
            if (learning) {
                std::fprintf(stderr, "llc_coll alltoall: class %d learned:", cls);
                for (size_t i = 0; i < t.candidates().size(); i++)
                    if (t.learned_means()[i] < 0)
                        std::fprintf(stderr, " %s=skipped", alltoall::alg_name(t.candidates()[i]));
                    else
                        std::fprintf(stderr, " %s=%.3gs", alltoall::alg_name(t.candidates()[i]),
                                     t.learned_means()[i]);
                std::fprintf(stderr, " -> %s\n", alltoall::alg_name(t.chosen()));
            } else if (!challenge_over) {
                std::fprintf(stderr, "llc_coll alltoall: class %d monitor %.3gs vs learned %.3gs%s%s\n", cls,
                             t.last_monitored(), t.learned_time(),
                             t.phase() == alltoall::Tuner::Phase::learning ? " -> re-learn"
                             : t.challenging()                             ? " -> next period challenged by "
                                                                           : "",
                             t.challenging() ? alltoall::alg_name(t.current()) : "");
            }
        }
    }
    return alg_rc;
}
