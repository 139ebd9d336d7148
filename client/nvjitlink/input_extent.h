#ifndef JITCACHE_CLIENT_NVJITLINK_INPUT_EXTENT_H_
#define JITCACHE_CLIENT_NVJITLINK_INPUT_EXTENT_H_

// How far the real nvJitLink (13.0) reads an input handed to
// nvJitLinkAddData, against the `size` it is given: PTX is read up to a
// NUL at data[size - 1] or data[size] (and refused without one); LTO-IR and
// cubins are read by `size`; fatbins, host objects and libraries by their
// container's own length, past `size` when that is shorter. A differential
// test against the real nvJitLink shows each.
//
// Pure; any thread. Reads no byte past data[size] (PTX: data[size] only
// when data[size - 1] is not a NUL, as nvJitLink does).
#include <cstddef>

namespace jitcache::nvjitlink {

// Whether a copy of data[0, size) followed by one NUL holds every byte the
// real nvJitLink reads of an input of `type` (nvJitLinkInputType's number)
// and lets it read them as it reads the caller's: false where it would read
// past `size` (a container longer than `size`, one whose length cannot be
// told from the bytes within it, PTX without a NUL at its end or just past
// it), or for a type not named above.
bool CopyReadsAsTheCallers(int type, const void* data, size_t size);

}  // namespace jitcache::nvjitlink

#endif  // JITCACHE_CLIENT_NVJITLINK_INPUT_EXTENT_H_
