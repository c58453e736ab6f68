## libllc sources (included from the top-level Makefile.am)
lib_LTLIBRARIES += src/llc/libllc.la
include_HEADERS += src/llc/include/llc.h src/llc/include/llc_fast.h src/llc/include/llc_counters.h
## sources include each other by their path under src/llc ("transport/shm/shm_ring.hpp")
src_llc_libllc_la_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/llc
src_llc_libllc_la_SOURCES = \
	src/llc/wire/am_protocol.hpp \
	src/llc/core/bootstrap.cpp \
	src/llc/core/bootstrap.hpp \
	src/llc/transport/tcp/tcp_hello.cpp \
	src/llc/transport/tcp/tcp_hello.hpp \
	src/llc/kvs/kvs_wire.cpp \
	src/llc/kvs/kvs_wire.hpp \
	src/llc/transport/udp/udp_datagram.cpp \
	src/llc/transport/udp/udp_datagram.hpp \
	src/llc/support/byte_buffer.hpp \
	src/llc/core/c_api.cpp \
	src/llc/core/counters.cpp \
	src/llc/core/counters.hpp \
	src/llc/core/clock.hpp \
	src/llc/core/config.cpp \
	src/llc/core/config.hpp \
	src/llc/core/settings_table.hpp \
	src/llc/core/context.cpp \
	src/llc/core/context_account.cpp \
	src/llc/core/context.hpp \
	src/llc/core/api_checks.cpp \
	src/llc/core/api_checks.hpp \
	src/llc/core/finalize_drain.cpp \
	src/llc/core/finalize_drain.hpp \
	src/llc/transport/transport.cpp \
	src/llc/transport/transport.hpp \
	src/llc/transport/goodbye_book.cpp \
	src/llc/transport/goodbye_book.hpp \
	src/llc/core/errors.cpp \
	src/llc/core/errors.hpp \
	src/llc/core/held_records.cpp \
	src/llc/core/held_records.hpp \
	src/llc/kvs/kvs.cpp \
	src/llc/kvs/kvs.hpp \
	src/llc/auth/job_secret.cpp \
	src/llc/auth/job_secret.hpp \
	src/llc/support/memory_mapping.hpp \
	src/llc/node/node_map.cpp \
	src/llc/node/node_map.hpp \
	src/llc/node/node_map_segment.cpp \
	src/llc/node/node_map_segment.hpp \
	src/llc/node/node_segment.cpp \
	src/llc/node/node_segment.hpp \
	src/llc/wire/outgoing_message.cpp \
	src/llc/wire/outgoing_message.hpp \
	src/llc/core/progress_backoff.hpp \
	src/llc/core/progress_backoff.cpp \
	src/llc/hybrid/net_router.cpp \
	src/llc/hybrid/net_router_account.cpp \
	src/llc/hybrid/net_router.hpp \
	src/llc/hybrid/connected_slots.cpp \
	src/llc/hybrid/connected_slots.hpp \
	src/llc/hybrid/ring_pool.cpp \
	src/llc/hybrid/ring_pool.hpp \
	src/llc/hybrid/receive_history.cpp \
	src/llc/hybrid/receive_history.hpp \
	src/llc/transport/verbs/reg_cache.cpp \
	src/llc/tagged/offer_book.cpp \
	src/llc/tagged/offer_book.hpp \
	src/llc/tagged/request_tokens.cpp \
	src/llc/tagged/request_tokens.hpp \
	src/llc/transport/verbs/reg_cache.hpp \
	src/llc/transport/self/self_transport.cpp \
	src/llc/transport/self/self_transport.hpp \
	src/llc/transport/shm/shm_ring.hpp \
	src/llc/support/shm_name.hpp \
	src/llc/support/shared_segment.cpp \
	src/llc/support/shared_segment.hpp \
	src/llc/transport/shm/shm_segment.cpp \
	src/llc/transport/shm/shm_segment.hpp \
	src/llc/transport/shm/shm_transport.cpp \
	src/llc/transport/shm/shm_account.cpp \
	src/llc/transport/shm/shm_transport.hpp \
	src/llc/wire/stream_decoder.cpp \
	src/llc/wire/stream_decoder.hpp \
	src/llc/support/string_hash.hpp \
	src/llc/transport/udp/switch_asks.cpp \
	src/llc/transport/udp/switch_asks.hpp \
	src/llc/hybrid/switch_policy.cpp \
	src/llc/hybrid/switch_policy.hpp \
	src/llc/tagged/tag_matcher.cpp \
	src/llc/tagged/tag_matcher.hpp \
	src/llc/tagged/tagged.cpp \
	src/llc/tagged/tagged.hpp \
	src/llc/tagged/tagged_am.cpp \
	src/llc/tagged/tagged_am_keyed.cpp \
	src/llc/tagged/tagged_peer_failure.cpp \
	src/llc/tagged/tagged_offers.cpp \
	src/llc/tagged/tagged_split.cpp \
	src/llc/tagged/tagged_util.hpp \
	src/llc/tagged/unexpected_pool.cpp \
	src/llc/tagged/unexpected_pool.hpp \
	src/llc/support/cma_copy.cpp \
	src/llc/support/cma_copy.hpp \
	src/llc/rma/region_table.cpp \
	src/llc/rma/region_table.hpp \
	src/llc/rma/rma.cpp \
	src/llc/rma/rma.hpp \
	src/llc/rma/rma_wire.hpp \
	src/llc/support/token_table.hpp \
	src/llc/transport/net_events.hpp \
	src/llc/transport/busy_promotion.hpp \
	src/llc/transport/peer_timeout.hpp \
	src/llc/support/inet_address.cpp \
	src/llc/support/inet_address.hpp \
	src/llc/transport/tcp/ack_flusher.cpp \
	src/llc/transport/tcp/ack_flusher.hpp \
	src/llc/transport/tcp/tcp_transport.cpp \
	src/llc/transport/tcp/tcp_peer.cpp \
	src/llc/transport/tcp/tcp_tx.cpp \
	src/llc/transport/tcp/tcp_rx.cpp \
	src/llc/transport/tcp/tcp_timers.cpp \
	src/llc/transport/tcp/tcp_auth.cpp \
	src/llc/transport/tcp/tcp_messages.hpp \
	src/llc/transport/tcp/tcp_account.cpp \
	src/llc/transport/tcp/tcp_transport.hpp \
	src/llc/transport/udp/udp_handover.cpp \
	src/llc/transport/udp/udp_handover.hpp \
	src/llc/transport/udp/udp_node_socket.cpp \
	src/llc/transport/udp/udp_node_socket.hpp \
	src/llc/transport/udp/udp_ring_landing.cpp \
	src/llc/transport/udp/udp_ring_landing.hpp \
	src/llc/transport/udp/udp_transport.cpp \
	src/llc/transport/udp/udp_peer.cpp \
	src/llc/transport/udp/udp_tx.cpp \
	src/llc/transport/udp/udp_rx.cpp \
	src/llc/transport/udp/udp_timers.cpp \
	src/llc/transport/udp/udp_switch_channel.cpp \
	src/llc/transport/udp/udp_constants.hpp \
	src/llc/transport/udp/udp_account.cpp \
	src/llc/transport/udp/udp_transport.hpp \
	src/llc/support/unique_fd.hpp

