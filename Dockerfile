# syntax=docker/dockerfile:1
#
# The CMS service in two stages: `build` installs every dependency and builds (npm ci runs the
# `prepare` script: the docs page, the compiled code in dist/ and the parsed contract the service
# reads at start, dist/openapi/cms.contract.bin, made by the same Node as the runtime stage's), then drops the development
# dependencies; the runtime image gets only what runs, as the unprivileged `node` user.
# Not built on the machines this project is developed on (no Docker engine there): see README "Docker".

ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
# SQLite (better-sqlite3) is compiled by `prepare` (scripts/sqlite.ts), against the headers the Node
# image ships in /usr/local/include/node (nodedir), so node-gyp downloads nothing; the image then
# recompiles it at -O2, the faster build (README "Installation").
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
WORKDIR /app
# Everything `npm ci` and its `prepare` step read (the contract, docs config, sources, scripts);
# .dockerignore keeps out node_modules, dist, tests, databases and local files.
COPY . .
RUN npm ci && npm run sqlite:build -- --optimize && npm prune --omit=dev

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Read at run time from the project root: package.json (marks the root), the contract, the
# migrations, the docs page; dist/ is the service; src/ and scripts/ serve the CLI and the
# migration script (`npm run cms`, `npm run db:migrate`) inside the container.
COPY --from=build /app/package.json /app/package-lock.json /app/tsconfig.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/docs ./docs
COPY --from=build /app/openapi ./openapi
COPY --from=build /app/prisma ./prisma
COPY --from=build /app/src ./src
COPY --from=build /app/scripts ./scripts
# The embedded SQLite default (file:./data/cms.db) writes here; mount a volume on it to keep it.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
# API; metrics when METRICS_PORT=9464 is set (off by default).
EXPOSE 3000 9464
# No curl in the slim image: Node's own fetch asks /readyz (database, and Redis when configured).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# node directly (not npm start): signals reach the supervisor, which stops its workers gracefully.
CMD ["node", "--max-semi-space-size=4", "dist/src/main.js"]
