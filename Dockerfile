# The gantry image: `gantry` built in Release on Debian bookworm, run on bookworm-slim with
# only the shared libraries it links, as a non-root user.
#
#   docker build -t gantry:latest .        (or: buildah bud -t gantry:latest .)
#   kind load docker-image gantry:latest   (or push it to a registry the nodes reach)
#
# tests/image/image_test.sh builds the runtime stage with the binary of the build tree in
# place of the build stage (--build-context build=...), and runs `gantry --version` in it.
ARG DEBIAN_RELEASE=bookworm

FROM debian:${DEBIAN_RELEASE} AS build
ENV DEBIAN_FRONTEND=noninteractive
# What building gantry needs (scripts/setup.sh less the test, benchmark and fuzz tools;
# CMake looks for GoogleTest whatever is built).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config ccache \
      libgtest-dev libgmock-dev \
      libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev \
      libcurl4-openssl-dev libcpp-httplib-dev libssl-dev libre2-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# Release at -O2, the level the tests run at: GCC 12 at -O3 reports a false -Wrestrict in
# std::string's operator+ (a known GCC 12 regression), and warnings are errors. ccache's
# cache survives between builds where the builder keeps cache mounts.
RUN --mount=type=cache,target=/root/.cache/ccache \
    cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2 -DNDEBUG" \
      -DGANTRY_BENCH=OFF \
 && cmake --build /build --target gantry \
 && mkdir -p /out && cp /build/gantry /out/gantry && strip /out/gantry

FROM debian:${DEBIAN_RELEASE}-slim AS runtime
ENV DEBIAN_FRONTEND=noninteractive
# The libraries `ldd gantry` names beyond libc and libstdc++ (and what they pull in).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libcurl4 libyaml-cpp0.7 libre2-9 libcpp-httplib0.11 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/gantry /usr/local/bin/gantry
# deploy/deployment.yaml runs it as this UID too (runAsNonRoot needs a numeric user).
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/gantry"]