## LLC_NET=verbs: RDMA device discovery (libibverbs, mlx5dv) and the fallback
## decision; compiled without verbs too (LLC_HAVE_VERBS unset: no devices).
## verbs_registrar: the registration cache's ibv_reg_mr Registrar (empty
## without LLC_HAVE_VERBS).  The verbs data path: verbs_address,
## verbs_frame, verbs_recv_pool, verbs_credits and verbs_engine are pure
## logic (always compiled);
## verbs_qp_attr and verbs_objects need libibverbs (DC parts mlx5dv),
## verbs_transport both (LLC_VERBS_DATA_PATH); empty otherwise.
src_llc_libllc_la_SOURCES += \
	src/llc/core/net_selection.cpp \
	src/llc/core/open_transports.cpp \
	src/llc/core/open_transports.hpp \
	src/llc/core/net_selection.hpp \
	src/llc/transport/verbs/verbs_address.cpp \
	src/llc/transport/verbs/verbs_address.hpp \
	src/llc/transport/verbs/verbs_credits.cpp \
	src/llc/transport/verbs/verbs_credits.hpp \
	src/llc/transport/verbs/verbs_devices.cpp \
	src/llc/transport/verbs/verbs_engine.cpp \
	src/llc/transport/verbs/verbs_keyed_read.cpp \
	src/llc/transport/verbs/verbs_engine.hpp \
	src/llc/transport/verbs/verbs_frame.cpp \
	src/llc/transport/verbs/verbs_frame.hpp \
	src/llc/transport/verbs/verbs_devices.hpp \
	src/llc/transport/verbs/verbs_handles.hpp \
	src/llc/transport/verbs/verbs_objects.cpp \
	src/llc/transport/verbs/verbs_objects.hpp \
	src/llc/transport/verbs/verbs_qp_attr.cpp \
	src/llc/transport/verbs/verbs_qp_attr.hpp \
	src/llc/transport/verbs/verbs_recv_pool.cpp \
	src/llc/transport/verbs/verbs_recv_pool.hpp \
	src/llc/transport/verbs/verbs_registrar.cpp \
	src/llc/transport/verbs/verbs_registrar.hpp \
	src/llc/transport/verbs/verbs_transport.cpp \
	src/llc/transport/verbs/verbs_transport.hpp
