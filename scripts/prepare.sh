#!/usr/bin/env bash
# What `npm start` and `npm test` need on a fresh machine: dependencies installed from the lockfile
# (when node_modules is missing or older than the lockfile), MariaDB/MySQL and Redis answering, and,
# with --build, the compiled suite.
set -euo pipefail
# everything it says goes to stderr: `npm run --silent suite -- <command>` leaves stdout to the
# command's result
exec 1>&2
cd "$(dirname "$0")/.."

# `npm start` and `npm test` started together would both install into node_modules and both start
# a database server: the second waits for the first's preparation, then finds it done
# (flock is util-linux's, on every Debian; elsewhere, or with no writable temporary folder, the two
# are not kept apart)
if command -v flock >/dev/null && { exec 9>>"${TMPDIR:-/tmp}/business-services-suite-prepare-$(id -u).lock"; } 2>/dev/null; then
  if ! flock -n 9; then
    echo "waiting for another preparation of the suite (npm start or npm test) to end"
    # an install from scratch (packages, MariaDB) takes minutes, not a quarter of an hour
    flock -w 900 9 || { echo "the other preparation has not ended in 15 minutes" >&2; exit 1; }
  fi
fi

# Node.js 20.19+ or 22.12+ (package.json "engines"): jose 6 is an ES module the suite require()s,
# which Node before those versions refuses with an error that names neither. Debian 12's own
# nodejs is 18.
versao="$(node --version)"
IFS=. read -r maior menor _ <<<"${versao#v}"
if ! [[ "$maior" =~ ^[0-9]+$ && "$menor" =~ ^[0-9]+$ ]] || [ "$maior" -lt 20 ] || [ "$maior" -eq 21 ] || { [ "$maior" -eq 20 ] && [ "$menor" -lt 19 ]; } \
  || { [ "$maior" -eq 22 ] && [ "$menor" -lt 12 ]; }; then
  echo "Node.js 20.19 or later (22.12 or later in 22) is needed; this is $versao: install a current LTS (https://nodejs.org/en/download)" >&2
  exit 1
fi

# the build and the tests need the development dependencies too, which npm leaves out under
# NODE_ENV=production (set on many servers): asked for, and an install without them made again
if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ] \
  || [ ! -x node_modules/.bin/tsc ] || [ ! -x node_modules/.bin/jest ]; then
  echo "installing dependencies (npm ci)"
  # npm 11 may refuse its own lockfile's optional per-platform packages: install from it then,
  # leaving the lockfile as committed (--no-save)
  npm ci --include=dev --no-audit --no-fund || npm install --no-save --include=dev --no-audit --no-fund
fi
# without the lock's descriptor: a server it starts in the background would inherit it and hold the lock for good
bash scripts/ensure-services.sh 9>&-
if [ "${1:-}" = "--build" ]; then
  npm run --silent build
fi
