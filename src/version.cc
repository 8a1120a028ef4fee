#include "hived/version.h"

namespace hived {

const char* VersionString() noexcept { return HIVED_VERSION_STRING; }

}  // namespace hived
