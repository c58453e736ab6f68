## GoogleTest unit tests of the dynamic Alltoall and the performance models
## (included from the top-level Makefile.am)
if HAVE_GTEST
check_PROGRAMS += test/coll/alltoall_tests
TESTS += test/coll/alltoall_tests
test_coll_alltoall_tests_SOURCES = \
	test/coll/alltoall_main.cpp \
	test/coll/alltoall_net.hpp \
	test/coll/alltoall_net.cpp \
	test/coll/alltoall_algorithms_test.cpp \
	test/coll/alltoall_model_test.cpp \
	test/coll/alltoall_tuner_test.cpp \
	test/coll/alltoall_decisions_test.cpp \
	test/coll/alltoall_steps_test.cpp \
	test/coll/env_defaults_test.cpp \
	test/coll/coll_counters_test.cpp
test_coll_alltoall_tests_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/coll/include \
	-I$(top_srcdir)/src/coll -DLLC_SRCDIR='"$(abs_top_srcdir)"'
test_coll_alltoall_tests_LDADD = src/coll/libllccoll.la $(GTEST_LIBS)
endif
