# What `cmake --install` puts where, and the two Debian packages
# (`cpack -G DEB`) made of it:
#   jitcache          the daemon, the CLI, the systemd units, sysusers.d and
#                     tmpfiles.d files and /etc/default/jitcached
#   libjitcache-dev   libjitcache.so, its headers, a CMake package config
#                     (find_package(jitcache) -> jitcache::client) and a
#                     pkg-config file
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Paths the units name: with the default /usr prefix, /etc/default/jitcached
# (GNUInstallDirs puts /usr's sysconfdir at /etc). Everything else is
# relative to the prefix, so DESTDIR and --prefix move it all.
set(JITCACHE_CONF_DIR "${CMAKE_INSTALL_FULL_SYSCONFDIR}/default")
if(NOT CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(JITCACHE_CONF_DIR "${CMAKE_INSTALL_SYSCONFDIR}/default")
endif()
set(JITCACHE_CONF_FILE "${CMAKE_INSTALL_FULL_SYSCONFDIR}/default/jitcached")
configure_file(${PROJECT_SOURCE_DIR}/deploy/systemd/jitcached.service.in
  ${PROJECT_BINARY_DIR}/deploy/jitcached.service @ONLY)

install(TARGETS jitcached jitcache_worker jitcache jitcache_full jitcache_ptxas
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT daemon)
# jitcache-ptxas again as .../jitcache/ptxas: ptxas names itself after its
# argv[0] (in its messages and its cubins), so TRITON_PTXAS_PATH must name
# a file called ptxas.
install(PROGRAMS $<TARGET_FILE:jitcache_ptxas>
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/jitcache RENAME ptxas COMPONENT daemon)
# The drop-in libraries (NVRTC, nvJitLink, libNVVM), in a directory laid out
# like a CUDA toolkit, .../jitcache/cuda: programs opt in with
# LD_PRELOAD (`jitcache preload` prints the line; README: unmodified
# programs). Programs that find the toolkit from where the loaded NVRTC
# lives (CuPy, cuda.pathfinder: dirname(dirname(realpath(libnvrtc)))) find
# it there: every other entry of the toolkit is a link (make-cuda-root), made
# at install time for JITCACHE_TOOLKIT_LINKS_TO, and again by the package on
# the node it is installed on. The drop-ins are real files in real
# directories, so that the realpath stays here.
set(JITCACHE_TOOLKIT_LINKS_TO "/usr/local/cuda" CACHE STRING
  "The CUDA toolkit the installed drop-ins' directory links to")
set(JITCACHE_CUDA_ROOT_DIR ${CMAKE_INSTALL_LIBDIR}/jitcache/cuda)
install(TARGETS jitcache_nvrtc jitcache_nvjitlink
  LIBRARY DESTINATION ${JITCACHE_CUDA_ROOT_DIR}/lib64 NAMELINK_SKIP
  COMPONENT daemon)
install(TARGETS jitcache_nvvm
  LIBRARY DESTINATION ${JITCACHE_CUDA_ROOT_DIR}/nvvm/lib64 NAMELINK_SKIP
  COMPONENT daemon)
install(PROGRAMS ${PROJECT_SOURCE_DIR}/deploy/make-cuda-root
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/jitcache COMPONENT daemon)
install(CODE "
  set(root \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${JITCACHE_CUDA_ROOT_DIR}\")
  if(root MATCHES \"/_CPack_Packages/\")
    # A package: its postinst links the node's toolkit; links into this
    # machine's would be the package's files, and wrong elsewhere.
  elseif(EXISTS \"${JITCACHE_TOOLKIT_LINKS_TO}/include/cuda.h\")
    execute_process(COMMAND sh
      \"${PROJECT_SOURCE_DIR}/deploy/make-cuda-root\"
      \"${JITCACHE_TOOLKIT_LINKS_TO}\" \"\${root}\"
      RESULT_VARIABLE made)
    if(NOT made EQUAL 0)
      message(FATAL_ERROR \"make-cuda-root failed for \${root}\")
    endif()
  else()
    message(STATUS \"No CUDA toolkit at ${JITCACHE_TOOLKIT_LINKS_TO}: \"
      \"\${root} gets its links when the package is installed\")
  endif()
  # The drop-ins' earlier place, .../jitcache/NAME: links, so that an
  # LD_PRELOAD written for it still loads them (through the link CuPy's
  # realpath leads here, past the link).
  foreach(lib cuda/lib64/libnvrtc.so.13 cuda/lib64/libnvJitLink.so.13
      cuda/nvvm/lib64/libnvvm.so.4)
    get_filename_component(name \${lib} NAME)
    file(CREATE_LINK \${lib}
      \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_LIBDIR}/jitcache/\${name}\"
      SYMBOLIC)
  endforeach()
  " COMPONENT daemon)
install(FILES ${PROJECT_BINARY_DIR}/deploy/jitcached.service
  ${PROJECT_SOURCE_DIR}/deploy/systemd/jitcached.socket
  DESTINATION lib/systemd/system COMPONENT daemon)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/sysusers.d/jitcache.conf
  DESTINATION lib/sysusers.d COMPONENT daemon)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/tmpfiles.d/jitcache.conf
  DESTINATION lib/tmpfiles.d COMPONENT daemon)
install(FILES ${PROJECT_SOURCE_DIR}/deploy/default/jitcached
  DESTINATION ${JITCACHE_CONF_DIR} COMPONENT daemon)
# Man pages: jitcache's and jitcached's from their own --help
# (deploy/man/make_man.py), jitcache-ptxas's by hand (its --help is ptxas's).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
set(JITCACHE_MAN_DIR ${PROJECT_BINARY_DIR}/man)
add_custom_command(
  OUTPUT ${JITCACHE_MAN_DIR}/jitcache.1 ${JITCACHE_MAN_DIR}/jitcached.1
  COMMAND ${CMAKE_COMMAND} -E make_directory ${JITCACHE_MAN_DIR}
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/deploy/man/make_man.py
    $<TARGET_FILE:jitcache_full> jitcache
    "the client of the per-node CUDA compile cache"
    ${JITCACHE_MAN_DIR}/jitcache.1 --see-also "jitcached(1), jitcache-ptxas(1)"
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/deploy/man/make_man.py
    $<TARGET_FILE:jitcached> jitcached
    "the per-node CUDA compile cache daemon"
    ${JITCACHE_MAN_DIR}/jitcached.1 --see-also "jitcache(1), jitcache-ptxas(1)"
  DEPENDS jitcache_full jitcached ${PROJECT_SOURCE_DIR}/deploy/man/make_man.py
  VERBATIM)
add_custom_target(jitcache_man ALL DEPENDS ${JITCACHE_MAN_DIR}/jitcache.1
  ${JITCACHE_MAN_DIR}/jitcached.1)
install(FILES ${JITCACHE_MAN_DIR}/jitcache.1 ${JITCACHE_MAN_DIR}/jitcached.1
  ${PROJECT_SOURCE_DIR}/deploy/man/jitcache-ptxas.1
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT daemon)
install(FILES ${PROJECT_SOURCE_DIR}/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT daemon)

# The shared client library goes with the daemon's package: the NVRTC- and
# nvJitLink-compatible libraries load it (one copy of the client per
# process); its development link and headers go with -dev.
install(TARGETS jitcache_shared EXPORT jitcacheTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT daemon
    NAMELINK_COMPONENT dev
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/client/include/jitcache
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)
set(JITCACHE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/jitcache)
install(EXPORT jitcacheTargets NAMESPACE jitcache::
  DESTINATION ${JITCACHE_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/jitcacheConfig.cmake.in
  ${PROJECT_BINARY_DIR}/jitcacheConfig.cmake
  INSTALL_DESTINATION ${JITCACHE_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/jitcacheConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/jitcacheConfig.cmake
  ${PROJECT_BINARY_DIR}/jitcacheConfigVersion.cmake
  DESTINATION ${JITCACHE_CMAKE_DIR} COMPONENT dev)
# Relocatable: found from the .pc file's own place.
file(RELATIVE_PATH JITCACHE_PC_TO_PREFIX
  "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(${PROJECT_SOURCE_DIR}/cmake/jitcache.pc.in
  ${PROJECT_BINARY_DIR}/jitcache.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/jitcache.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)

set(CPACK_PACKAGE_NAME jitcache)
set(CPACK_PACKAGE_VENDOR "jitcache")
set(CPACK_PACKAGE_CONTACT "jitcache maintainers <jitcache@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "per-node CUDA compile cache")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL daemon dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
# Library dependencies from the binaries (dpkg-shlibdeps); the CUDA
# toolkit's libraries come from NVIDIA's installer, not a package, so
# they are left out and named in the description.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS ${CUDAToolkit_LIBRARY_DIR})
set(CPACK_DEBIAN_DAEMON_PACKAGE_NAME jitcache)
set(CPACK_DEBIAN_DAEMON_PACKAGE_DEPENDS "systemd")
set(CPACK_DEBIAN_DAEMON_DESCRIPTION
  "per-node CUDA compile cache: daemon, CLI and systemd units\n\
jitcached compiles CUDA C++ with NVRTC and links with nvJitLink once per\n\
distinct request and keeps the results in a bounded RocksDB store, shared\n\
by every job on the node over a Unix socket. Needs the CUDA toolkit\n\
(NVRTC, nvJitLink) in /usr/local/cuda.")
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/deploy/debian/conffiles
  ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
  ${PROJECT_SOURCE_DIR}/deploy/debian/prerm
  ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_STRICT_PERMISSION ON)
set(CPACK_DEBIAN_DEV_PACKAGE_NAME libjitcache-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libabsl-dev")
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION
  "client library of the jitcache CUDA compile cache\n\
libjitcache asks the node's jitcached for compiled CUDA objects and loads\n\
them through the driver's library API. find_package(jitcache) gives\n\
jitcache::client; pkg-config: jitcache.")
include(CPack)
