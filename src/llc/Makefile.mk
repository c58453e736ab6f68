## libllc sources (included from the top-level Makefile.am)
lib_LTLIBRARIES += src/llc/libllc.la
include_HEADERS += src/llc/include/llc.h
src_llc_libllc_la_SOURCES = \
	src/llc/am_protocol.hpp \
	src/llc/bootstrap.cpp \
	src/llc/bootstrap.hpp \
	src/llc/tcp_hello.cpp \
	src/llc/tcp_hello.hpp \
	src/llc/kvs_wire.cpp \
	src/llc/kvs_wire.hpp \
	src/llc/udp_datagram.cpp \
	src/llc/udp_datagram.hpp \
	src/llc/byte_buffer.hpp \
	src/llc/c_api.cpp \
	src/llc/clock.hpp \
	src/llc/config.cpp \
	src/llc/config.hpp \
	src/llc/settings_table.hpp \
	src/llc/context.cpp \
	src/llc/context.hpp \
	src/llc/errors.cpp \
	src/llc/errors.hpp \
	src/llc/kvs.cpp \
	src/llc/kvs.hpp \
	src/llc/job_secret.cpp \
	src/llc/job_secret.hpp \
	src/llc/memory_mapping.hpp \
	src/llc/node_map.cpp \
	src/llc/node_map.hpp \
	src/llc/node_map_segment.cpp \
	src/llc/node_map_segment.hpp \
	src/llc/node_segment.cpp \
	src/llc/node_segment.hpp \
	src/llc/outgoing_message.cpp \
	src/llc/outgoing_message.hpp \
	src/llc/progress_backoff.hpp \
	src/llc/rc_slots.cpp \
	src/llc/rc_slots.hpp \
	src/llc/ring_pool.cpp \
	src/llc/ring_pool.hpp \
	src/llc/receive_history.cpp \
	src/llc/receive_history.hpp \
	src/llc/reg_cache.cpp \
	src/llc/request_tokens.cpp \
	src/llc/request_tokens.hpp \
	src/llc/reg_cache.hpp \
	src/llc/self_transport.cpp \
	src/llc/self_transport.hpp \
	src/llc/shm_ring.hpp \
	src/llc/shm_name.hpp \
	src/llc/shm_segment.cpp \
	src/llc/shm_segment.hpp \
	src/llc/shm_transport.cpp \
	src/llc/shm_transport.hpp \
	src/llc/stream_decoder.cpp \
	src/llc/stream_decoder.hpp \
	src/llc/string_hash.hpp \
	src/llc/switch_asks.cpp \
	src/llc/switch_asks.hpp \
	src/llc/switch_policy.cpp \
	src/llc/switch_policy.hpp \
	src/llc/tag_matcher.cpp \
	src/llc/tag_matcher.hpp \
	src/llc/tagged.cpp \
	src/llc/tagged.hpp \
	src/llc/tcp_address.cpp \
	src/llc/tcp_address.hpp \
	src/llc/tcp_transport.cpp \
	src/llc/tcp_transport.hpp \
	src/llc/udp_handover.cpp \
	src/llc/udp_handover.hpp \
	src/llc/udp_node_socket.cpp \
	src/llc/udp_node_socket.hpp \
	src/llc/udp_ring_landing.cpp \
	src/llc/udp_ring_landing.hpp \
	src/llc/udp_transport.cpp \
	src/llc/udp_transport.hpp \
	src/llc/unique_fd.hpp

## LLC_NET=verbs: RDMA device discovery (libibverbs, mlx5dv) and the fallback
## decision; compiled without verbs too (LLC_HAVE_VERBS unset: no devices).
## verbs_registrar: the registration cache's ibv_reg_mr Registrar (empty
## without LLC_HAVE_VERBS).  The verbs data path: verbs_address,
## verbs_frame, verbs_recv_pool, verbs_credits and verbs_engine are pure
## logic (always compiled);
## verbs_qp_attr and verbs_objects need libibverbs (DC parts mlx5dv),
## verbs_transport both (LLC_VERBS_DATA_PATH); empty otherwise.
src_llc_libllc_la_SOURCES += \
	src/llc/net_selection.cpp \
	src/llc/net_selection.hpp \
	src/llc/verbs_address.cpp \
	src/llc/verbs_address.hpp \
	src/llc/verbs_credits.cpp \
	src/llc/verbs_credits.hpp \
	src/llc/verbs_devices.cpp \
	src/llc/verbs_engine.cpp \
	src/llc/verbs_engine.hpp \
	src/llc/verbs_frame.cpp \
	src/llc/verbs_frame.hpp \
	src/llc/verbs_devices.hpp \
	src/llc/verbs_handles.hpp \
	src/llc/verbs_objects.cpp \
	src/llc/verbs_objects.hpp \
	src/llc/verbs_qp_attr.cpp \
	src/llc/verbs_qp_attr.hpp \
	src/llc/verbs_recv_pool.cpp \
	src/llc/verbs_recv_pool.hpp \
	src/llc/verbs_registrar.cpp \
	src/llc/verbs_registrar.hpp \
	src/llc/verbs_transport.cpp \
	src/llc/verbs_transport.hpp
src_llc_libllc_la_LDFLAGS = -version-info 5:0:0
src_llc_libllc_la_LIBADD = $(VERBS_LIBS) $(CRYPTO_LIBS)

## memory accounting, hashed peer table, build information
src_llc_libllc_la_SOURCES += \
	src/llc/build_info.cpp \
	src/llc/build_info.hpp \
	src/llc/lazy_array.hpp \
	src/llc/mem_accounting.cpp \
	src/llc/mem_accounting.hpp \
	src/llc/mem_walk_udp.cpp \
	src/llc/peer_table.hpp

## tools installed in $(bindir): llc_info (version, transports, environment
## of libllc and of the collectives in libllccoll) and llc_memmodel (per-node
## memory model, doc/memory.md)
bin_PROGRAMS += src/llc/tools/llc_info src/llc/tools/llc_memmodel
src_llc_tools_llc_info_SOURCES = src/llc/tools/llc_info.cpp src/llc/tools/settings_doc.cpp src/llc/tools/settings_doc.hpp
src_llc_tools_llc_info_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/llc -I$(top_srcdir)/src/coll/include -I$(top_srcdir)/src/coll
src_llc_tools_llc_info_LDADD = src/llc/libllc.la src/coll/libllccoll.la
## the per-node memory model (mem_model.*) belongs to the tool, not to the
## runtime library; the unit tests compile it too
src_llc_tools_llc_memmodel_SOURCES = src/llc/tools/llc_memmodel.cpp src/llc/tools/mem_model.cpp src/llc/tools/mem_model.hpp
src_llc_tools_llc_memmodel_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/src/llc
src_llc_tools_llc_memmodel_LDADD = src/llc/libllc.la
