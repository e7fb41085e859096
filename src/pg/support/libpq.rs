//! libpq from inside the server: one query at a time to another PostgreSQL, with a deadline, and
//! a shutdown that interrupts it (the partition lease's worker talks to its registry this way).
//!
//! Why libpq, loaded with `dlopen` when first needed, and not a Rust client:
//! - libpq is what PostgreSQL's own server code uses to reach another server (logical
//!   replication, postgres_fdw, dblink), so connection strings, `.pgpass`, `PGSERVICE`, TLS and
//!   every authentication method behave exactly as the DBA knows them from psql.
//! - Rust clients (`postgres`, `tokio-postgres`, `sqlx`) bring an async runtime with threads of
//!   their own into a PostgreSQL process, where only the main thread may touch anything of the
//!   server's; bindings such as `pq-sys` link libpq into `sno.so`, and PostgreSQL's own libpq
//!   wrappers (`libpq-be-fe-helpers.h`) are header-only C that Rust cannot call.
//! - Loaded on first use, libpq is a dependency only of servers that use a registry: `sno.so`
//!   itself needs no libpq to load, and a server without one says so when it needs it.
//!
//! The waits are the server's (`WaitLatchOrSocket`), as in PostgreSQL's own
//! `libpq-be-fe-helpers.h`: a SIGTERM (`background_worker::end_if_asked`) or the postmaster's
//! death ends them at once, and every wait has the caller's deadline, the host names' look-ups
//! included (`host_names`). Errors carry libpq's message, which names the host but never the
//! password of the connection string.

use crate::pg::support::{background_worker, host_names};
use pgrx::pg_sys;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

type Conn = c_void;
type Res = c_void;

/// The libpq functions used here, looked up once.
struct Functions {
    connect_start_params:
        unsafe extern "C" fn(*const *const c_char, *const *const c_char, c_int) -> *mut Conn,
    connect_poll: unsafe extern "C" fn(*mut Conn) -> c_int,
    status: unsafe extern "C" fn(*const Conn) -> c_int,
    socket: unsafe extern "C" fn(*const Conn) -> c_int,
    error_message: unsafe extern "C" fn(*const Conn) -> *const c_char,
    finish: unsafe extern "C" fn(*mut Conn),
    set_nonblocking: unsafe extern "C" fn(*mut Conn, c_int) -> c_int,
    send_query_params: unsafe extern "C" fn(
        *mut Conn,
        *const c_char,
        c_int,
        *const pg_sys::Oid,
        *const *const c_char,
        *const c_int,
        *const c_int,
        c_int,
    ) -> c_int,
    flush: unsafe extern "C" fn(*mut Conn) -> c_int,
    consume_input: unsafe extern "C" fn(*mut Conn) -> c_int,
    is_busy: unsafe extern "C" fn(*mut Conn) -> c_int,
    get_result: unsafe extern "C" fn(*mut Conn) -> *mut Res,
    result_status: unsafe extern "C" fn(*const Res) -> c_int,
    result_error_field: unsafe extern "C" fn(*const Res, c_int) -> *const c_char,
    ntuples: unsafe extern "C" fn(*const Res) -> c_int,
    nfields: unsafe extern "C" fn(*const Res) -> c_int,
    get_value: unsafe extern "C" fn(*const Res, c_int, c_int) -> *const c_char,
    get_is_null: unsafe extern "C" fn(*const Res, c_int, c_int) -> c_int,
    clear: unsafe extern "C" fn(*mut Res),
    conninfo_parse: unsafe extern "C" fn(*const c_char, *mut *mut c_char) -> *mut ConninfoOption,
    conninfo_free: unsafe extern "C" fn(*mut ConninfoOption),
}

/// libpq-fe.h's `PQconninfoOption`.
#[repr(C)]
struct ConninfoOption {
    keyword: *const c_char,
    envvar: *const c_char,
    compiled: *const c_char,
    val: *const c_char,
    label: *const c_char,
    dispchar: *const c_char,
    dispsize: c_int,
}

