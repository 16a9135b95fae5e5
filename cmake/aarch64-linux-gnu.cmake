# Cross-compiles OpenCANN for 64-bit Arm Linux with Debian's cross toolchain,
# so that the NEON kernels are built and tested on an x86 machine:
#   apt-get install g++-aarch64-linux-gnu qemu-user
#   dpkg --add-architecture arm64 && apt-get update
#   apt-get install libprotobuf-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 libflatbuffers-dev:arm64
#                   libpcre2-dev:arm64 libicu-dev:arm64 (and the others install_deps.sh --arm64 lists)
#   cmake -S . -B build-arm64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
#   ninja -C build-arm64 oc_unit_tests
#   qemu-aarch64 -L /usr/aarch64-linux-gnu build-arm64/oc_unit_tests --gtest_filter='Gemm*'
# (`make arm64-test` does all of this.) Code generators (protoc, flatc) and
# Python run on the build machine.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
