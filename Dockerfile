# The icepurge worker image (docker-compose.yml). Java is for the Spark engine.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml uv.lock requirements-uv.txt README.md ./
COPY icepurge icepurge
# The locked versions, hash-checked: uv bootstrapped by pip, then the rest from uv.lock.
RUN pip install --no-cache-dir --no-deps --require-hashes -r requirements-uv.txt \
    && uv export --locked --extra spark --extra azure --extra tracing --no-emit-project -o /tmp/locked.txt \
    && uv pip install --system --no-cache --require-hashes -r /tmp/locked.txt \
    && uv pip install --system --no-cache --no-deps .
ENTRYPOINT ["icepurge"]
CMD ["worker"]