/// Whether `conninfo` gives a password (as `password=` or `sslpassword=`, or in a URI), or
/// `None` if it is not a connection string libpq can read. libpq's own message is not asked for: it can quote the
/// string.
pub(crate) fn gives_password(conninfo: &CStr) -> Result<Option<bool>, Failure> {
    let Ok(options) = parsed(functions()?, conninfo) else {
        return Ok(None);
    };
    Ok(Some(options.iter().any(|(keyword, value)| {
        (keyword == "password" || keyword == "sslpassword") && !value.is_empty()
    })))
}

/// The options of a connection string libpq can read, as (keyword, value) pairs; an error that
/// does not quote it otherwise.
fn parsed(libpq: &Functions, conninfo: &CStr) -> Result<Vec<(String, String)>, Failure> {
    // SAFETY: a NUL-terminated string; no message is asked for; the options are freed below.
    let options = unsafe { (libpq.conninfo_parse)(conninfo.as_ptr(), std::ptr::null_mut()) };
    if options.is_null() {
        return Err(Failure::Connect(
            "the connection string is not one libpq can read".into(),
        ));
    }
    let mut pairs = Vec::new();
    // SAFETY: an array that ends with an option whose keyword is NULL.
    unsafe {
        let mut option = options;
        while !(*option).keyword.is_null() {
            if !(*option).val.is_null() {
                pairs.push((
                    CStr::from_ptr((*option).keyword)
                        .to_string_lossy()
                        .into_owned(),
                    CStr::from_ptr((*option).val).to_string_lossy().into_owned(),
                ));
            }
            option = option.add(1);
        }
        (libpq.conninfo_free)(options);
    }
    Ok(pairs)
}

// libpq-fe.h's values, stable since libpq 5.
const CONNECTION_OK: c_int = 0;
const PGRES_POLLING_FAILED: c_int = 0;
const PGRES_POLLING_READING: c_int = 1;
const PGRES_POLLING_WRITING: c_int = 2;
const PGRES_POLLING_OK: c_int = 3;
const PGRES_TUPLES_OK: c_int = 2;
const PG_DIAG_SQLSTATE: c_int = b'C' as c_int;
const PG_DIAG_MESSAGE_PRIMARY: c_int = b'M' as c_int;

/// What went wrong talking to another server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// libpq could not be loaded.
    NoLibpq(String),
    /// No connection: libpq's message (it names the host, never the password).
    Connect(String),
    /// The deadline passed first.
    TimedOut,
    /// The server answered with an error.
    Sql { sqlstate: String, message: String },
    /// The connection broke while the query ran.
    Lost(String),
}

impl Failure {
    pub(crate) fn message(&self) -> String {
        match self {
            Failure::NoLibpq(why) => format!("libpq could not be loaded: {why}"),
            Failure::Connect(why) => format!("could not connect: {why}"),
            Failure::TimedOut => "no answer within the time allowed".into(),
            Failure::Sql { sqlstate, message } => format!("{message} (SQLSTATE {sqlstate})"),
            Failure::Lost(why) => format!("the connection broke: {why}"),
        }
    }
}

static LOADED: OnceLock<Result<Functions, String>> = OnceLock::new();

fn functions() -> Result<&'static Functions, Failure> {
    LOADED
        .get_or_init(load)
        .as_ref()
        .map_err(|why| Failure::NoLibpq(why.clone()))
}

