# Kokkos for fegpu-kk (included by the top CMakeLists.txt before any target is made).
#
# A CPU build takes the installed Kokkos (find_package; 4.5 to 5.x). A CUDA build (FEGPU_CUDA=ON)
# takes an installed Kokkos that has the CUDA backend where there is one (Kokkos_ROOT, or the
# default places); otherwise it builds one with the project (FetchContent): from the release
# pinned below, checked by its SHA-256, or from FEGPU_KOKKOS_SOURCE (a source tree or an archive)
# on a machine without a network. That Kokkos compiles as CMake's CUDA language (no nvcc_wrapper),
# for the GPU architecture FEGPU_CUDA_ARCH, by default the first GPU's (nvidia-smi).
#
# Sets FEGPU_KOKKOS_LANGUAGE to CUDA where the project's sources must compile as CUDA
# (fegpu_compile_as_kokkos_language() at the end of the top CMakeLists.txt does so).

option(FEGPU_CUDA "Build for NVIDIA GPUs (Kokkos' CUDA backend; built with the project if none is installed)" OFF)
set(FEGPU_CUDA_ARCH "" CACHE STRING "The GPU's compute capability as nvcc writes it (90: H100, H200); empty: the first GPU's")
set(FEGPU_KOKKOS_SOURCE "" CACHE PATH "A Kokkos source tree or release archive to build from (no network needed)")
# The pinned release; its SHA-256 as published with it (and in Spack's kokkos package).
set(FEGPU_KOKKOS_URL "https://github.com/kokkos/kokkos/releases/download/5.0.0/kokkos-5.0.0.tar.gz")
set(FEGPU_KOKKOS_SHA256 "c45f3e19c3eb71fc8b7210cb04cac658015fc1839e7cc0571f7406588ff9bcef")
set(FEGPU_KOKKOS_LANGUAGE CXX)

# Called once every target is made: the project's targets (not Kokkos') compile their C++ sources
# as CUDA where Kokkos compiles as CMake's CUDA language.
function(fegpu_compile_as_kokkos_language)
  if(NOT FEGPU_KOKKOS_LANGUAGE STREQUAL "CUDA")
    return()
  endif()
  set(dirs ${PROJECT_SOURCE_DIR})
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
    foreach(sub IN LISTS subdirs)
      if(NOT sub MATCHES "/_deps/") # Kokkos itself (FetchContent)
        list(APPEND dirs ${sub})
      endif()
    endforeach()
    get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(t IN LISTS targets)
      get_target_property(type ${t} TYPE)
      if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
        continue()
      endif()
      get_target_property(sources ${t} SOURCES)
      get_target_property(source_dir ${t} SOURCE_DIR)
      foreach(s IN LISTS sources)
        if(s MATCHES "\\.cpp$")
          get_filename_component(s ${s} ABSOLUTE BASE_DIR ${source_dir})
          set_source_files_properties(${s} TARGET_DIRECTORY ${t} PROPERTIES LANGUAGE CUDA)
        endif()
      endforeach()
    endforeach()
  endwhile()
endfunction()

function(fegpu_check_kokkos_version)
  # The package's version file only accepts one major version, so check by hand.
  if(Kokkos_VERSION VERSION_LESS 4.5)
    message(FATAL_ERROR "fegpu-kk needs Kokkos >= 4.5, found ${Kokkos_VERSION} at ${Kokkos_DIR}")
  endif()
endfunction()

if(NOT FEGPU_CUDA)
  find_package(Kokkos REQUIRED)
  fegpu_check_kokkos_version()
  if(Kokkos_COMPILE_LANGUAGE STREQUAL "CUDA")
    set(FEGPU_KOKKOS_LANGUAGE CUDA)
  endif()
  message(STATUS "Kokkos ${Kokkos_VERSION}: devices ${Kokkos_DEVICES}")
  return()
endif()

# An installed Kokkos with CUDA: its configuration header says so (looked at first, so that a CPU
# Kokkos in the default places is not taken).
find_path(FEGPU_INSTALLED_KOKKOS KokkosCore_config.h HINTS ${Kokkos_ROOT} ENV Kokkos_ROOT PATH_SUFFIXES include
          NO_CACHE)
set(installed_cuda "")
if(FEGPU_INSTALLED_KOKKOS)
  file(STRINGS ${FEGPU_INSTALLED_KOKKOS}/KokkosCore_config.h installed_cuda REGEX "^#define KOKKOS_ENABLE_CUDA$")
endif()
if(installed_cuda)
  get_filename_component(prefix ${FEGPU_INSTALLED_KOKKOS} DIRECTORY)
  find_package(Kokkos REQUIRED HINTS ${prefix})
  fegpu_check_kokkos_version()
  if(Kokkos_COMPILE_LANGUAGE STREQUAL "CUDA")
    set(FEGPU_KOKKOS_LANGUAGE CUDA)
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD ${CMAKE_CXX_STANDARD})
    set(CMAKE_CUDA_ARCHITECTURES ${Kokkos_CUDA_ARCHITECTURES})
  endif()
  message(STATUS "Kokkos ${Kokkos_VERSION} (installed, ${Kokkos_DIR}): devices ${Kokkos_DEVICES}")
  return()
