//! The PostgreSQL extension: a thin mapping of the core onto SQL.

pgrx::pg_module_magic!();

#[cfg(any(test, feature = "pg_test"))]
#[pgrx::pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn extension_is_installed() {
        let version = Spi::get_one::<String>(
            "SELECT extversion::text FROM pg_extension WHERE extname = 'sno'",
        );
        assert_eq!(version, Ok(Some("0.1.0".to_string())));
    }
}