/// Opens libpq: the server installation's own (`$libdir`, where relocatable builds keep it),
/// else the system's.
fn load() -> Result<Functions, String> {
    // SAFETY: pkglib_path is a NUL-terminated path set at start-up.
    let libdir = unsafe { CStr::from_ptr((&raw const pg_sys::pkglib_path).cast::<c_char>()) };
    let candidates = [
        format!("{}/libpq.so.5", libdir.to_string_lossy()),
        "libpq.so.5".to_string(),
    ];
    let mut handle = std::ptr::null_mut();
    for candidate in &candidates {
        let path = CString::new(candidate.as_str()).map_err(|error| error.to_string())?;
        // SAFETY: dlopen with a NUL-terminated path; the library stays loaded for the process.
        handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if !handle.is_null() {
            break;
        }
    }
    if handle.is_null() {
        // SAFETY: dlerror's message for the last failure, copied at once.
        let why = unsafe { libc::dlerror() };
        return Err(if why.is_null() {
            "libpq.so.5 was not found".into()
        } else {
            unsafe { CStr::from_ptr(why) }
                .to_string_lossy()
                .into_owned()
        });
    }
    // SAFETY: each symbol is libpq's function of that name, whose C signature the field declares.
    unsafe {
        Ok(Functions {
            connect_start_params: function(handle, c"PQconnectStartParams")?,
            connect_poll: function(handle, c"PQconnectPoll")?,
            status: function(handle, c"PQstatus")?,
            socket: function(handle, c"PQsocket")?,
            error_message: function(handle, c"PQerrorMessage")?,
            finish: function(handle, c"PQfinish")?,
            set_nonblocking: function(handle, c"PQsetnonblocking")?,
            send_query_params: function(handle, c"PQsendQueryParams")?,
            flush: function(handle, c"PQflush")?,
            consume_input: function(handle, c"PQconsumeInput")?,
            is_busy: function(handle, c"PQisBusy")?,
            get_result: function(handle, c"PQgetResult")?,
            result_status: function(handle, c"PQresultStatus")?,
            result_error_field: function(handle, c"PQresultErrorField")?,
            ntuples: function(handle, c"PQntuples")?,
            nfields: function(handle, c"PQnfields")?,
            get_value: function(handle, c"PQgetvalue")?,
            get_is_null: function(handle, c"PQgetisnull")?,
            clear: function(handle, c"PQclear")?,
            conninfo_parse: function(handle, c"PQconninfoParse")?,
            conninfo_free: function(handle, c"PQconninfoFree")?,
        })
    }
}

/// The function `name` of the library `handle`, as `F`.
///
/// # Safety
/// `F` must be the type of a pointer to that function.
unsafe fn function<F>(handle: *mut c_void, name: &CStr) -> Result<F, String> {
    assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
    // SAFETY: a lookup in a library dlopen returned.
    let address = unsafe { libc::dlsym(handle, name.as_ptr()) };
    if address.is_null() {
        return Err(format!("libpq has no {}", name.to_string_lossy()));
    }
    // SAFETY: the caller's promise; the sizes are equal.
    Ok(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&address) })
}

/// One connection, closed when dropped.
pub(crate) struct Connection {
    libpq: &'static Functions,
    conn: *mut Conn,
    deadline: Instant,
}

/// A query's rows: each row's columns, `None` for NULL.
pub(crate) type Rows = Vec<Vec<Option<String>>>;

impl Connection {
    /// Connects with `conninfo`, giving up at `deadline`: its host names are looked up first,
    /// within the deadline, and given to libpq as `hostaddr` (`host_names`).
    pub(crate) fn open(conninfo: &CStr, deadline: Instant) -> Result<Connection, Failure> {
        let libpq = functions()?;
        let options = parsed(libpq, conninfo)?;
        let value = |keyword: &str| {
            options
                .iter()
                .find(|(name, _)| name == keyword)
                .map(|(_, value)| value.clone())
                .unwrap_or_default()
        };
        let resolved = match value("hostaddr").is_empty() {
            true => host_names::resolved_within(&value("host"), &value("port"), deadline)
                .map_err(Failure::Connect)?,
            false => None,
        };
        // The connection string first, expanded (expand_dbname), then the lists over it.
        let resolved: Vec<CString> = resolved
            .into_iter()
            .flatten()
            .map(|list| CString::new(list).expect("no NUL in a connection string's lists"))
            .collect();
        let mut keywords = vec![c"dbname".as_ptr()];
        let mut values = vec![conninfo.as_ptr()];
        for (keyword, list) in [c"host", c"hostaddr", c"port"].iter().zip(&resolved) {
            keywords.push(keyword.as_ptr());
            values.push(list.as_ptr());
        }
        keywords.push(std::ptr::null());
        values.push(std::ptr::null());
        // SAFETY: NULL-terminated arrays of NUL-terminated strings, alive during the call;
        // libpq copies what it needs.
        let conn = unsafe { (libpq.connect_start_params)(keywords.as_ptr(), values.as_ptr(), 1) };
        if conn.is_null() {
            return Err(Failure::Connect("out of memory".into()));
        }
        let connection = Connection {
            libpq,
            conn,
            deadline,
        };
        connection.finish_connecting()?;
        // SAFETY: a connection that is up.
        if unsafe { (libpq.set_nonblocking)(conn, 1) } != 0 {
            return Err(Failure::Connect(connection.error()));
        }
        Ok(connection)
    }

