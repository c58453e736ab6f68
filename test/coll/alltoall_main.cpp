// GoogleTest main of the Alltoall tests: never touch the user's model cache
// or decision cache.
#include <gtest/gtest.h>

#include <cstdlib>

int main(int argc, char **argv)
{
    setenv("LLC_MODEL_CACHE", "off", 1);
    setenv("LLC_ALLTOALL_DECISIONS", "off", 1);
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
