# Switchboard in two stages. The build stage has the compilers: better-sqlite3
# compiles its native module there when no prebuilt one matches, and the
# console (vite) and the gateway (esbuild, build/gateway.mjs) are built. The
# final stage is node:24-bookworm-slim (Node 24 LTS) with the production dependencies, the built
# console and the bundle: no compilers, no sources, no dev dependencies, run
# by the unprivileged `node` user.
#
#   docker build -t switchboard .
#   docker run -p 3000:3000 -v switchboard-data:/data switchboard          # SQLite in /data, one worker
#   docker run -p 3000:3000 -e SQL_DSN=postgres://... -e SESSION_SECRET=... switchboard   # one worker per core

FROM node:24-bookworm AS build
# the full image carries python3, make and g++ for node-gyp
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim AS runtime
# MALLOC_ARENA_MAX: two malloc arenas instead of one per thread (README, Operations: 3 to 7 MiB less RSS)
ENV NODE_ENV=production PORT=3000 HOST=0.0.0.0 DATA_DIR=/data MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/build/gateway.mjs /app/build/gateway.mjs.map ./build/
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
# /healthz answers while the process lives (the orchestrator restarts it when not); load balancers read /readyz
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# the start command of `npm start` (package.json), without its build steps: the image is built already.
# WORKERS unset: one worker per core on PostgreSQL/MySQL, one on SQLite. SIGTERM stops every worker gracefully
# (SHUTDOWN_GRACE_SECONDS, default 60: give the container at least 75 s, e.g. docker stop -t 75).
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=40", "--enable-source-maps", "build/gateway.mjs"]
