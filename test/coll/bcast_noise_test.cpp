// The noise estimators of a process's broadcast waits (bcast/noise.hpp):
// dev = weighted average of |sample - value|, diff = of |sample - previous
// sample| / sqrt(2), robust = the larger of a window median of the latter
// and the value's lag behind the median of the last 3 samples.  The optimizer's gate counts a gap only when it exceeds
// Params::noise_z times the noise; here one process against a noiseless one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "bcast/bcast.hpp"

using namespace llc::coll::bcast;

namespace {

Params with(NoiseMode m)
{
    Params p;  // weight_i = 2, noise_weight_i = 2, noise_z = 2
    p.noise_mode = m;
    return p;
}

// would the gate let a gap of (value - base) through?
bool significant(const Profile &f, double base, const Params &p)
{
    return f.value() - base >= p.noise_z * f.noise();
}

// steady `base` for 20 samples, then steady `level`: samples at the new level
// until the gap stands out against the noise (cap: 30)
int samples_until_significant(NoiseMode m, double base, double level, double *noise_after3)
{
    Params p = with(m);
    Profile f(p);
    for (int k = 0; k < 20; k++)
        f.sample(base);
    for (int k = 1; k <= 30; k++) {
        f.sample(level);
        if (k == 3 && noise_after3)
            *noise_after3 = f.noise();
        if (significant(f, base, p))
            return k;
    }
    return 31;
}

}  // namespace

// A step to a new steady level: |sample - value| stays large while the
// value catches up, |sample - previous| counts the step once.
TEST(BcastNoise, StepToSteadyLevelLowWithDiffHighWithDev)
{
    const double base = 100e-6, level = 4.1e-3, step = level - base;
    double n_diff = 0, n_dev = 0;
    const int k_diff = samples_until_significant(NoiseMode::diff, base, level, &n_diff);
    const int k_dev = samples_until_significant(NoiseMode::dev, base, level, &n_dev);
    EXPECT_LE(k_diff, 2);
    EXPECT_GE(k_dev, 6);
    EXPECT_LT(n_diff, 0.11 * step);  // (1/sqrt 2) (1/4) (3/4)^2 = 0.099
    EXPECT_GT(n_dev, 0.4 * step);    // 0.42
}

// The case of the MPI runs: the very first sample is 0, then the process
// waits for a busy neighbour every time.  The first deviation replaces the
// "unknown" of the first sample with both estimators, then only diff decays.
TEST(BcastNoise, FirstSampleZeroThenSteadyWait)
{
    auto broadcasts = [](NoiseMode m) {
        Params p = with(m);
        Profile f(p);
        f.sample(0.0);
        for (int k = 1; k <= 30; k++) {
            f.sample(4e-3);
            if (significant(f, 0.0, p))
                return k;
        }
        return 31;
    };
    EXPECT_LE(broadcasts(NoiseMode::diff), 4);
    EXPECT_GE(broadcasts(NoiseMode::dev), 8);
}

// A step down (the neighbour's load went away) settles just as fast.
TEST(BcastNoise, StepDownSettles)
{
    Params p = with(NoiseMode::diff);
    Profile f(p);
    for (int k = 0; k < 20; k++)
        f.sample(4e-3);
    for (int k = 0; k < 3; k++)
        f.sample(100e-6);
    EXPECT_LT(f.noise(), 0.11 * 3.9e-3);
}

// Alternating waits are noise for every estimator, diff sees the full swing:
// a process that waits 0 and 2 ms in turn never stands out.
TEST(BcastNoise, AlternatingWaitsHighNoise)
{
    for (NoiseMode m : {NoiseMode::dev, NoiseMode::diff, NoiseMode::robust}) {
        Params p = with(m);
        Profile f(p);
        for (int k = 0; k < 40; k++) {
            f.sample(k % 2 ? 2e-3 : 0.0);
            if (k >= 2) {
                EXPECT_FALSE(significant(f, 0.0, p)) << "mode " << int(m) << " sample " << k;
            }
        }
        EXPECT_GT(f.noise(), m == NoiseMode::dev ? 0.7e-3 : 1.3e-3) << "mode " << int(m);
    }
}

// Independent jitter (uniform 0..1 ms): every estimator gives about the mean
// absolute deviation, 0.25 ms, so LLC_BCAST_NOISE_Z means the same for all
// (robust: 0.2-0.35, its window median scatters more).
TEST(BcastNoise, JitterSameScaleForBothEstimators)
{
    for (NoiseMode m : {NoiseMode::dev, NoiseMode::diff, NoiseMode::robust}) {
        Params p = with(m);
        Profile f(p);
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> u(0.0, 1e-3);
        double sum = 0;
        for (int k = 0; k < 2000; k++) {
            f.sample(u(rng));
            if (k >= 1000)
                sum += f.noise();
        }
        const double mean = sum / 1000;
        EXPECT_GT(mean, 0.2e-3) << "mode " << int(m);
        EXPECT_LT(mean, m == NoiseMode::robust ? 0.35e-3 : 0.3e-3) << "mode " << int(m);
    }
}

