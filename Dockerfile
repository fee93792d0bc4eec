# syntax=docker/dockerfile:1
# Warden on Node 20 (Debian bookworm slim) with Debian's Chromium (the browser tool) and
# bubblewrap (the exec sandbox). The build stage installs the locked dependencies and compiles
# src/ and adapters/ to dist/ (scripts/build.mjs), which bin/warden.js runs. The sandbox needs
# user namespaces and an unmasked /proc inside the container: see compose.yaml's security_opt;
# `warden doctor` says what is missing when it fails.

FROM node:20-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary fits.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY adapters ./adapters
RUN npm ci --omit=dev --no-audit --no-fund \
 && npm run build

FROM node:20-slim
ENV NODE_ENV=production \
    WARDEN_DATA_DIR=/data \
    WARDEN_LOG_LEVEL=info
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium bubblewrap util-linux ca-certificates git tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 warden \
 && useradd --system --uid 10001 --gid warden --home-dir /home/warden --create-home --shell /usr/sbin/nologin warden \
 && mkdir -p /data /config /workspace \
 && chown warden:warden /data /workspace
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json package-lock.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY adapters ./adapters
COPY plugins ./plugins
COPY skills ./skills
COPY config ./config
COPY deploy/container.example.yaml /config/warden.config.yaml
USER warden
VOLUME ["/data", "/workspace"]
# 3000: web chat, 3004: ops listener (/healthz, /readyz, /metrics), as the container config binds them.
EXPOSE 3000 3004
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3004/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "/app/bin/warden.js"]
CMD ["start", "--config", "/config/warden.config.yaml"]
