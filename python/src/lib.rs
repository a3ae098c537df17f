//! The `tern_client._core` extension: Python objects in and out of
//! tern-client, with the GIL released for every network round trip.
//!
//! Conversion only: routing, batching, pools and failure handling are all
//! tern-client's. The front doors (`Redis`, `CacheClient`) subclass the
//! classes here and add the pure-Python conveniences.
#![forbid(unsafe_code)]
// pyo3 0.22's #[pymethods] expansion converts PyErr into itself.
#![allow(clippy::useless_conversion)]

use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyUnicodeDecodeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple, PyType};

use tern_client::{
    Error, FailurePolicy, GetOpts, Handshake, Hashing, Item, MetaClient, Options, RespClient, SetMode, SetOpts,
    Stored, Value,
};

// ---- errors -------------------------------------------------------------

static EXCEPTIONS: GILOnceCell<Py<PyModule>> = GILOnceCell::new();

fn exc_type<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    let m = EXCEPTIONS.get_or_try_init(py, || py.import_bound("tern_client.exceptions").map(|m| m.unbind()))?;
    Ok(m.bind(py).getattr(name)?.downcast_into::<PyType>()?)
}

fn exc_instance(py: Python<'_>, name: &str, msg: String) -> PyResult<PyObject> {
    Ok(exc_type(py, name)?.call1((msg,))?.unbind())
}

fn to_pyerr(py: Python<'_>, e: Error) -> PyErr {
    let name = match &e {
        Error::Connection { .. } => "ConnectionError",
        Error::Timeout { .. } => "TimeoutError",
        Error::ServerDown { .. } => "ServerDownError",
        Error::PoolExhausted { .. } => "PoolExhaustedError",
        Error::Handshake { message, .. } if is_auth_error(message) => "AuthenticationError",
        Error::Handshake { .. } => "ConnectionError",
        Error::Protocol { .. } => "InvalidResponse",
        Error::Server(m) if m.starts_with(b"WATCHERROR") => "WatchError",
        Error::Server(_) => "ResponseError",
        Error::Invalid(_) => "DataError",
    };
    let msg = match &e {
        Error::Server(m) => response_message(m),
        e => e.to_string(),
    };
    match exc_type(py, name) {
        Ok(t) => PyErr::from_type_bound(t, msg),
        Err(err) => err,
    }
}

/// An error reply's message as redis-py gives it: without the `ERR ` code,
/// whole for any other code.
fn response_message(m: &[u8]) -> String {
    String::from_utf8_lossy(m.strip_prefix(b"ERR ").unwrap_or(m)).into_owned()
}

fn is_auth_error(m: &[u8]) -> bool {
    m.starts_with(b"WRONGPASS") || m.starts_with(b"NOAUTH") || m.starts_with(b"ERR invalid password")
}

// ---- arguments ----------------------------------------------------------

/// A command argument as redis-py encodes it: bytes as is, str as UTF-8,
/// int and float as their decimal text; bool and None are refused.
fn arg(v: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = v.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(s) = v.downcast::<PyString>() {
        return Ok(s.to_cow()?.as_bytes().to_vec());
    }
    if v.is_instance_of::<pyo3::types::PyBool>() || v.is_none() {
        let t = v.get_type().name()?.to_string();
        let msg = format!("Invalid input of type: '{t}'. Convert to a bytes, string, int or float first.");
        return Err(PyErr::from_type_bound(exc_type(v.py(), "DataError")?, msg));
    }
    if v.is_instance_of::<pyo3::types::PyInt>() {
        return Ok(v.str()?.to_cow()?.as_bytes().to_vec());
    }
    if v.is_instance_of::<pyo3::types::PyFloat>() {
        return Ok(v.repr()?.to_cow()?.as_bytes().to_vec());
    }
    if let Ok(b) = v.extract::<Vec<u8>>() {
        // bytearray, memoryview
        return Ok(b);
    }
    let t = v.get_type().name()?.to_string();
    let msg = format!("Invalid input of type: '{t}'. Convert to a bytes, string, int or float first.");
    Err(PyErr::from_type_bound(exc_type(v.py(), "DataError")?, msg))
}

