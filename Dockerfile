# syntax=docker/dockerfile:1
#
# The CMS service in two stages: `build` installs every dependency and builds (the `prepare` script:
# the docs page, the compiled code in dist/ and the parsed contract the service reads at start,
# dist/openapi/cms.contract.bin, made by the same Node as the runtime stage's), then drops the
# development dependencies (tsx among them); the runtime image gets only what runs, as the
# unprivileged `node` user.
# Not built on the machines this project is developed on (no Docker engine there): see README "Docker".

# A pinned release of the current LTS line, Node.js 24, with the npm it ships (11.19 or later, which
# applies package.json's `allowScripts`); the same tag for both stages. On it the project loads
# better-sqlite3 13.x, whose prebuilt Node-API binary is in the package (packages/better-sqlite3;
# docs/contributing/node-versions.md): nothing is compiled, so the build stage needs no compiler
# and downloads nothing besides npm packages. A Node.js 20 image would need SQLite compiled, which
# this Dockerfile does not do.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# The dependencies first, in layers of their own that a change of the sources does not invalidate:
# only the lockfile (and the local better-sqlite3 package it links) decide them. `--ignore-scripts`
# because `prepare` needs the sources copied below; `npm rebuild` then runs the install scripts
# package.json's `allowScripts` permits (prisma, @swc/core, esbuild, unrs-resolver) and no other:
# `--strict-allow-scripts` fails the build on one it does not name.
COPY package.json package-lock.json ./
COPY packages ./packages
RUN npm ci --ignore-scripts \
  && npm rebuild --strict-allow-scripts
# Then everything `prepare` reads (the contract, docs config, sources, scripts); .dockerignore keeps
# out node_modules, dist, tests, databases and local files.
COPY . .
RUN npm run prepare && npm prune --omit=dev

FROM ${NODE_IMAGE} AS runtime
# glibc's malloc settings the supervisor gives its workers (workerEnvironment, src/supervisor.ts),
# here for every process of the image: a WORKERS=0 service and the CLI too.
ENV NODE_ENV=production MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536
WORKDIR /app
# Read at run time from the project root: package.json (marks the root), the contract, the
# migrations, the docs page; dist/ is the service and the compiled CLI (`node dist/src/cli/main.js`,
# which applies pending migrations itself), so neither src/ nor tsx is in the image. packages/ holds
# the local better-sqlite3 that node_modules/better-sqlite3 links to.
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/packages ./packages
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
