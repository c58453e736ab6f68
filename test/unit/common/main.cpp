// main.cpp - GoogleTest entry point for the libllc unit tests.
#include <gtest/gtest.h>
#include <signal.h>

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_DFL); // the library must cope without the caller ignoring SIGPIPE
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
