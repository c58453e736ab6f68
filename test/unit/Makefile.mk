## GoogleTest unit tests for libllc (included from the top-level Makefile.am)
if HAVE_GTEST
check_PROGRAMS += test/unit/llc_unit_tests
TESTS += test/unit/llc_unit_tests
test_unit_llc_unit_tests_SOURCES = \
	test/unit/main.cpp \
	test/unit/test_bootstrap.cpp \
	test/unit/test_bootstrap.hpp \
	test/unit/test_util.hpp \
	test/unit/traffic.cpp \
	test/unit/traffic.hpp \
	test/unit/numbered_stream.cpp \
	test/unit/numbered_stream.hpp \
	test/unit/checked_messages.cpp \
	test/unit/checked_messages.hpp \
	test/unit/harness_test.cpp \
	test/unit/init_test.cpp \
	test/unit/self_test.cpp \
	test/unit/pingpong_test.cpp \
	test/unit/tagged_test.cpp \
	test/unit/tagged_hostile_test.cpp \
	test/unit/alloc_counter.cpp \
	test/unit/alloc_counter.hpp \
	test/unit/ordering_test.cpp \
	test/unit/errors_test.cpp \
	test/unit/cma_test.cpp \
	test/unit/finalize_test.cpp \
	test/unit/components_test.cpp \
	test/unit/udp_test.cpp \
	test/unit/switch_policy_test.cpp \
	test/unit/receive_history_test.cpp \
	test/unit/hybrid_switch_test.cpp \
	test/unit/hybrid_cap_test.cpp \
	test/unit/dc_rdma_test.cpp \
	test/unit/rc_slots_test.cpp \
	test/unit/ring_pool_test.cpp \
	test/unit/hybrid_receiver_test.cpp \
	test/unit/udp_cap_test.cpp \
	test/unit/udp_shared_recv_test.cpp \
	test/unit/tcp_liveness_test.cpp \
	test/unit/tcp_evict_test.cpp \
	test/unit/auth_test.cpp \
	test/unit/stranger_util.hpp \
	test/unit/shm_cma_hostile_test.cpp \
	test/unit/coll_args_test.cpp \
	test/unit/job_secret_util.hpp \
	test/unit/mem_test.cpp \
	test/unit/mem_udp_test.cpp \
	test/unit/node_map_test.cpp \
	test/unit/peer_table_test.cpp \
	test/unit/reg_cache_test.cpp \
	test/unit/info_test.cpp \
	test/unit/settings_test.cpp \
	test/unit/kvs_test.cpp \
	test/unit/decoder_regress_test.cpp \
	test/unit/verbs_test.cpp \
	test/unit/verbs_address_test.cpp \
	test/unit/verbs_credits_test.cpp \
	test/unit/verbs_engine_test.cpp \
	test/unit/verbs_fake_fabric.cpp \
	test/unit/verbs_fake_fabric.hpp \
	test/unit/verbs_frame_test.cpp \
	test/unit/verbs_qp_attr_test.cpp \
	test/unit/verbs_recv_pool_test.cpp \
	test/unit/verbs_rndv_test.cpp \
	src/llc/tools/mem_model.cpp
test_unit_llc_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/llc -I$(top_srcdir)/src/llc/tools \
	-I$(top_srcdir)/src/coll/include -I$(top_srcdir)/src/coll \
	-DLLC_SRCDIR='"$(abs_top_srcdir)/src/llc"' -DLLC_COLL_SRCDIR='"$(abs_top_srcdir)/src/coll"'
test_unit_llc_unit_tests_LDADD = src/llc/libllc.la src/coll/libllccoll.la $(GTEST_LIBS) $(CRYPTO_LIBS)
endif

## llc_info and llc_memmodel, run as programs
TESTS += test/unit/tools_test.sh

# Two-process libllc smoke/latency tool with a file bootstrap (no MPI, no gtest).
noinst_PROGRAMS += test/unit/llc_pair
test_unit_llc_pair_SOURCES = test/unit/llc_pair.c test/unit/llc_file_bootstrap.h
test_unit_llc_pair_LDADD = src/llc/libllc.la