    fn finish_connecting(&self) -> Result<(), Failure> {
        // SAFETY: PQconnectStart's connection, until PQfinish.
        if unsafe { (self.libpq.status)(self.conn) } == 1 {
            return Err(Failure::Connect(self.error())); // CONNECTION_BAD
        }
        let mut polling = PGRES_POLLING_WRITING;
        loop {
            let event = match polling {
                PGRES_POLLING_OK => break,
                PGRES_POLLING_FAILED => return Err(Failure::Connect(self.error())),
                PGRES_POLLING_READING => pg_sys::WL_SOCKET_READABLE,
                _ => pg_sys::WL_SOCKET_WRITEABLE,
            };
            self.wait_for_socket(event)?;
            // SAFETY: as above.
            polling = unsafe { (self.libpq.connect_poll)(self.conn) };
        }
        // SAFETY: as above.
        if unsafe { (self.libpq.status)(self.conn) } != CONNECTION_OK {
            return Err(Failure::Connect(self.error()));
        }
        Ok(())
    }

    /// Runs `sql` with text `parameters` and returns its rows.
    pub(crate) fn query(&self, sql: &CStr, parameters: &[Option<&str>]) -> Result<Rows, Failure> {
        let owned: Vec<Option<CString>> = parameters
            .iter()
            .map(|value| value.map(|text| CString::new(text).expect("no NUL in a parameter")))
            .collect();
        let pointers: Vec<*const c_char> = owned
            .iter()
            .map(|value| {
                value
                    .as_ref()
                    .map_or(std::ptr::null(), |text| text.as_ptr())
            })
            .collect();
        // SAFETY: the text and parameters live until the call returns; libpq copies them.
        let sent = unsafe {
            (self.libpq.send_query_params)(
                self.conn,
                sql.as_ptr(),
                pointers.len() as c_int,
                std::ptr::null(),
                pointers.as_ptr(),
                std::ptr::null(),
                std::ptr::null(),
                0,
            )
        };
        if sent == 0 {
            return Err(Failure::Lost(self.error()));
        }
        self.flush()?;
        self.collect_results()
    }

    fn flush(&self) -> Result<(), Failure> {
        loop {
            // SAFETY: a live connection.
            match unsafe { (self.libpq.flush)(self.conn) } {
                0 => return Ok(()),
                1 => {
                    self.wait_for_socket(pg_sys::WL_SOCKET_READABLE | pg_sys::WL_SOCKET_WRITEABLE)?
                }
                _ => return Err(Failure::Lost(self.error())),
            }
            // SAFETY: a live connection.
            if unsafe { (self.libpq.consume_input)(self.conn) } == 0 {
                return Err(Failure::Lost(self.error()));
            }
        }
    }

    fn wait_for_results(&self) -> Result<(), Failure> {
        // SAFETY: a live connection.
        while unsafe { (self.libpq.is_busy)(self.conn) } != 0 {
            self.wait_for_socket(pg_sys::WL_SOCKET_READABLE)?;
            // SAFETY: a live connection.
            if unsafe { (self.libpq.consume_input)(self.conn) } == 0 {
                return Err(Failure::Lost(self.error()));
            }
        }
        Ok(())
    }

