# syntax=docker/dockerfile:1
# The sluice image: one runnable jar, every subcommand (topology, sender, fake-telegram, demo, plan).
#   docker build -t sluice .
#   docker run --rm sluice --help

# ---- build: the Maven reactor, tests skipped (CI runs them; the image only needs the jar) ----
FROM maven:3.9-eclipse-temurin-17 AS build
WORKDIR /src
# Poms first, so the dependency layer is cached until a pom changes.
COPY pom.xml ./
COPY schemas/pom.xml schemas/
COPY limits/pom.xml limits/
COPY testkit/pom.xml testkit/
COPY topology/pom.xml topology/
COPY sender/pom.xml sender/
COPY app/pom.xml app/
RUN --mount=type=cache,target=/root/.m2 mvn -B -q -pl app -am dependency:go-offline -DexcludeGroupIds=dev.sluice || true
COPY . .
RUN --mount=type=cache,target=/root/.m2 mvn -B -q -pl app -am package -DskipTests \
 && cp app/target/sluice.jar /sluice.jar

# ---- runtime: JRE only, non-root ----
FROM eclipse-temurin:17-jre
# The topology's state directory (state.dir; compose mounts a named volume there) exists and belongs to the
# image's user: Docker initialises a new named volume with the image directory's owner, so it is writable.
RUN groupadd --system sluice && useradd --system --gid sluice --home-dir /var/lib/sluice --create-home sluice \
 && mkdir -p /var/lib/sluice/streams \
 && chown -R sluice:sluice /var/lib/sluice
COPY --from=build /sluice.jar /app/sluice.jar
USER sluice
WORKDIR /var/lib/sluice
# Size the heap from the container's memory limit; logs go to stdout (SLUICE_LOG_FORMAT=json for JSON lines).
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75 -XX:+ExitOnOutOfMemoryError"
# Ops endpoints (/metrics, /health/live, /health/ready): topology 9464, sender 9465 (ops.port).
EXPOSE 9464 9465
ENTRYPOINT ["java","-jar","/app/sluice.jar"]
CMD ["--help"]
