# The icepurge worker image (docker-compose.yml). Java is for the Spark engine.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY workflows workflows
COPY activities activities
COPY worker worker
COPY api api
COPY devstack devstack
RUN pip install --no-cache-dir .
ENTRYPOINT ["icepurge"]
CMD ["worker"]