fn args(items: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<u8>>> {
    items.iter()?.map(|i| arg(&i?)).collect()
}

fn refs(v: &[Vec<u8>]) -> Vec<&[u8]> {
    v.iter().map(|b| &b[..]).collect()
}

fn secs(name: &str, v: Option<f64>, default: Duration) -> PyResult<Duration> {
    match v {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 => Ok(Duration::from_secs_f64(s)),
        Some(s) => Err(PyValueError::new_err(format!("{name} must be a positive number of seconds, not {s}"))),
    }
}

fn hashing(name: &str) -> PyResult<Hashing> {
    match name {
        "md5" => Ok(Hashing::Md5),
        "ketama" => Ok(Hashing::Ketama),
        _ => Err(PyValueError::new_err(format!("hashing must be 'md5' or 'ketama', not {name:?}"))),
    }
}

#[allow(clippy::too_many_arguments)]
fn options(
    max_connections: usize,
    connect_timeout: Option<f64>,
    timeout: Option<f64>,
    pool_timeout: Option<f64>,
    down_for: f64,
    down_max: f64,
    hash: &str,
    reads_miss: bool,
    skip_writes: bool,
) -> PyResult<Options> {
    let d = Options::default();
    if !(down_for.is_finite() && down_for >= 0.0 && down_max.is_finite() && down_max >= 0.0) {
        return Err(PyValueError::new_err("down_for and down_max must be seconds >= 0"));
    }
    Ok(Options {
        max_connections,
        connect_timeout: secs("socket_connect_timeout", connect_timeout, Duration::from_secs(5))?,
        read_timeout: secs("socket_timeout", timeout, Duration::from_secs(5))?,
        pool_timeout: secs("pool_timeout", pool_timeout, d.pool_timeout)?,
        down_for: Duration::from_secs_f64(down_for),
        down_max: Duration::from_secs_f64(down_max),
        hashing: hashing(hash)?,
        failure: FailurePolicy { reads_miss, skip_writes },
        handshake: None,
        max_reply: d.max_reply,
    })
}

fn server_list(host: &str, port: u16, servers: Option<Vec<(String, u16)>>) -> Vec<(String, u16)> {
    match servers {
        Some(s) if !s.is_empty() => s,
        _ => vec![(host.to_string(), port)],
    }
}

// ---- replies ------------------------------------------------------------

fn bytes_or_str(py: Python<'_>, b: Vec<u8>, decode: bool) -> PyResult<PyObject> {
    if !decode {
        return Ok(PyBytes::new_bound(py, &b).into_any().unbind());
    }
    match std::str::from_utf8(&b) {
        Ok(s) => Ok(PyString::new_bound(py, s).into_any().unbind()),
        Err(e) => Err(PyErr::from_value_bound(PyUnicodeDecodeError::new_utf8_bound(py, &b, e)?.into_any())),
    }
}

fn to_py(py: Python<'_>, v: Value, decode: bool) -> PyResult<PyObject> {
    Ok(match v {
        Value::Bulk(b) | Value::Simple(b) | Value::Verbatim(b) => bytes_or_str(py, b, decode)?,
        Value::Error(m) => {
            exc_instance(py, "ResponseError", response_message(&m))?
        }
        Value::Int(n) => n.into_py(py),
        Value::Null => py.None(),
        Value::Double(d) => d.into_py(py),
        Value::Boolean(b) => b.into_py(py),
        Value::BigNumber(b) => {
            let s = String::from_utf8_lossy(&b).into_owned();
            py.get_type_bound::<pyo3::types::PyInt>().call1((s,))?.unbind()
        }
        Value::Array(items) | Value::Set(items) | Value::Push(items) => {
            let list = PyList::empty_bound(py);
            for i in items {
                list.append(to_py(py, i, decode)?)?;
            }
            list.into_any().unbind()
        }
        Value::Map(pairs) => {
            let d = PyDict::new_bound(py);
            for (k, v) in pairs {
                d.set_item(to_py(py, k, decode)?, to_py(py, v, decode)?)?;
            }
            d.into_any().unbind()
        }
    })
}

fn opt_bytes(py: Python<'_>, v: Option<Vec<u8>>) -> PyObject {
    v.map_or_else(|| py.None(), |b| PyBytes::new_bound(py, &b).into_any().unbind())
}

// ---- RESP ---------------------------------------------------------------

/// The RESP core of `tern_client.Redis`.
#[pyclass(subclass, frozen, module = "tern_client._core")]
struct RespCore {
    inner: RespClient,
    decode: bool,
}

#[pymethods]
impl RespCore {
    #[new]
    #[pyo3(signature = (
        host = "localhost", port = 6379, db = 0, password = None, socket_timeout = None,
        socket_connect_timeout = None, decode_responses = false, username = None, protocol = 2,
        *, servers = None, max_connections = 32, pool_timeout = None, down_for = 1.0,
        down_max = 30.0, hashing = "md5", reads_miss = false, skip_writes = false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        host: &str,
        port: u16,
        db: u32,
        password: Option<&Bound<'_, PyAny>>,
        socket_timeout: Option<f64>,
        socket_connect_timeout: Option<f64>,
        decode_responses: bool,
        username: Option<&Bound<'_, PyAny>>,
        protocol: u8,
        servers: Option<Vec<(String, u16)>>,
        max_connections: usize,
        pool_timeout: Option<f64>,
        down_for: f64,
        down_max: f64,
        hashing: &str,
        reads_miss: bool,
        skip_writes: bool,
    ) -> PyResult<Self> {
        if protocol != 2 && protocol != 3 {
            return Err(PyValueError::new_err("protocol must be 2 or 3"));
        }
        let mut opts = options(
            max_connections,
            socket_connect_timeout,
            socket_timeout,
            pool_timeout,
            down_for,
            down_max,
            hashing,
            reads_miss,
            skip_writes,
        )?;
        opts.handshake = Some(Handshake {
            username: username.map(arg).transpose()?,
            password: password.map(arg).transpose()?,
            resp3: protocol == 3,
            db,
        });
        let inner = RespClient::new(&server_list(host, port, servers), opts).map_err(|e| Python::with_gil(|py| to_pyerr(py, e)))?;
        Ok(RespCore { inner, decode: decode_responses })
    }

    /// Sends any command; returns its reply (simple strings like bulks).
    #[pyo3(signature = (*args, **_options))]
    fn execute_command(&self, py: Python<'_>, args: &Bound<'_, PyTuple>, _options: Option<&Bound<'_, PyDict>>) -> PyResult<PyObject> {
        let a = self::args(args.as_any())?;
        if a.is_empty() {
            return Err(PyTypeError::new_err("execute_command needs a command name"));
        }
        let r = py.allow_threads(|| self.inner.command(&a)).map_err(|e| to_pyerr(py, e))?;
        to_py(py, r, self.decode)
    }

    fn get(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let k = arg(name)?;
        let r = py.allow_threads(|| self.inner.get(&k)).map_err(|e| to_pyerr(py, e))?;
        match r {
            Some(b) => bytes_or_str(py, b, self.decode),
            None => Ok(py.None()),
        }
    }

    /// One MGET per server the keys live on, sent together.
    #[pyo3(signature = (keys, *args))]
    fn mget(&self, py: Python<'_>, keys: &Bound<'_, PyAny>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyList>> {
        let mut k = if keys.is_instance_of::<PyBytes>() || keys.is_instance_of::<PyString>() {
            vec![arg(keys)?]
        } else {
            self::args(keys)?
        };
        k.extend(self::args(args.as_any())?);
        let r = py.allow_threads(|| self.inner.mget(&refs(&k))).map_err(|e| to_pyerr(py, e))?;
        let list = PyList::empty_bound(py);
        for v in r {
            match v {
                Some(b) => list.append(bytes_or_str(py, b, self.decode)?)?,
                None => list.append(py.None())?,
            }
        }
        Ok(list.unbind())
    }

    /// MSET of a mapping, split by server. Returns True.
    fn mset(&self, py: Python<'_>, mapping: &Bound<'_, PyDict>) -> PyResult<bool> {
        let mut kv = Vec::with_capacity(mapping.len());
        for (k, v) in mapping.iter() {
            kv.push((arg(&k)?, arg(&v)?));
        }
        let pairs: Vec<(&[u8], &[u8])> = kv.iter().map(|(k, v)| (&k[..], &v[..])).collect();
        py.allow_threads(|| self.inner.mset(&pairs)).map_err(|e| to_pyerr(py, e))?;
        Ok(true)
    }

    /// DEL split by server; the number of keys removed.
    #[pyo3(signature = (*names))]
    fn delete(&self, py: Python<'_>, names: &Bound<'_, PyTuple>) -> PyResult<i64> {
        let k = args(names.as_any())?;
        py.allow_threads(|| self.inner.del(&refs(&k))).map_err(|e| to_pyerr(py, e))
    }

    /// Runs a list of commands (each a sequence of arguments) as one
    /// pipeline per server; replies in order, error replies as
    /// ResponseError instances (not raised).
    #[pyo3(signature = (commands, transaction = false))]
    fn _pipeline(&self, py: Python<'_>, commands: &Bound<'_, PyAny>, transaction: bool) -> PyResult<Py<PyList>> {
        let mut cmds = Vec::new();
        for c in commands.iter()? {
            cmds.push(args(&c?)?);
        }
        let r = py.allow_threads(|| self.inner.pipeline(&cmds, transaction)).map_err(|e| to_pyerr(py, e))?;
        let list = PyList::empty_bound(py);
        for v in r {
            list.append(to_py(py, v, self.decode)?)?;
        }
        Ok(list.unbind())
    }

    /// The index (in `servers`) of the server `key` lives on.
    fn server_index(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        Ok(self.inner.cluster.server_for(&arg(key)?))
    }

    #[getter]
    fn decode_responses(&self) -> bool {
        self.decode
    }
}

// ---- memcached meta -----------------------------------------------------

/// One item of `CacheClient.get_item`.
#[pyclass(frozen, module = "tern_client._core", name = "Item")]
struct PyItem {
    item: Item,
}

#[pymethods]
impl PyItem {
    #[getter]
    fn value(&self, py: Python<'_>) -> PyObject {
        opt_bytes(py, self.item.value.clone())
    }
    #[getter]
    fn flags(&self) -> u32 {
        self.item.flags
    }
    #[getter]
    fn cas(&self) -> Option<u64> {
        self.item.cas
    }
    #[getter]
    fn ttl(&self) -> Option<i64> {
        self.item.ttl
    }
    /// This client won the lease / the right to recompute (`W`).
    #[getter]
    fn win(&self) -> bool {
        self.item.win
    }
    /// The value is stale (`X`).
    #[getter]
    fn stale(&self) -> bool {
        self.item.stale
    }
    /// Another client holds the lease (`Z`).
    #[getter]
    fn lease_pending(&self) -> bool {
        self.item.lease_pending
    }
    fn __repr__(&self) -> String {
        let i = &self.item;
        format!(
            "Item(value={}, flags={}, cas={:?}, ttl={:?}, win={}, stale={}, lease_pending={})",
            i.value.as_ref().map_or("None".to_string(), |v| format!("<{} bytes>", v.len())),
            i.flags,
            i.cas,
            i.ttl,
            i.win,
            i.stale,
            i.lease_pending
        )
    }
}

/// The meta-protocol core of `tern_client.CacheClient`.
#[pyclass(subclass, frozen, module = "tern_client._core")]
struct MetaCore {
    inner: MetaClient,
}

impl MetaCore {
    fn store(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, o: SetOpts) -> PyResult<Stored> {
        let (k, v) = (arg(key)?, arg(value)?);
        py.allow_threads(|| self.inner.set(&k, &v, &o)).map_err(|e| to_pyerr(py, e))
    }

    fn many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>, with_misses: bool) -> PyResult<Py<PyDict>> {
        let originals: Vec<Bound<'_, PyAny>> = keys.iter()?.collect::<PyResult<_>>()?;
        let k: Vec<Vec<u8>> = originals.iter().map(arg).collect::<PyResult<_>>()?;
        let r = py.allow_threads(|| self.inner.get_many(&refs(&k), &GetOpts::default())).map_err(|e| to_pyerr(py, e))?;
        let d = PyDict::new_bound(py);
        for (orig, item) in originals.iter().zip(r) {
            match item.and_then(|i| i.value) {
                Some(v) => d.set_item(orig, PyBytes::new_bound(py, &v))?,
                None if with_misses => d.set_item(orig, py.None())?,
                None => {}
            }
        }
        Ok(d.unbind())
    }
}

