## GoogleTest unit tests for libllc (included from the top-level Makefile.am)
if HAVE_GTEST
check_PROGRAMS += test/unit/llc_unit_tests
TESTS += test/unit/llc_unit_tests
test_unit_llc_unit_tests_SOURCES = \
	test/unit/main.cpp
test_unit_llc_unit_tests_LDADD = src/llc/libllc.la $(GTEST_LIBS)
endif