# Calls between libllc's own functions are neither interposed nor made
# through the PLT: the compiler may inline across them (the tagged receive
# path is a chain of member functions) and the linker binds them directly.
src_llc_libllc_la_CXXFLAGS = $(AM_CXXFLAGS) -fno-semantic-interposition
src_llc_libllc_la_LDFLAGS = -version-info 8:0:3 -Wl,-Bsymbolic-functions
src_llc_libllc_la_LIBADD = $(VERBS_LIBS) $(CRYPTO_LIBS)

## memory accounting, hashed peer table and the capped tables' eviction
## policy, build information
src_llc_libllc_la_SOURCES += \
	src/llc/core/build_info.cpp \
	src/llc/core/build_info.hpp \
	src/llc/support/lazy_array.hpp \
	src/llc/mem/mem_accounting.cpp \
	src/llc/mem/mem_accounting.hpp \
	src/llc/support/peer_cap.hpp \
	src/llc/support/peer_table.hpp

## tools installed in $(bindir): llc_info (version, transports, environment
## of libllc and of the collectives in libllccoll) and llc_memmodel (per-node
## memory model, doc/memory.md)
bin_PROGRAMS += src/llc/tools/llc_info src/llc/tools/llc_memmodel
src_llc_tools_llc_info_SOURCES = src/llc/tools/llc_info.cpp src/llc/tools/settings_doc.cpp src/llc/tools/settings_doc.hpp \
	src/llc/tools/counters_doc.cpp src/llc/tools/counters_doc.hpp
src_llc_tools_llc_info_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/llc -I$(top_srcdir)/src/coll/include -I$(top_srcdir)/src/coll
src_llc_tools_llc_info_LDADD = src/llc/libllc.la src/coll/libllccoll.la
## the per-node memory model (mem_model.*) belongs to the tool, not to the
## runtime library; the unit tests compile it too
src_llc_tools_llc_memmodel_SOURCES = src/llc/tools/llc_memmodel.cpp src/llc/tools/mem_model.cpp src/llc/tools/mem_model.hpp
src_llc_tools_llc_memmodel_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/llc
src_llc_tools_llc_memmodel_LDADD = src/llc/libllc.la
