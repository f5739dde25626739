# One image for every service; SERVICES picks which ones a container runs.
# Chromium comes from Debian (RENDER_GPU decides SwiftShader or the GPU at run time): its ANGLE
# reaches an NVIDIA GPU through glvnd's libEGL (libegl1), the bundled @sparticuz one does not.
FROM debian:bookworm-slim
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium libegl1 fonts-dejavu-core ca-certificates nodejs npm libjemalloc2 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# npm installs Node 24 from the registry (the `node` package); the scripts run on it.
RUN npm ci --omit=dev
COPY api ./api
COPY renderer ./renderer
COPY shared ./shared
COPY scripts ./scripts
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    CHROMIUM_PATH=/usr/bin/chromium \
    DATA_DIR=/data \
    MEDIA_DIR=/media
RUN useradd --system --create-home skinfarm && mkdir -p /data /media && chown skinfarm /data /media
USER skinfarm
EXPOSE 3000 3001 3002
HEALTHCHECK --interval=15s --timeout=3s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.HEALTH_PORT||3000)+(process.env.HEALTH_PATH||'/v1/status')).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node_modules/.bin/node", "api/main.ts"]
