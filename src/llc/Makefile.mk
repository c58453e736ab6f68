## libllc sources (included from the top-level Makefile.am)
lib_LTLIBRARIES += src/llc/libllc.la
include_HEADERS += src/llc/include/llc.h
src_llc_libllc_la_SOURCES = \
	src/llc/am_protocol.hpp \
	src/llc/bootstrap.cpp \
	src/llc/bootstrap.hpp \
	src/llc/byte_buffer.hpp \
	src/llc/c_api.cpp \
	src/llc/clock.hpp \
	src/llc/config.cpp \
	src/llc/config.hpp \
	src/llc/context.cpp \
	src/llc/context.hpp \
	src/llc/errors.cpp \
	src/llc/errors.hpp \
	src/llc/memory_mapping.hpp \
	src/llc/outgoing_message.cpp \
	src/llc/outgoing_message.hpp \
	src/llc/progress_backoff.hpp \
	src/llc/self_transport.cpp \
	src/llc/self_transport.hpp \
	src/llc/shm_ring.hpp \
	src/llc/shm_segment.cpp \
	src/llc/shm_segment.hpp \
	src/llc/shm_transport.cpp \
	src/llc/shm_transport.hpp \
	src/llc/stream_decoder.cpp \
	src/llc/stream_decoder.hpp \
	src/llc/tcp_address.cpp \
	src/llc/tcp_address.hpp \
	src/llc/tcp_transport.cpp \
	src/llc/tcp_transport.hpp \
	src/llc/udp_transport.cpp \
	src/llc/udp_transport.hpp \
	src/llc/unique_fd.hpp
src_llc_libllc_la_LDFLAGS = -version-info 2:0:0
