# Installs the library, its public headers, a CMake package and a pkg-config file.
include(CMakePackageConfigHelpers)

set(HIVED_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hived)

install(TARGETS hived_hived hived_hived_c
  EXPORT hivedTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  FILE_SET HEADERS DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT hivedTargets
  NAMESPACE hived::
  DESTINATION ${HIVED_CMAKE_DIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/hivedConfig.cmake.in
  ${PROJECT_BINARY_DIR}/hivedConfig.cmake
  INSTALL_DESTINATION ${HIVED_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/hivedConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/hivedConfig.cmake
  ${PROJECT_BINARY_DIR}/hivedConfigVersion.cmake
  DESTINATION ${HIVED_CMAKE_DIR})

# pkg-config, for cluster managers built with plain Makefiles. A static libhived needs its
# dependencies on the link line too, so they are listed in Libs.private / Requires.private.
if(BUILD_SHARED_LIBS)
  set(HIVED_PC_LIBS_PRIVATE "")
else()
  set(HIVED_PC_LIBS_PRIVATE "-lyaml-cpp")
endif()
# Relocatable: the prefix is found relative to the .pc file, so `cmake --install --prefix`
# anywhere works.
file(RELATIVE_PATH HIVED_PC_RELATIVE_PREFIX
     "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file(${PROJECT_SOURCE_DIR}/cmake/hived.pc.in ${PROJECT_BINARY_DIR}/hived.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/hived_c.pc.in ${PROJECT_BINARY_DIR}/hived_c.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hived.pc ${PROJECT_BINARY_DIR}/hived_c.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(HIVED_BUILD_SIM)
  install(TARGETS hived-sim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
