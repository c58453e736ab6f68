## shared pieces of src/coll
lib_LTLIBRARIES += src/coll/libllccoll.la
include_HEADERS += src/coll/include/llc_coll.h
src_coll_libllccoll_la_CPPFLAGS = -I$(top_srcdir)/src/coll/include -I$(top_srcdir)/src/coll -I$(top_srcdir)/src/common
src_coll_libllccoll_la_LDFLAGS = -version-info 3:0:3
src_coll_libllccoll_la_SOURCES = \
	src/coll/state.hpp \
	src/coll/state.cpp \
	src/coll/cache_file.hpp \
	src/coll/cache_file.cpp \
	src/coll/counters.cpp \
	src/coll/env_table.cpp \
	src/coll/coll_settings.hpp
