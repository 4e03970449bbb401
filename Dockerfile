# fedkit's image (README.md, "Deploy"): fedkit-controller-manager, its entrypoint, and
# fedkit-agent, which config/agent runs in pull-mode members (command /fedkit-agent):
#
#   make image                                  # docker build -t fedkit-controller-manager:dev
#   make image IMG=registry.example.com/fedkit/fedkit-controller-manager:v0.1.0 VERSION=v0.1.0
#
# Two stages: the Go toolchain builds a static binary (no cgo), which runs on distroless's
# static image (no shell, no package manager, CA certificates and tzdata only) as its
# nonroot user. BuildKit builds it for other platforms with --platform (the toolchain runs
# on the build machine and cross-compiles). .ko.yaml builds the same image with ko.
ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG TARGETOS=linux
ARG TARGETARCH=amd64
ARG VERSION=dev
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/fedkit-controller-manager ./cmd/fedkit-controller-manager
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/fedkit-agent ./cmd/fedkit-agent

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/fedkit-controller-manager /fedkit-controller-manager
COPY --from=build /out/fedkit-agent /fedkit-agent
USER 65532:65532
ENTRYPOINT ["/fedkit-controller-manager"]
