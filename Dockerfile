# kanon on Debian bookworm: builds, runs the unit tests, and starts the demo
# (throwaway PostgreSQL with demo data + kanon proxy on port 6432).
# The demo data (data/adult) is part of the repository: docker build -t kanon .
FROM debian:bookworm
RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends sudo && rm -rf /var/lib/apt/lists/*
WORKDIR /src/kanon
COPY scripts/install-deps.sh scripts/
RUN scripts/install-deps.sh
COPY . .
RUN scripts/build.sh build
ENV KANON_LISTEN=0.0.0.0:6432
EXPOSE 6432
CMD ["scripts/run.sh"]
