# One image for the api, workers and migrate processes (the command picks which).
# Production runs compiled code: `npm run build` compiles to dist/ and bundles the workflow code
# once, so no TypeScript loader and no webpack run at start (docs/operations.md, "Processes").
# The provider emulators are not in it: they are a local stand-in with an image of their own
# (emulators/Dockerfile), and `npm run build` does not compile them.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build && npm run sdk:build

FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY --from=build /app/dist ./dist
# The client SDK the dashboard host serves (npm install <url>, <script type="module">).
COPY --from=build /app/sdk/package.json /app/sdk/README.md ./sdk/
COPY --from=build /app/sdk/dist ./sdk/dist
ENV NODE_ENV=production BIND_HOST=0.0.0.0
CMD ["node", "--enable-source-maps", "--single-threaded-gc", "dist/api/main.js"]
