# syntax=docker/dockerfile:1
# The cdk8s-kruise runtime image for hosts with a Docker engine. It is the same image as the offline
# build (`npm run image`, src/image/): same entrypoint, user, working directory, environment and
# application files (both come from src/image/app.ts). Only the base differs: here distroless supplies
# Node 24, glibc, CA certificates and the nonroot user; offline they are taken from the build host.
# test/unit/image/dockerfile.test.ts keeps this file and src/image/spec.ts in step.

FROM node:24-bookworm AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: the `prepare` script needs the sources (not copied yet) and the npm `node`
# binary is not needed here (this image has Node 24); esbuild works without its postinstall.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY . .
# Bundles src/cli/main.ts with its production dependencies into /stage/app and links
# /stage/usr/local/bin/cdk8s-kruise to it: no node_modules reach the runtime image.
RUN node node_modules/tsx/dist/cli.mjs src/image/build.ts --stage-app /stage

FROM gcr.io/distroless/nodejs24-debian12:nonroot
COPY --from=build /stage/ /
USER 65532:65532
WORKDIR /home/nonroot
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
ENTRYPOINT ["/usr/local/bin/cdk8s-kruise"]
