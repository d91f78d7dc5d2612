# One image for the api, worker and emulators processes (the command picks which).
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
ENV NODE_ENV=production BIND_HOST=0.0.0.0
CMD ["node", "--import", "tsx", "api/main.ts"]
