# syntax=docker/dockerfile:1
#
# The CMS service in two stages: `build` installs every dependency and builds (npm ci runs the
# `prepare` script: the docs page, the compiled code in dist/ and the parsed contract the service
# reads at start, dist/openapi/cms.contract.bin, made by the same Node as the runtime stage's), then drops the development
# dependencies; the runtime image gets only what runs, as the unprivileged `node` user.
# Not built on the machines this project is developed on (no Docker engine there): see README "Docker".

# A pinned release of a supported LTS line (Node.js 20 reached its end of life in April 2026); the
# same tag for both stages, so SQLite is compiled for the Node that runs it.
ARG NODE_IMAGE=node:22.21.1-bookworm-slim

FROM ${NODE_IMAGE} AS build
# SQLite (better-sqlite3) is compiled by `prepare` (scripts/sqlite.ts), against the headers the Node
# image ships in /usr/local/include/node (nodedir), so node-gyp downloads nothing; the image then
# recompiles it at -O2, the faster build (README "Installation").
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
WORKDIR /app
# The dependencies first, in layers of their own that a change of the sources does not invalidate:
# only the lockfile (and the SQLite build script) decide them. `--ignore-scripts` because `prepare`
# needs the sources copied below; the install scripts package.json's `allowScripts` permits are run
# by `npm rebuild`, and SQLite is compiled here at -O2 (a later `prepare` finds it current).
COPY package.json package-lock.json ./
COPY scripts/sqlite.ts scripts/tools.ts ./scripts/
COPY src/projectRoot.ts ./src/
RUN npm ci --ignore-scripts \
  && npm rebuild prisma @swc/core esbuild unrs-resolver \
  && npm run sqlite:build -- --optimize
# Then everything `prepare` reads (the contract, docs config, sources, scripts); .dockerignore keeps
# out node_modules, dist, tests, databases and local files.
COPY . .
RUN npm run prepare && npm prune --omit=dev

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Read at run time from the project root: package.json (marks the root), the contract, the
# migrations, the docs page; dist/ is the service and the compiled CLI (`node dist/src/cli/main.js`,
# which applies pending migrations itself), so neither src/ nor tsx is in the image.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/docs ./docs
COPY --from=build /app/openapi ./openapi
COPY --from=build /app/prisma ./prisma
# The embedded SQLite default (file:./data/cms.db) writes to /app/data, and `cms export` run in the
# container writes to /app/exports: both owned by `node`; mount volumes on them to keep what they hold.
RUN mkdir -p /app/data /app/exports && chown node:node /app/data /app/exports
USER node
# API; metrics when METRICS_PORT=9464 is set (off by default).
EXPOSE 3000 9464
# No curl in the slim image: Node's own fetch asks /readyz (database, and Redis when configured).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node directly (not npm start): signals reach the supervisor, which stops its workers gracefully.
CMD ["node", "--max-semi-space-size=4", "dist/src/main.js"]
