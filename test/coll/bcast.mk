## GoogleTest tests of the virtual-rank broadcast (src/coll/bcast) and the
## simulator (bench/bcast/bcast_sim).  Included from the top-level Makefile.am.
noinst_PROGRAMS += bench/bcast/bcast_sim
bench_bcast_bcast_sim_SOURCES = bench/bcast/bcast_sim.cpp bench/bcast/bench_util.hpp
bench_bcast_bcast_sim_CPPFLAGS = -I$(top_srcdir)/src/coll/include -I$(top_srcdir)/src/coll
bench_bcast_bcast_sim_LDADD = src/coll/libllccoll.la

if HAVE_GTEST
check_PROGRAMS += test/coll/llc_bcast_tests
TESTS += test/coll/llc_bcast_tests
test_coll_llc_bcast_tests_SOURCES = \
	test/coll/main.cpp \
	test/coll/thread_net.hpp \
	test/coll/thread_net.cpp \
	test/coll/bcast_tree_test.cpp \
	test/coll/bcast_optimizer_test.cpp \
	test/coll/bcast_noise_test.cpp \
	test/coll/bcast_thread_test.cpp
test_coll_llc_bcast_tests_CPPFLAGS = -I$(top_srcdir)/src/coll/include -I$(top_srcdir)/src/coll
test_coll_llc_bcast_tests_LDADD = src/coll/libllccoll.la $(GTEST_LIBS)
endif
