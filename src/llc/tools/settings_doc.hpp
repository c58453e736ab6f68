// settings_doc.hpp - doc/settings.md, generated from the two settings tables
// (src/llc/core/settings.def, src/coll/settings.def): llc_info --settings-markdown.
#pragma once

#include <string>

namespace llc::tools {

std::string settings_markdown();

} // namespace llc::tools