// A one-off 10 ms hiccup raises the value; with diff the up and the down
// difference keep the gap within the gate at every later sample.
TEST(BcastNoise, HiccupNeverSignificantWithDiff)
{
    Params p = with(NoiseMode::diff);
    Profile f(p);
    const double base = 100e-6;
    for (int k = 0; k < 40; k++)
        f.sample(base);
    f.sample(10e-3);
    EXPECT_FALSE(significant(f, base, p));
    for (int k = 0; k < 30; k++) {
        f.sample(base);
        EXPECT_FALSE(significant(f, base, p)) << "after " << k << " steady samples";
    }
}

// A move restarts the value; the noise is kept and the jump to the new
// position's level is no difference.
TEST(BcastNoise, MoveKeepsNoiseNoDifferenceAcrossIt)
{
    Params p = with(NoiseMode::diff);
    Profile f(p);
    for (int k = 0; k < 3; k++)
        f.sample(k % 2 ? 1e-3 : 0.0);
    const double before = f.noise();
    ASSERT_GT(before, 0.0);
    f.reset_history();
    f.sample(3e-3);
    EXPECT_DOUBLE_EQ(f.noise(), before);
    f.sample(3e-3);
    EXPECT_DOUBLE_EQ(f.noise(), 0.75 * before);
}

// robust: a step stands out after about 4 samples at the new level (dev
// needs 6 or more, diff 2), also when the very first sample was 0.
TEST(BcastNoise, RobustStepStandsOutAfterFourSamples)
{
    const int k = samples_until_significant(NoiseMode::robust, 100e-6, 4.1e-3, nullptr);
    EXPECT_GE(k, 3);
    EXPECT_LE(k, 5);
    Params p = with(NoiseMode::robust);
    Profile f(p);
    f.sample(0.0);
    int n = 0;
    while (n < 30 && !significant(f, 0.0, p)) {
        f.sample(4e-3);
        n++;
    }
    EXPECT_LE(n, 5);
}

// robust: one or two slow samples in a row (where diff fails) never make a
// gap that passes the gate, neither at the hiccup nor after it.
TEST(BcastNoise, RobustHiccupsNeverSignificant)
{
    for (int len : {1, 2}) {
        Params p = with(NoiseMode::robust);
        Profile f(p);
        const double base = 100e-6;
        for (int k = 0; k < 40; k++)
            f.sample(base);
        for (int k = 0; k < len; k++) {
            f.sample(10e-3);
            EXPECT_FALSE(significant(f, base, p)) << len << " slow, at slow sample " << k;
        }
        for (int k = 0; k < 30; k++) {
            f.sample(base);
            EXPECT_FALSE(significant(f, base, p)) << len << " slow, after " << k << " steady samples";
        }
    }
    // the same two slow samples are a step for diff: the gate passes
    Params p = with(NoiseMode::diff);
    Profile f(p);
    for (int k = 0; k < 40; k++)
        f.sample(100e-6);
    bool passed = false;
    for (int k = 0; k < 2; k++) {
        f.sample(10e-3);
        passed = passed || significant(f, 100e-6, p);
    }
    EXPECT_TRUE(passed);
}

// robust: steady waits with small jitter after a step have a small noise
// (the step itself is out of the window's median) and a move restarts the
// lag term but keeps the differences.
TEST(BcastNoise, RobustNoiseSmallOnSteadyLevelAfterStep)
{
    Params p = with(NoiseMode::robust);
    Profile f(p);
    for (int k = 0; k < 10; k++)
        f.sample(0.0);
    for (int k = 0; k < 12; k++)
        f.sample(k % 2 ? 4.0e-3 : 4.1e-3);
    EXPECT_LT(f.noise(), 0.1e-3);
    f.reset_history();
    f.sample(0.0);  // new position: no difference, no lag
    EXPECT_LT(f.noise(), 0.1e-3);
}

TEST(BcastNoise, EnvironmentSelectsEstimator)
{
    unsetenv("LLC_BCAST_NOISE");
    const NoiseMode def = Params::from_env().noise_mode;
    setenv("LLC_BCAST_NOISE", "diff", 1);
    EXPECT_EQ(Params::from_env().noise_mode, NoiseMode::diff);
    setenv("LLC_BCAST_NOISE", "robust", 1);
    EXPECT_EQ(Params::from_env().noise_mode, NoiseMode::robust);
    setenv("LLC_BCAST_NOISE", "dev", 1);
    EXPECT_EQ(Params::from_env().noise_mode, NoiseMode::dev);
    setenv("LLC_BCAST_NOISE", "median", 1);  // unknown: the default stays
    EXPECT_EQ(Params::from_env().noise_mode, def);
    unsetenv("LLC_BCAST_NOISE");
}