    /// Reads every result of the query (libpq needs them all read): the first error, else the
    /// last result's rows.
    fn collect_results(&self) -> Result<Rows, Failure> {
        let mut rows = None;
        let mut error = None;
        loop {
            self.wait_for_results()?;
            // SAFETY: a live connection; each result is cleared below.
            let result = unsafe { (self.libpq.get_result)(self.conn) };
            if result.is_null() {
                break;
            }
            match self.read_result(result) {
                Ok(these) => rows = Some(these),
                Err(failure) => {
                    error.get_or_insert(failure);
                }
            }
            // SAFETY: a result libpq returned, cleared once.
            unsafe { (self.libpq.clear)(result) };
        }
        match (error, rows) {
            (Some(failure), _) => Err(failure),
            (None, Some(rows)) => Ok(rows),
            (None, None) => Err(Failure::Lost("no result".into())),
        }
    }

    fn read_result(&self, result: *mut Res) -> Result<Rows, Failure> {
        let libpq = self.libpq;
        // SAFETY: reads of a result that lives until cleared; strings are copied at once.
        unsafe {
            if (libpq.result_status)(result) != PGRES_TUPLES_OK {
                let field = |code| {
                    let text = (libpq.result_error_field)(result, code);
                    (!text.is_null()).then(|| CStr::from_ptr(text).to_string_lossy().into_owned())
                };
                return Err(Failure::Sql {
                    sqlstate: field(PG_DIAG_SQLSTATE).unwrap_or_else(|| "XX000".into()),
                    message: field(PG_DIAG_MESSAGE_PRIMARY).unwrap_or_else(|| self.error()),
                });
            }
            let rows = (0..(libpq.ntuples)(result)).map(|row| {
                (0..(libpq.nfields)(result))
                    .map(|column| {
                        ((libpq.get_is_null)(result, row, column) == 0).then(|| {
                            CStr::from_ptr((libpq.get_value)(result, row, column))
                                .to_string_lossy()
                                .into_owned()
                        })
                    })
                    .collect()
            });
            Ok(rows.collect())
        }
    }

    /// Waits until the socket is ready for `events`, the deadline passes (an error), or a
    /// SIGTERM (`background_worker::end_if_asked`) or the postmaster's death ends the process.
    fn wait_for_socket(&self, events: u32) -> Result<(), Failure> {
        loop {
            let left = self.deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Failure::TimedOut);
            }
            // SAFETY: a live connection's socket, waited on with this process's latch.
            let woken = unsafe {
                pg_sys::WaitLatchOrSocket(
                    pg_sys::MyLatch,
                    (pg_sys::WL_LATCH_SET
                        | pg_sys::WL_TIMEOUT
                        | pg_sys::WL_EXIT_ON_PM_DEATH
                        | events) as c_int,
                    (self.libpq.socket)(self.conn),
                    millis(left),
                    pg_sys::PG_WAIT_EXTENSION,
                )
            } as u32;
            if woken & pg_sys::WL_LATCH_SET != 0 {
                // SAFETY: this process's own latch.
                unsafe { pg_sys::ResetLatch(pg_sys::MyLatch) };
                background_worker::end_if_asked();
            }
            if woken & events != 0 {
                return Ok(());
            }
        }
    }

    fn error(&self) -> String {
        // SAFETY: libpq's message for this connection, copied at once.
        let text = unsafe { CStr::from_ptr((self.libpq.error_message)(self.conn)) };
        text.to_string_lossy().trim_end().to_string()
    }
}

fn millis(duration: Duration) -> std::ffi::c_long {
    duration.as_millis().clamp(1, i32::MAX as u128) as std::ffi::c_long
}

impl Drop for Connection {
    fn drop(&mut self) {
        // SAFETY: the connection is closed once, here.
        unsafe { (self.libpq.finish)(self.conn) };
    }
}
