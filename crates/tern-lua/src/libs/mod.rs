//! The libraries Redis loads into its Lua state beside Lua's own, each
//! written here in Rust with the outputs Redis's C versions give for the
//! same inputs.

mod args;
mod bit;
mod cjson;
mod cmsgpack;
pub(crate) mod cnum;
mod structlib;

use mlua::Lua;

/// The globals these libraries define.
pub const NAMES: &[&str] = &["cjson", "struct", "cmsgpack", "bit"];

/// Creates the global tables `cjson`, `cmsgpack`, `bit` and `struct`.
pub fn open(lua: &Lua) -> mlua::Result<()> {
    let globals = lua.globals();
    globals.raw_set("cjson", cjson::open(lua)?)?;
    globals.raw_set("cmsgpack", cmsgpack::open(lua)?)?;
    globals.raw_set("bit", bit::open(lua)?)?;
    globals.raw_set("struct", structlib::open(lua)?)?;
    Ok(())
}
