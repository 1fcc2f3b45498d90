# `cmake --install`: headers, libgraphrt, the apps and a CMake package config,
# so a C++ user writes find_package(graphrt) and links graphrt::graphrt.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS graphrt EXPORT graphrtTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/graphrt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# TVM's header paths (v0.18's tvm/runtime/c_runtime_api.h, module.h, ...; v0.22+'s tvm/ffi/*.h
# and tvm/runtime/tensor.h): code written against TVM's runtime API builds against graphrt unchanged.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/include/tvm DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Installed apps find the installed libgraphrt next to them (RUNPATH $ORIGIN/../lib), so
# prefix/bin/graphrt-run starts without LD_LIBRARY_PATH wherever the prefix is moved.
file(RELATIVE_PATH graphrt_bin_to_lib ${CMAKE_INSTALL_FULL_BINDIR} ${CMAKE_INSTALL_FULL_LIBDIR})
foreach(app graphrt_run graphrt_inspect graphrt_pack graphrt_vm_asm graphrt_vm_run runtime_bench)
  if(TARGET ${app})
    set_target_properties(${app} PROPERTIES INSTALL_RPATH "$ORIGIN/${graphrt_bin_to_lib}")
    install(TARGETS ${app} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()
# graphrt-serve (where built: sanitizer builds make it on request only) and the .proto files
# of its gRPC service, from which clients generate their stubs (docs/serving.md).
if(TARGET graphrt_serve AND NOT (GRAPHRT_SANITIZE OR GRAPHRT_FUZZ OR GRAPHRT_TSAN))
  set_target_properties(graphrt_serve PROPERTIES INSTALL_RPATH "$ORIGIN/${graphrt_bin_to_lib}")
  install(TARGETS graphrt_serve RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${CMAKE_SOURCE_DIR}/apps/serve/protocol/grpc_service.proto
                ${CMAKE_SOURCE_DIR}/apps/serve/protocol/health.proto
          DESTINATION ${CMAKE_INSTALL_DATADIR}/graphrt/proto)
endif()

install(EXPORT graphrtTargets NAMESPACE graphrt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/graphrt)
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/graphrtConfig.cmake.in
  ${CMAKE_BINARY_DIR}/graphrtConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/graphrt)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/graphrtConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/graphrtConfig.cmake ${CMAKE_BINARY_DIR}/graphrtConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/graphrt)

# pkg-config: `c++ -std=c++17 app.cc $(pkg-config --cflags --libs graphrt)` for builds without CMake.
file(RELATIVE_PATH graphrt_pc_to_prefix ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${CMAKE_SOURCE_DIR}/cmake/graphrt.pc.in ${CMAKE_BINARY_DIR}/graphrt.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/graphrt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# dlpack/dlpack.h, which graphrt's public headers include: installed with them, so a
# find_package(graphrt) consumer builds on a machine without libdlpack-dev.
install(FILES ${DLPACK_INCLUDE_DIR}/dlpack/dlpack.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/dlpack)

# The Python package, into PREFIX/lib/pythonX.Y/site-packages: the folder a virtual environment
# at PREFIX reads (elsewhere, PYTHONPATH names it). _install_location.py tells the package where
# the installed libgraphrt is, relative to itself, so no environment variable is needed and the
# prefix may be moved as a whole.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(Python3_FOUND)
  set(GRAPHRT_PYTHON_INSTALL_DIR "lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages"
    CACHE STRING "Where cmake --install puts the graphrt Python package (relative to the prefix)")
  install(DIRECTORY ${CMAKE_SOURCE_DIR}/python/graphrt DESTINATION ${GRAPHRT_PYTHON_INSTALL_DIR}
    PATTERN "__pycache__" EXCLUDE PATTERN "*.pyc" EXCLUDE PATTERN "_install_location.py" EXCLUDE)
  file(RELATIVE_PATH graphrt_python_to_lib ${CMAKE_INSTALL_PREFIX}/${GRAPHRT_PYTHON_INSTALL_DIR}/graphrt
    ${CMAKE_INSTALL_FULL_LIBDIR})
  file(WRITE ${CMAKE_BINARY_DIR}/python_install_location.py
    "# Written by cmake --install: the installed libgraphrt's folder, relative to this package.\n"
    "LIBRARY_DIR = \"${graphrt_python_to_lib}\"\n")
  install(FILES ${CMAKE_BINARY_DIR}/python_install_location.py DESTINATION ${GRAPHRT_PYTHON_INSTALL_DIR}/graphrt
    RENAME _install_location.py)
endif()
