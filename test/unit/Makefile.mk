## GoogleTest unit tests for libllc (included from the top-level Makefile.am)
if HAVE_GTEST
check_PROGRAMS += test/unit/llc_unit_tests
TESTS += test/unit/llc_unit_tests
# The tests of src/llc/X are in test/unit/X (the transports' in transport/X, the
# whole library through its C API in api/, src/coll's in coll/); the helpers
# they share, the fork harness and its own test in common/.  The list keeps
# its order: it is the link order, which is the order GoogleTest registers and
# runs the tests in.
test_unit_llc_unit_tests_SOURCES = \
	test/unit/common/main.cpp \
	test/unit/common/test_bootstrap.cpp \
	test/unit/common/test_bootstrap.hpp \
	test/unit/common/test_util.hpp \
	test/unit/tagged/tagged_test_util.hpp \
	test/unit/common/am_records.hpp \
	test/unit/common/traffic.cpp \
	test/unit/common/traffic.hpp \
	test/unit/common/numbered_stream.cpp \
	test/unit/common/numbered_stream.hpp \
	test/unit/common/checked_messages.cpp \
	test/unit/common/checked_messages.hpp \
	test/unit/common/harness_test.cpp \
	test/unit/core/init_test.cpp \
	test/unit/transport/self/self_test.cpp \
	test/unit/transport/caps_test.cpp \
	test/unit/transport/peer_timeout_test.cpp \
	test/unit/transport/busy_promotion_test.cpp \
	test/unit/transport/goodbye_book_test.cpp \
	test/unit/api/pingpong_test.cpp \
	test/unit/tagged/tagged_test.cpp \
	test/unit/tagged/tagged_hostile_test.cpp \
	test/unit/tagged/tagged_offer_test.cpp \
	test/unit/tagged/tagged_split_test.cpp \
	test/unit/tagged/tagged_fast_test.cpp \
	test/unit/tagged/tagged_interleave_test.cpp \
	test/unit/tagged/tagged_dead_sender_test.cpp \
	test/unit/rma/rma_test.cpp \
	test/unit/common/alloc_counter.cpp \
	test/unit/common/alloc_counter.hpp \
	test/unit/api/ordering_test.cpp \
	test/unit/core/errors_test.cpp \
	test/unit/transport/shm/cma_test.cpp \
	test/unit/api/finalize_test.cpp \
	test/unit/api/api1_test.cpp \
	test/unit/api/api1_client.c \
	test/unit/api/api1_client.h \
	test/unit/api/llc_api1.h \
	test/unit/wire/stream_decoder_test.cpp \
	test/unit/transport/shm/shm_ring_test.cpp \
	test/unit/core/config_backoff_test.cpp \
	test/unit/core/idle_hook_test.cpp \
	test/unit/core/counters_test.cpp \
	test/unit/transport/udp/udp_test.cpp \
	test/unit/hybrid/switch_policy_test.cpp \
	test/unit/transport/udp/switch_asks_test.cpp \
	test/unit/hybrid/receive_history_test.cpp \
	test/unit/hybrid/hybrid_switch_test.cpp \
	test/unit/hybrid/hybrid_cap_test.cpp \
	test/unit/transport/udp/udp_ring_landing_test.cpp \
	test/unit/hybrid/ring_landing_test.cpp \
	test/unit/hybrid/connected_slots_test.cpp \
	test/unit/hybrid/ring_pool_test.cpp \
	test/unit/hybrid/hybrid_receiver_test.cpp \
	test/unit/transport/udp/udp_cap_test.cpp \
	test/unit/transport/udp/udp_shared_recv_test.cpp \
	test/unit/transport/tcp/tcp_liveness_test.cpp \
	test/unit/transport/tcp/tcp_evict_test.cpp \
	test/unit/transport/tcp/tcp_bidi_test.cpp \
	test/unit/auth/auth_test.cpp \
	test/unit/common/stranger_util.hpp \
	test/unit/common/cma_probe.hpp \
	test/unit/tagged/tagged_am_hostile_test.cpp \
	test/unit/tagged/tagged_am_keyed_test.cpp \
	test/unit/tagged/tagged_am_buffer_test.cpp \
	test/unit/coll/coll_args_test.cpp \
	test/unit/common/job_secret_util.hpp \
	test/unit/mem/mem_test.cpp \
	test/unit/mem/mem_udp_test.cpp \
	test/unit/mem/mem_account_test.cpp \
	test/unit/node/node_map_test.cpp \
	test/unit/support/peer_cap_test.cpp \
	test/unit/support/peer_table_test.cpp \
	test/unit/transport/verbs/reg_cache_test.cpp \
	test/unit/core/info_test.cpp \
	test/unit/core/settings_test.cpp \
	test/unit/kvs/kvs_test.cpp \
	test/unit/wire/decoder_regress_test.cpp \
	test/unit/transport/verbs/verbs_test.cpp \
	test/unit/transport/verbs/verbs_address_test.cpp \
	test/unit/transport/verbs/verbs_credits_test.cpp \
	test/unit/transport/verbs/verbs_engine_test.cpp \
	test/unit/common/verbs_fake_fabric.cpp \
	test/unit/common/verbs_fake_fabric.hpp \
	test/unit/common/keyed_read_fake.cpp \
	test/unit/common/keyed_read_fake.hpp \
	test/unit/transport/verbs/verbs_frame_test.cpp \
	test/unit/transport/verbs/verbs_qp_attr_test.cpp \
	test/unit/transport/verbs/verbs_recv_pool_test.cpp \
	test/unit/transport/verbs/verbs_rndv_test.cpp \
	src/llc/tools/mem_model.cpp \
	test/unit/transport/conformance/transport_rows.hpp \
	test/unit/transport/conformance/conformance_test.cpp
test_unit_llc_unit_tests_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/llc -I$(top_srcdir)/src/llc/tools \
	-I$(top_srcdir)/src/coll/include -I$(top_srcdir)/src/coll -I$(top_srcdir)/test/unit \
	-DLLC_SRCDIR='"$(abs_top_srcdir)/src/llc"' -DLLC_COLL_SRCDIR='"$(abs_top_srcdir)/src/coll"'
test_unit_llc_unit_tests_LDADD = src/llc/libllc.la src/coll/libllccoll.la $(GTEST_LIBS) $(CRYPTO_LIBS)
endif

## llc_info and llc_memmodel, run as programs
TESTS += test/unit/tools/tools_test.sh

# Two-process libllc smoke/latency tool with a file bootstrap (no MPI, no gtest).
noinst_PROGRAMS += test/unit/llc_pair
test_unit_llc_pair_SOURCES = test/unit/common/llc_pair.c test/unit/common/llc_file_bootstrap.h
test_unit_llc_pair_LDADD = src/llc/libllc.la
