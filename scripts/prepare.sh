#!/usr/bin/env bash
# What `npm start` and `npm test` need on a fresh machine: dependencies installed from the lockfile
# (when node_modules is missing or older than the lockfile), MariaDB/MySQL and Redis answering, and,
# with --build, the compiled suite.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "installing dependencies (npm ci)"
  # npm 11 may refuse its own lockfile's optional per-platform packages: install from it then
  npm ci --no-audit --no-fund || npm install --no-audit --no-fund
fi
bash scripts/ensure-services.sh
if [ "${1:-}" = "--build" ]; then
  npm run --silent build
fi
