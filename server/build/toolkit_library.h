#ifndef JITCACHE_SERVER_BUILD_TOOLKIT_LIBRARY_H_
#define JITCACHE_SERVER_BUILD_TOOLKIT_LIBRARY_H_

// A toolkit file the daemon uses (a library or a ptxas binary) to and from
// its wire form, v1::ToolkitLibrary. Pure.
#include "jitcache/v1/jitcache.pb.h"
#include "server/build/compiler.h"

namespace jitcache {

inline void ToolkitLibraryOf(const ToolchainInfo::Library& lib,
                             v1::ToolkitLibrary* out) {
  out->set_name(lib.name);
  out->set_path(lib.path);
  out->set_device(lib.stamp.dev);
  out->set_inode(lib.stamp.ino);
  out->set_size(lib.stamp.size);
  out->set_mtime_ns(lib.stamp.mtime_ns);
  out->set_ctime_ns(lib.stamp.ctime_ns);
  out->set_major(lib.major);
  out->set_minor(lib.minor);
  out->set_sha256(lib.sha256);
  out->set_ir_major(lib.ir_major);
  out->set_ir_minor(lib.ir_minor);
  out->set_debug_major(lib.debug_major);
  out->set_debug_minor(lib.debug_minor);
}

inline FileStamp StampOfLibrary(const v1::ToolkitLibrary& lib) {
  return {lib.device(), lib.inode(), lib.size(), lib.mtime_ns(),
          lib.ctime_ns()};
}

inline ToolchainInfo::Library LibraryOf(const v1::ToolkitLibrary& lib) {
  ToolchainInfo::Library out;
  out.name = lib.name();
  out.path = lib.path();
  out.stamp = StampOfLibrary(lib);
  out.major = lib.major();
  out.minor = lib.minor();
  out.sha256 = lib.sha256();
  out.ir_major = lib.ir_major();
  out.ir_minor = lib.ir_minor();
  out.debug_major = lib.debug_major();
  out.debug_minor = lib.debug_minor();
  return out;
}

}  // namespace jitcache

#endif  // JITCACHE_SERVER_BUILD_TOOLKIT_LIBRARY_H_