fn mode(m: SetMode, ttl: i64, flags: u32) -> SetOpts {
    SetOpts { ttl, flags, mode: m, ..SetOpts::default() }
}

#[pymethods]
impl MetaCore {
    #[new]
    #[pyo3(signature = (
        host = "127.0.0.1", port = 11211, *, servers = None, connect_timeout = None, timeout = None,
        max_connections = 32, pool_timeout = None, down_for = 1.0, down_max = 30.0, hashing = "md5",
        reads_miss = true, skip_writes = false
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        host: &str,
        port: u16,
        servers: Option<Vec<(String, u16)>>,
        connect_timeout: Option<f64>,
        timeout: Option<f64>,
        max_connections: usize,
        pool_timeout: Option<f64>,
        down_for: f64,
        down_max: f64,
        hashing: &str,
        reads_miss: bool,
        skip_writes: bool,
    ) -> PyResult<Self> {
        let opts = options(max_connections, connect_timeout, timeout, pool_timeout, down_for, down_max, hashing, reads_miss, skip_writes)?;
        let inner = MetaClient::new(&server_list(host, port, servers), opts).map_err(|e| Python::with_gil(|py| to_pyerr(py, e)))?;
        Ok(MetaCore { inner })
    }

    /// The value of `key` as bytes, or None.
    fn get(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<PyObject> {
        let k = arg(key)?;
        let r = py.allow_threads(|| self.inner.get(&k, &GetOpts::default())).map_err(|e| to_pyerr(py, e))?;
        Ok(opt_bytes(py, r.and_then(|i| i.value)))
    }

    /// The item with its metadata; leases (`lease_ttl`, N) and
    /// stale-while-revalidate (`recache_ttl`, R) through the meta flags.
    #[pyo3(signature = (key, *, cas = true, ttl = false, touch = None, lease_ttl = None, recache_ttl = None))]
    #[allow(clippy::too_many_arguments)]
    fn get_item(
        &self,
        py: Python<'_>,
        key: &Bound<'_, PyAny>,
        cas: bool,
        ttl: bool,
        touch: Option<i64>,
        lease_ttl: Option<i64>,
        recache_ttl: Option<i64>,
    ) -> PyResult<Option<PyItem>> {
        let k = arg(key)?;
        let o = GetOpts { cas, ttl, touch, lease_ttl, recache_ttl, no_value: false };
        let r = py.allow_threads(|| self.inner.get(&k, &o)).map_err(|e| to_pyerr(py, e))?;
        Ok(r.map(|item| PyItem { item }))
    }

    /// {key: value} for the keys found (pymemcache's get_many).
    fn get_many(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyDict>> {
        self.many(py, keys, false)
    }

    /// {key: value or None} for every key (meta-memcache's multi_get).
    fn multi_get(&self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<Py<PyDict>> {
        self.many(py, keys, true)
    }

    #[pyo3(signature = (key, value, ttl = 0, flags = 0, cas = None, invalidate = false))]
    #[allow(clippy::too_many_arguments)]
    fn set(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, ttl: i64, flags: u32, cas: Option<u64>, invalidate: bool) -> PyResult<bool> {
        let o = SetOpts { ttl, flags, cas, mode: SetMode::Set, invalidate };
        Ok(self.store(py, key, value, o)? == Stored::Stored)
    }

    #[pyo3(signature = (key, value, ttl = 0, flags = 0))]
    fn add(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, ttl: i64, flags: u32) -> PyResult<bool> {
        Ok(self.store(py, key, value, mode(SetMode::Add, ttl, flags))? == Stored::Stored)
    }

    #[pyo3(signature = (key, value, ttl = 0, flags = 0))]
    fn replace(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, ttl: i64, flags: u32) -> PyResult<bool> {
        Ok(self.store(py, key, value, mode(SetMode::Replace, ttl, flags))? == Stored::Stored)
    }

    #[pyo3(signature = (key, value))]
    fn append(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.store(py, key, value, mode(SetMode::Append, 0, 0))? == Stored::Stored)
    }

    #[pyo3(signature = (key, value))]
    fn prepend(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.store(py, key, value, mode(SetMode::Prepend, 0, 0))? == Stored::Stored)
    }

    /// Stores only if the item's CAS is still `cas_token`. False when it
    /// changed or is gone.
    #[pyo3(signature = (key, value, cas_token, ttl = 0, flags = 0))]
    fn cas(&self, py: Python<'_>, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>, cas_token: u64, ttl: i64, flags: u32) -> PyResult<bool> {
        let o = SetOpts { ttl, flags, cas: Some(cas_token), ..SetOpts::default() };
        Ok(self.store(py, key, value, o)? == Stored::Stored)
    }

    /// True when the key existed.
    #[pyo3(signature = (key, cas = None))]
    fn delete(&self, py: Python<'_>, key: &Bound<'_, PyAny>, cas: Option<u64>) -> PyResult<bool> {
        let k = arg(key)?;
        let r = py.allow_threads(|| self.inner.delete(&k, cas, None)).map_err(|e| to_pyerr(py, e))?;
        Ok(r == Stored::Stored)
    }

    /// Marks the item stale for `stale_ttl` seconds instead of deleting it:
    /// readers get the old value flagged stale, and one of them wins the
    /// right to recompute it (stale-while-revalidate).
    #[pyo3(signature = (key, stale_ttl = 30))]
    fn invalidate(&self, py: Python<'_>, key: &Bound<'_, PyAny>, stale_ttl: i64) -> PyResult<bool> {
        let k = arg(key)?;
        let r = py.allow_threads(|| self.inner.delete(&k, None, Some(stale_ttl))).map_err(|e| to_pyerr(py, e))?;
        Ok(r == Stored::Stored)
    }

    fn touch(&self, py: Python<'_>, key: &Bound<'_, PyAny>, ttl: i64) -> PyResult<bool> {
        let k = arg(key)?;
        py.allow_threads(|| self.inner.touch(&k, ttl)).map_err(|e| to_pyerr(py, e))
    }

    /// Adds `delta`; None when the key is missing (unless `initial` is
    /// given, which creates it with that value and `ttl`).
    #[pyo3(signature = (key, delta = 1, initial = None, ttl = 0))]
    fn incr(&self, py: Python<'_>, key: &Bound<'_, PyAny>, delta: u64, initial: Option<u64>, ttl: i64) -> PyResult<Option<u64>> {
        let k = arg(key)?;
        py.allow_threads(|| self.inner.arith(&k, delta, false, initial.map(|i| (i, ttl)))).map_err(|e| to_pyerr(py, e))
    }

    /// Subtracts `delta`, stopping at 0; None when the key is missing.
    #[pyo3(signature = (key, delta = 1, initial = None, ttl = 0))]
    fn decr(&self, py: Python<'_>, key: &Bound<'_, PyAny>, delta: u64, initial: Option<u64>, ttl: i64) -> PyResult<Option<u64>> {
        let k = arg(key)?;
        py.allow_threads(|| self.inner.arith(&k, delta, true, initial.map(|i| (i, ttl)))).map_err(|e| to_pyerr(py, e))
    }

    /// The index (in `servers`) of the server `key` lives on.
    fn server_index(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        Ok(self.inner.cluster.server_for(&arg(key)?))
    }
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<RespCore>()?;
    m.add_class::<MetaCore>()?;
    m.add_class::<PyItem>()?;
    Ok(())
}