endif()

# None installed: build one for this GPU.
if(NOT FEGPU_CUDA_ARCH)
  find_program(FEGPU_NVIDIA_SMI nvidia-smi)
  if(FEGPU_NVIDIA_SMI)
    execute_process(COMMAND ${FEGPU_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE cap OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" cap "${cap}")
    string(REPLACE "." "" cap "${cap}")
    set(FEGPU_CUDA_ARCH ${cap} CACHE STRING "" FORCE)
  endif()
  if(NOT FEGPU_CUDA_ARCH)
    message(FATAL_ERROR "fegpu-kk: no GPU found to build Kokkos for; give its compute capability, "
                        "e.g. -DFEGPU_CUDA_ARCH=90 for an H100 or H200")
  endif()
  message(STATUS "fegpu-kk: building for the GPU found, compute capability ${FEGPU_CUDA_ARCH}")
endif()
set(arch_names 70 VOLTA70 72 VOLTA72 75 TURING75 80 AMPERE80 86 AMPERE86 87 AMPERE87 89 ADA89 90 HOPPER90
               100 BLACKWELL100 120 BLACKWELL120)
list(FIND arch_names ${FEGPU_CUDA_ARCH} at)
if(at LESS 0)
  message(FATAL_ERROR "fegpu-kk: FEGPU_CUDA_ARCH=${FEGPU_CUDA_ARCH} is none Kokkos knows (70 to 120, as nvcc writes them)")
endif()
math(EXPR at "${at} + 1")
list(GET arch_names ${at} arch)

enable_language(CUDA)
set(CMAKE_CUDA_STANDARD ${CMAKE_CXX_STANDARD})
set(CMAKE_CUDA_STANDARD_REQUIRED ON)
set(CMAKE_CUDA_ARCHITECTURES ${FEGPU_CUDA_ARCH})
set(Kokkos_ENABLE_CUDA ON CACHE BOOL "")
set(Kokkos_ENABLE_SERIAL ON CACHE BOOL "")
set(Kokkos_ENABLE_COMPILE_AS_CMAKE_LANGUAGE ON CACHE BOOL "")
set(Kokkos_ARCH_${arch} ON CACHE BOOL "")
set(Kokkos_ENABLE_IMPL_VIEW_LEGACY OFF CACHE BOOL "") # the current (mdspan) View, as Kokkos 5 has only
# nvcc 13 with C++20 lays out a View differently in its host and device passes where mdspan marks
# its members [[no_unique_address]]: a parallel_reduce then wrote through a null pointer on the
# device (kokkos/mdspan issue 434, kokkos pull request 8562). mdspan's own path for an nvcc that
# lacks the attribute leaves it out; Kokkos and every file of ours are compiled so, alike.
# FEGPU_KEEP_NO_UNIQUE_ADDRESS=ON builds without this, to see test_device fail as the runs did.
option(FEGPU_KEEP_NO_UNIQUE_ADDRESS "Leave mdspan's [[no_unique_address]] on (to reproduce the nvcc 13 failure)" OFF)
mark_as_advanced(FEGPU_KEEP_NO_UNIQUE_ADDRESS)
if(NOT FEGPU_KEEP_NO_UNIQUE_ADDRESS)
  add_compile_definitions(MDSPAN_IMPL_USE_ATTRIBUTE_NO_UNIQUE_ADDRESS=1 MDSPAN_IMPL_NO_UNIQUE_ADDRESS=)
endif()

include(FetchContent)
if(FEGPU_KOKKOS_SOURCE)
  get_filename_component(source ${FEGPU_KOKKOS_SOURCE} ABSOLUTE)
  if(NOT EXISTS ${source})
    message(FATAL_ERROR "fegpu-kk: FEGPU_KOKKOS_SOURCE=${FEGPU_KOKKOS_SOURCE} does not exist")
  endif()
  FetchContent_Declare(kokkos URL ${source}
                       PATCH_COMMAND ${CMAKE_COMMAND} -P ${CMAKE_CURRENT_LIST_DIR}/kokkos-cuda13.cmake)
  message(STATUS "fegpu-kk: building Kokkos from ${source} for ${arch}")
else()
  FetchContent_Declare(kokkos URL ${FEGPU_KOKKOS_URL} URL_HASH SHA256=${FEGPU_KOKKOS_SHA256}
                       PATCH_COMMAND ${CMAKE_COMMAND} -P ${CMAKE_CURRENT_LIST_DIR}/kokkos-cuda13.cmake)
  message(STATUS "fegpu-kk: building Kokkos from ${FEGPU_KOKKOS_URL} for ${arch}")
endif()
FetchContent_MakeAvailable(kokkos)
set(FEGPU_KOKKOS_LANGUAGE CUDA)
