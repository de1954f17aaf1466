# The gantry image: `gantry` built in Release on Debian bookworm and installed with
# `cmake --install` (staged under /out), that install run on bookworm-slim with only the
# shared libraries gantry links, as a non-root user.
#
#   docker build -t gantry:latest .        (or: buildah bud -t gantry:latest .)
#   kind load docker-image gantry:latest   (or push it to a registry the nodes reach)
#
# tests/image/image_test.sh builds the runtime stage with the install of the build tree in
# place of the build stage's (--build-context build=...), and runs `gantry --version` in it.
ARG DEBIAN_RELEASE=bookworm
ARG GO_VERSION=1.26

# Go, for upstream's DRA CEL library that gantry links (src/dra/, scripts/dra/build-cel.sh):
# DeviceClasses such as NVIDIA's select devices in CEL.
FROM golang:${GO_VERSION}-${DEBIAN_RELEASE} AS go

FROM debian:${DEBIAN_RELEASE} AS build
ENV DEBIAN_FRONTEND=noninteractive
# What building gantry needs (scripts/setup.sh less the test, benchmark and fuzz tools:
# GANTRY_BUILD_TESTS=OFF below).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config ccache \
      libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libspdlog-dev \
      libcurl4-openssl-dev libcpp-httplib-dev libssl-dev libre2-dev \
 && rm -rf /var/lib/apt/lists/*
COPY --from=go /usr/local/go /usr/local/go
ENV PATH=/usr/local/go/bin:$PATH
WORKDIR /src
COPY . .
# The build users and packagers make (README, "Building from source"): Release, gantry alone,
# installed stripped. ccache's cache survives between builds where the builder keeps cache
# mounts.
RUN --mount=type=cache,target=/root/.cache/ccache --mount=type=cache,target=/root/go/pkg/mod \
    cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGANTRY_BUILD_TESTS=OFF \
      -DGANTRY_DRA_CEL=ON \
 && cmake --build /build \
 && DESTDIR=/out cmake --install /build --prefix /usr/local --strip

FROM debian:${DEBIAN_RELEASE}-slim AS runtime
ENV DEBIAN_FRONTEND=noninteractive
# The libraries `ldd gantry` names beyond libc and libstdc++ (and what they pull in).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libcurl4 libyaml-cpp0.7 libre2-9 libcpp-httplib0.11 \
 && rm -rf /var/lib/apt/lists/*
# bin/gantry, bin/kubectl-gantry, etc/gantry/gantry-config.yaml, share/gantry/deploy/.
COPY --from=build /out/usr/local/ /usr/local/
# deploy/deployment.yaml runs it as this UID too (runAsNonRoot needs a numeric user).
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/gantry"]
