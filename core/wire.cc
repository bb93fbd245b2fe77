#include "core/wire.h"

#include <bit>

static_assert(std::endian::native == std::endian::little,
              "core/wire.h encodes by memcpy and assumes a little-endian target");
