# The server's container image: built in a Rust image, run in a small
# Debian one, as an unprivileged user.
#
#   docker build -t petstore-portfolio .
#   docker run -p 8080:8080 -v pp-data:/var/lib/petstore-portfolio petstore-portfolio
#
# Both images are build arguments: BUILDER_IMAGE must hold cargo and a C
# compiler (SQLite and ring are built from C); cargo-chef is installed into
# it unless it has it. BASE_IMAGE must be Debian (or derived from it) at
# least as new as the builder's C library. BUILT_FROM_COMMIT names the
# commit in `--version` and /metrics (there is no .git in the build).

ARG BUILDER_IMAGE=docker.io/library/rust:1.95-bookworm
ARG BASE_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${BUILDER_IMAGE} AS chef
WORKDIR /src
RUN command -v cargo-chef >/dev/null || cargo install cargo-chef --locked --version 0.1.78

# What the dependencies are, from the manifests and Cargo.lock alone: the
# next stage's expensive layer is kept until they change.
FROM chef AS planner
COPY . .
RUN cargo chef prepare --recipe-path recipe.json

FROM chef AS builder
COPY --from=planner /src/recipe.json recipe.json
RUN cargo chef cook --release --locked --package petstore-portfolio-server --recipe-path recipe.json
COPY . .
ARG BUILT_FROM_COMMIT=unknown
ARG SOURCE_DATE_EPOCH
# Stripped: the symbols would double the binary; a panic's message and
# location stay.
RUN BUILT_FROM_COMMIT="${BUILT_FROM_COMMIT}" \
    cargo build --release --locked --package petstore-portfolio-server --bin petstore-portfolio \
 && strip --strip-unneeded -o /usr/local/bin/petstore-portfolio target/release/petstore-portfolio

FROM ${BASE_IMAGE} AS runtime
# CA certificates: the server calls HTTPS peers (a Mastodon instance, an
# SMTP server over TLS) and checks them against the system's roots.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates \
 && apt-get clean \
 && rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin \
 && groupadd --system --gid 10001 petstore-portfolio \
 && useradd --system --uid 10001 --gid 10001 --no-create-home \
      --home-dir /var/lib/petstore-portfolio --shell /usr/sbin/nologin petstore-portfolio \
 && mkdir -p /var/lib/petstore-portfolio \
 && chown petstore-portfolio:petstore-portfolio /var/lib/petstore-portfolio
COPY --from=builder /usr/local/bin/petstore-portfolio /usr/local/bin/petstore-portfolio
USER 10001:10001
WORKDIR /var/lib/petstore-portfolio
# Every address of the container; the database, the .eml files and the
# backups in the volume.
ENV PETSTORE_PORTFOLIO_BIND=0.0.0.0:8080 \
    PETSTORE_PORTFOLIO_DATA_DIR=/var/lib/petstore-portfolio
VOLUME ["/var/lib/petstore-portfolio"]
EXPOSE 8080
# Readiness, asked by the binary itself (the image has no curl).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["petstore-portfolio", "healthcheck"]
# SIGTERM drains (http.shutdown_drain_secs) then stops; SIGHUP reloads.
STOPSIGNAL SIGTERM
ENTRYPOINT ["petstore-portfolio"]
CMD ["serve"]
