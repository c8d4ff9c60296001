#!/bin/sh
# The official image's first start, in short: a cluster whose superuser is
# POSTGRES_USER (password POSTGRES_PASSWORD), with the database POSTGRES_DB.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  printf '%s\n' "$POSTGRES_PASSWORD" > /tmp/password
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile=/tmp/password \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f /tmp/password
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    createdb -U "$POSTGRES_USER" "$POSTGRES_DB"
  fi
  pg_ctl -D "$PGDATA" -w stop >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*'
