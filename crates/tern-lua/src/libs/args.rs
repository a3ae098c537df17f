//! The part of Lua's C API (lauxlib) the libraries lean on: reading
//! arguments with its conversions, and raising its errors with its words.
//!
//! Errors must reach scripts as plain strings, as they do from Redis's C
//! functions (`pcall(cjson.decode, "x")` gives `false` and the message). An
//! mlua callback can only raise its own userdata error, so every library
//! function is exported as a small Lua closure over the Rust callback: the
//! callback reports a failure as `false, message` and the closure raises the
//! message with `error(message, 0)`. The callback has already put in front
//! of the message what `luaL_error` puts there: the position of the calling
//! line when a Lua function made the call.

use mlua::{Error, Function, Lua, LuaString, MultiValue, Result, Table, Value};

/// The most values a C function may hold on its Lua stack
/// (`LUAI_MAXCSTACK`); `lua_checkstack` refuses to grow past it, and the
/// libraries turn that refusal into their own errors.
pub(crate) const MAX_C_STACK: usize = 8000;

/// Wraps the Rust callbacks so that their runtime errors are raised as
/// string errors (see the module documentation).
const WRAPPER: &str = r#"
local callback, error = ...
local function finish(ok, ...)
  if ok then return ... end
  error((...), 0)
end
return function(...) return finish(callback(...)) end
"#;

/// Adds the library function `name` to `table`: `f` gets the call's
/// arguments and returns its results, or an error made by
/// [`runtime_error`], [`byte_error`] or [`vm_error`], whose message is what
/// the script sees.
pub(crate) fn export<F>(lua: &Lua, table: &Table, name: &'static str, f: F) -> Result<()>
where
    F: Fn(&Args) -> Result<MultiValue> + 'static,
{
    let callback = lua.create_function(move |lua, values: MultiValue| {
        let args = Args {
            lua,
            name,
            values: values.into_iter().collect(),
        };
        match f(&args) {
            Ok(mut results) => {
                results.push_front(Value::Boolean(true));
                Ok(results)
            }
            Err(error) => match script_message(&error) {
                Some((message, positioned)) => {
                    let mut text = if positioned {
                        args.caller_position().into_bytes()
                    } else {
                        Vec::new()
                    };
                    text.extend_from_slice(message);
                    let message = Value::String(lua.create_string(text)?);
                    Ok(MultiValue::from_iter([Value::Boolean(false), message]))
                }
                None => Err(error),
            },
        }
    })?;
    let error: Function = lua.globals().raw_get("error")?;
    let wrapper: Function = lua
        .load(WRAPPER)
        .set_name(crate::sandbox::INTERNAL)
        .call((callback, error))?;
    table.raw_set(name, wrapper)
}

/// An error raised as `luaL_error` raises it: the script sees `message`
/// after the position of the calling line.
pub(crate) fn runtime_error(message: impl Into<String>) -> Error {
    Error::RuntimeError(message.into())
}

/// A message that is not UTF-8 (it quotes a byte of the script's input),
/// which `Error::RuntimeError` cannot carry.
#[derive(Debug)]
struct ByteMessage(Vec<u8>);

/// An error Lua itself raises inside a C function (a nil table index):
/// its message has no position.
#[derive(Debug)]
struct VmMessage(&'static str);

impl std::fmt::Display for ByteMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.0))
    }
}

impl std::fmt::Display for VmMessage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for ByteMessage {}
impl std::error::Error for VmMessage {}

/// [`runtime_error`] with a message of raw bytes.
pub(crate) fn byte_error(message: Vec<u8>) -> Error {
    match String::from_utf8(message) {
        Ok(text) => Error::RuntimeError(text),
        Err(bytes) => Error::external(ByteMessage(bytes.into_bytes())),
    }
}

/// An error raised by Lua itself rather than by the library.
pub(crate) fn vm_error(message: &'static str) -> Error {
    Error::external(VmMessage(message))
}

/// The message a library error shows the script, and whether the caller's
/// position goes before it; `None` for other errors.
fn script_message(error: &Error) -> Option<(&[u8], bool)> {
    match error {
        Error::RuntimeError(message) => Some((message.as_bytes(), true)),
        Error::ExternalError(external) => {
            if let Some(ByteMessage(bytes)) = external.downcast_ref() {
                Some((bytes.as_slice(), true))
            } else {
                external
                    .downcast_ref::<VmMessage>()
                    .map(|VmMessage(text)| (text.as_bytes(), false))
            }
        }
        _ => None,
    }
}

/// The name `lua_typename` gives a value's type.
pub(crate) fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// The arguments of one call to a library function.
pub(crate) struct Args<'lua> {
    lua: &'lua Lua,
    name: &'static str,
    values: Vec<Value>,
}

