# The firstfault Service and the dashboard it serves, from the same package.
#   docker build -t firstfault .
#   docker run -p 8080:8080 -e FIRSTFAULT_TOKENS='["<a long random secret>"]' firstfault
#   dashboard over a verdict store:  ... -e FIRSTFAULT_DB=postgresql+psycopg://user@db/firstfault firstfault
# Build stage: a wheel from the source tree. Run stage: that wheel only, run by a non-root user.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    FIRSTFAULT_HOST=0.0.0.0 FIRSTFAULT_PORT=8080
COPY --from=build /wheels /wheels
RUN whl=$(ls /wheels/*.whl) && pip install --no-cache-dir "${whl}[dashboard,postgres]" && rm -rf /wheels \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin firstfault
USER 10001
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:8080/healthz', timeout=4)"]
ENTRYPOINT ["firstfault", "serve"]
