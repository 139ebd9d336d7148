# Every dependency comes from the distribution's packages (deploy/install-deps.sh).
find_package(Threads REQUIRED)
find_package(PkgConfig)

find_package(absl CONFIG REQUIRED)
find_package(Protobuf REQUIRED)

find_package(gRPC CONFIG QUIET)
if(gRPC_FOUND)
  set(JITCACHE_GRPCXX gRPC::grpc++)
  find_program(JITCACHE_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
else()
  pkg_check_modules(GRPCXX REQUIRED IMPORTED_TARGET grpc++)
  set(JITCACHE_GRPCXX PkgConfig::GRPCXX)
  find_program(JITCACHE_GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
endif()

find_package(RocksDB CONFIG QUIET)
if(TARGET RocksDB::rocksdb)
  set(JITCACHE_ROCKSDB RocksDB::rocksdb)
elseif(TARGET RocksDB::rocksdb-shared)
  set(JITCACHE_ROCKSDB RocksDB::rocksdb-shared)
else()
  pkg_check_modules(ROCKSDB REQUIRED IMPORTED_TARGET rocksdb)
  set(JITCACHE_ROCKSDB PkgConfig::ROCKSDB)
endif()

# sd_listen_fds / sd_notify (socket activation, readiness, the watchdog).
pkg_check_modules(SYSTEMD REQUIRED IMPORTED_TARGET libsystemd)
# The compile workers' seccomp filter.
pkg_check_modules(SECCOMP REQUIRED IMPORTED_TARGET libseccomp)
# The cluster tier's Redis client.
pkg_check_modules(HIREDIS REQUIRED IMPORTED_TARGET hiredis)
# HMAC-SHA-256 of what daemons write to the cluster tier (libssl-dev).
find_package(OpenSSL REQUIRED)
# The /metrics endpoint.
find_package(prometheus-cpp CONFIG REQUIRED COMPONENTS pull)

find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
add_library(jitcache_xxhash INTERFACE)
target_include_directories(jitcache_xxhash INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(jitcache_xxhash INTERFACE ${XXHASH_LIBRARY})

# The CUDA toolkit: CUDA_HOME, else /usr/local/cuda.
if(NOT CUDAToolkit_ROOT)
  if(DEFINED ENV{CUDA_HOME})
    set(CUDAToolkit_ROOT "$ENV{CUDA_HOME}")
  else()
    set(CUDAToolkit_ROOT "/usr/local/cuda")
  endif()
endif()
find_package(CUDAToolkit REQUIRED)
# CMake before 3.26 has no CUDA::nvJitLink target.
if(NOT TARGET CUDA::nvJitLink)
  find_library(JITCACHE_NVJITLINK_LIBRARY nvJitLink
    HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_ROOT}/lib64)
  if(JITCACHE_NVJITLINK_LIBRARY)
    add_library(CUDA::nvJitLink SHARED IMPORTED)
    set_target_properties(CUDA::nvJitLink PROPERTIES
      IMPORTED_LOCATION ${JITCACHE_NVJITLINK_LIBRARY}
      INTERFACE_INCLUDE_DIRECTORIES ${CUDAToolkit_INCLUDE_DIRS})
  endif()
endif()
if(NOT TARGET CUDA::nvrtc OR NOT TARGET CUDA::nvJitLink)
  message(FATAL_ERROR "The CUDA toolkit at ${CUDAToolkit_ROOT} lacks NVRTC or nvJitLink")
endif()
get_filename_component(JITCACHE_CUDA_ROOT "${CUDAToolkit_INCLUDE_DIRS}/.." ABSOLUTE)
