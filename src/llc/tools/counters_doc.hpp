// counters_doc.hpp - doc/counters.md, generated from libllc's counter table
// (src/llc/core/counters.def) through llc_counters.h: llc_info --counters-markdown.
#pragma once

#include <string>

namespace llc::tools {

std::string counters_markdown();

} // namespace llc::tools
