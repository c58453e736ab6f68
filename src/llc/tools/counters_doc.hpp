// counters_doc.hpp - doc/counters.md, generated from libllc's counter table
// (src/llc/core/counters.def) and the collectives' (src/coll/counters.cpp)
// through llc_counters.h and llc_coll.h: llc_info --counters-markdown.
#pragma once

#include <string>

namespace llc::tools {

std::string counters_markdown();

} // namespace llc::tools
