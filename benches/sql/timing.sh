# Timing helpers of the SQL benchmarks, on top of scripts/cluster.sh. Source it; don't run it.
#
#   create_elapsed_ms DB   creates elapsed_ms(query text) in DB: the milliseconds EXECUTE of the
#                          query takes inside the server, without the client's round trip
#   median_of VALUES...    the median of numbers (the upper one of an even count)

create_elapsed_ms() {
    psql_in "$1" <<'SQL'
CREATE FUNCTION elapsed_ms(query text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE started timestamptz := clock_timestamp();
BEGIN
    EXECUTE query;
    RETURN extract(epoch FROM clock_timestamp() - started) * 1000;
END $$;
SQL
}

median_of() {
    printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"
}
