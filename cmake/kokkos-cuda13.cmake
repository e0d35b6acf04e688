# Run in a Kokkos source tree (FetchContent's patch step): CUDA 13 changed two runtime calls that
# Kokkos before 4.7.01 makes in core/src/Cuda/Kokkos_Cuda_Instance.hpp. cudaGraphAddDependencies
# gained an edge-data argument before the count, and cudaMemPrefetchAsync takes a cudaMemLocation
# and a flags word instead of a device number. Each call gets both forms behind CUDART_VERSION, as
# Kokkos 4.7.01 itself has them (kokkos pull request 8298); a tree that already has them, or is of
# another layout, is left as it is.
set(file core/src/Cuda/Kokkos_Cuda_Instance.hpp)
if(NOT EXISTS ${file})
  return()
endif()
file(READ ${file} text)
set(before "${text}")
string(REPLACE
  "    return cudaGraphAddDependencies(graph, from, to, numDependencies);"
  "#if CUDART_VERSION >= 13000
    return cudaGraphAddDependencies(graph, from, to, nullptr, numDependencies);
#else
    return cudaGraphAddDependencies(graph, from, to, numDependencies);
#endif"
  text "${text}")
string(REPLACE
  "    return cudaMemPrefetchAsync(devPtr, count, dstDevice, m_stream);"
  "#if CUDART_VERSION >= 13000
    cudaMemLocation location;
    location.type = cudaMemLocationTypeDevice;
    location.id = dstDevice;
    return cudaMemPrefetchAsync(devPtr, count, location, 0, m_stream);
#else
    return cudaMemPrefetchAsync(devPtr, count, dstDevice, m_stream);
#endif"
  text "${text}")
if(NOT text STREQUAL before)
  file(WRITE ${file} "${text}")
  message(STATUS "fegpu-kk: Kokkos_Cuda_Instance.hpp given the CUDA 13 forms of two runtime calls")
endif()
