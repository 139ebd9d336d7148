# Warnings for the project's own targets only; generated protobuf code is exempt.
add_library(jitcache_warnings INTERFACE)
target_compile_options(jitcache_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
  -Woverloaded-virtual -Wimplicit-fallthrough
  $<$<BOOL:${JITCACHE_WERROR}>:-Werror>)
