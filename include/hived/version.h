// hived/version.h: the library's version, for tools and consumers that report it.
//
// Example:
//   std::cout << "hived " << hived::VersionString() << "\n";
//
// Thread safety: returns a static string.
#ifndef HIVED_VERSION_H_
#define HIVED_VERSION_H_

#include "hived/export.h"

namespace hived {

// "major.minor.patch" of the library linked in (not of the headers compiled against).
HIVED_EXPORT const char* VersionString() noexcept;

}  // namespace hived

#endif  // HIVED_VERSION_H_