impl<'lua> Args<'lua> {
    pub(crate) fn lua(&self) -> &'lua Lua {
        self.lua
    }

    /// These arguments with a nil pushed after them, as a C function that
    /// pushes one sees its stack.
    pub(crate) fn with_nil_pushed(&self) -> Args<'lua> {
        let mut values = self.values.clone();
        values.push(Value::Nil);
        Args {
            lua: self.lua,
            name: self.name,
            values,
        }
    }

    /// How many arguments were passed (`lua_gettop`).
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// Argument `n` (1-based), or `None` when fewer were passed.
    pub(crate) fn get(&self, n: usize) -> Option<&Value> {
        n.checked_sub(1).and_then(|i| self.values.get(i))
    }

    /// Whether argument `n` is absent or nil (`lua_isnoneornil`).
    pub(crate) fn is_nil(&self, n: usize) -> bool {
        matches!(self.get(n), None | Some(Value::Nil))
    }

    /// Argument `n` as a number, strings converted as Lua converts them
    /// (`lua_tonumber`); `None` when it is no number.
    pub(crate) fn to_number(&self, n: usize) -> Result<Option<f64>> {
        match self.get(n) {
            None => Ok(None),
            Some(Value::Number(x)) => Ok(Some(*x)),
            Some(Value::Integer(i)) => Ok(Some(*i as f64)),
            Some(value) => self.lua.coerce_number(value.clone()),
        }
    }

    /// `luaL_checknumber`.
    pub(crate) fn number(&self, n: usize) -> Result<f64> {
        self.to_number(n)?
            .ok_or_else(|| self.type_error(n, "number"))
    }

    /// `luaL_checkinteger`: a number truncated toward zero as the C cast
    /// does.
    pub(crate) fn integer(&self, n: usize) -> Result<i64> {
        self.number(n).map(crate::libs::cnum::double_to_i64)
    }

    /// `luaL_optinteger`.
    pub(crate) fn opt_integer(&self, n: usize, default: i64) -> Result<i64> {
        if self.is_nil(n) {
            Ok(default)
        } else {
            self.integer(n)
        }
    }

    /// `luaL_checklstring`: a string, or a number converted as Lua
    /// converts it (`%.14g`).
    pub(crate) fn string(&self, n: usize) -> Result<LuaString> {
        let converted = match self.get(n) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(value @ (Value::Integer(_) | Value::Number(_))) => {
                self.lua.coerce_string(value.clone())?
            }
            _ => None,
        };
        converted.ok_or_else(|| self.type_error(n, "string"))
    }

    /// `luaL_typerror`: argument `n` is not of the `expected` type.
    pub(crate) fn type_error(&self, n: usize, expected: &str) -> Error {
        let got = self.get(n).map_or("no value", type_name);
        self.bad_argument(n as i64, format!("{expected} expected, got {got}"))
    }

    /// `luaL_argerror`: names the function as the caller called it, as Lua
    /// works it out from the calling instruction.
    pub(crate) fn bad_argument(&self, n: i64, message: impl AsRef<[u8]>) -> Error {
        let (name, is_method) = self.called_name();
        let head = match (is_method, n) {
            (true, 1) => format!("calling '{name}' on bad self ("),
            (true, _) => format!("bad argument #{} to '{name}' (", n - 1),
            (false, _) => format!("bad argument #{n} to '{name}' ("),
        };
        let mut text = head.into_bytes();
        text.extend_from_slice(message.as_ref());
        text.push(b')');
        byte_error(text)
    }

    /// The name the running library function was called by, and whether
    /// it was called as a method. Level 1 is the wrapper closure (level 0
    /// is this callback). A tail call erases the name of a Lua function
    /// but not of a C function, so a tail-called wrapper answers with the
    /// library's own name, as the C function would have been named.
    fn called_name(&self) -> (String, bool) {
        let names = self.lua.inspect_stack(1, |frame| {
            let names = frame.names();
            let name = names.name.map(|name| name.into_owned());
            (name, names.name_what == Some("method"))
        });
        match names {
            Some((Some(name), is_method)) => (name, is_method),
            _ if self.wrapper_was_tail_called() => (self.name.to_owned(), false),
            _ => ("?".to_owned(), false),
        }
    }

    /// What `luaL_where` writes for the function that called the library
    /// function: `chunk:line: ` for a Lua function, nothing for a C one.
    /// Level 2 is the wrapper's caller; when the wrapper was tail-called,
    /// the caller's frame is gone and so is its line.
    fn caller_position(&self) -> String {
        let position = self.lua.inspect_stack(2, |frame| {
            let line = frame.current_line().filter(|&line| line > 0)?;
            let source = frame.source().short_src?.into_owned();
            Some(format!("{source}:{line}: "))
        });
        position.flatten().unwrap_or_default()
    }

    fn wrapper_was_tail_called(&self) -> bool {
        self.lua
            .inspect_stack(2, |frame| frame.source().what == "tail")
            .unwrap_or(false)
    }
}
