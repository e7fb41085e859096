//! Tests inside a running server (`cargo pgrx test`); each runs in a transaction rolled back after.

#[pgrx::pg_schema]
mod tests {
    use crate::id::Sno;
    use pgrx::prelude::*;

    #[pg_test]
    fn extension_is_installed() {
        let version = Spi::get_one::<String>(
            "SELECT extversion::text FROM pg_extension WHERE extname = 'sno'",
        );
        assert_eq!(version, Ok(Some("0.1.0".to_string())));
    }

    #[pg_test]
    fn type_is_ten_bytes_on_disk() {
        let size = Spi::get_one::<i32>("SELECT pg_column_size('brpk4q72xwf2m63l'::sno)");
        assert_eq!(size, Ok(Some(10)));
        let text = Spi::get_one::<String>("SELECT 'BRPK4Q72XWF2M63L'::sno::text");
        assert_eq!(text, Ok(Some("brpk4q72xwf2m63l".to_string())));
        let id = Spi::get_one::<Sno>("SELECT 'brpk4q72xwf2m63l'::sno");
        assert_eq!(id, Ok(Some("brpk4q72xwf2m63l".parse().unwrap())));
    }
}
