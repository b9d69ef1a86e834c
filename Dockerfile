FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# as scripts/prepare.sh: npm 11 may refuse its own lockfile's optional per-platform packages
RUN npm ci --no-audit --no-fund || npm install --no-audit --no-fund
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# run as it is, the image refuses to start until it is configured: LOCALHOST (open dashboard,
# generated keys, no SSRF guard) is for one machine, and docker-compose.yml asks for it there
ENV APP_ENV=PRODUCTION
# a container listens on every interface of its own network; what reaches it is the host's choice
ENV LISTEN_HOST=0.0.0.0
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 4001 4002 4003 4004 4005 4006 4007 4008 4100
# one process per container is also fine: `node dist/suite.js api identity`, `... worker <queue>`
CMD ["node", "dist/suite.js", "start"]
