// harness_test.cpp - the fork harness itself reports failing and hanging children.
#include "common/test_util.hpp"

#include <unistd.h>

using namespace llctest;

TEST(Harness, ReportsChildExitStatusAndTimeout)
{
    auto failures = run_job(job({0, 0}, 1), [](TestProcess &p) {
        if (p.rank == 0)
            _exit(3);
        pause(); // rank 1 hangs: alarm() must kill it
    });
    ASSERT_EQ(failures.size(), 2u);
    EXPECT_NE(failures[0].find("exit status 3"), std::string::npos) << failures[0];
    EXPECT_NE(failures[1].find("SIGALRM"), std::string::npos) << failures[1];
}

TEST(Harness, BootstrapPutGetFence)
{
    LLC_EXPECT_JOB_OK(job({0, 0, 0}), [](TestProcess &p) {
        std::string v = "value-" + std::to_string(p.rank);
        ASSERT_EQ(TestProcess::put(&p, "k", v.data(), v.size()), 0);
        ASSERT_EQ(TestProcess::fence(&p), 0);
        for (int r = 0; r < p.size; r++) {
            char buf[64];
            size_t len = sizeof(buf);
            ASSERT_EQ(TestProcess::get(&p, r, "k", buf, &len), 0);
            EXPECT_EQ(std::string(buf, len), "value-" + std::to_string(r));
        }
        ASSERT_EQ(TestProcess::fence(&p), 0);
    });
}
