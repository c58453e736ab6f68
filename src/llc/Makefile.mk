## libllc sources (included from the top-level Makefile.am)
lib_LTLIBRARIES += src/llc/libllc.la
include_HEADERS += src/llc/include/llc.h
src_llc_libllc_la_SOURCES = \
	src/llc/context.cpp
src_llc_libllc_la_LDFLAGS = -version-info 1:0:0
