//! The sandbox's rules, with the messages Redis 7+ gives (taken from
//! valkey-server 8.1, whose scripting engine is Redis 7.2's).

use tern_lua::{mlua, Outcome, Sandbox};

fn sandbox() -> Sandbox {
    Sandbox::new(
        |lua, g| {
            let redis = lua.create_table()?;
            redis.raw_set("answer", 42)?;
            g.raw_set("redis", redis)
        },
        &["redis"],
    )
    .unwrap()
}

/// Runs `body` as a script: its result, or its error's `err`, `source`
/// and `line` as `err @source:line`.
fn run(sb: &Sandbox, body: &str) -> String {
    let f = match sb.compile("@user_script", body.as_bytes()) {
        Ok(f) => f,
        Err(e) => return format!("compile: {e}"),
    };
    match sb.call(&f, ()).unwrap() {
        Outcome::Done(v) => format!("{v:?}"),
        Outcome::Failed(mlua::Value::Table(t)) => {
            let err: String = t.get("err").unwrap();
            let source: Option<String> = t.get("source").unwrap();
            let line: Option<i64> = t.get("line").unwrap();
            format!("{err} @{}:{}", source.unwrap_or_default(), line.unwrap_or_default())
        }
        Outcome::Failed(other) => format!("odd error {other:?}"),
    }
}

#[test]
fn globals_cannot_be_created_or_changed() {
    let sb = sandbox();
    assert_eq!(run(&sb, "a = 1"), "ERR user_script:1: Attempt to modify a readonly table @@user_script:1");
    assert_eq!(run(&sb, "redis = nil"), "ERR user_script:1: Attempt to modify a readonly table @@user_script:1");
    assert_eq!(run(&sb, "\n\nstring.x = 1"), "ERR user_script:3: Attempt to modify a readonly table @@user_script:3");
    assert_eq!(run(&sb, "redis.answer = 1"), "ERR user_script:1: Attempt to modify a readonly table @@user_script:1");
    assert_eq!(run(&sb, "rawset(_G, 'a', 1)"), "ERR Attempt to modify a readonly table @@user_script:1");
    assert_eq!(run(&sb, "setmetatable(_G, nil)"), "ERR Attempt to modify a readonly table @@user_script:1");
    assert_eq!(run(&sb, "getmetatable('').x = 1"), "ERR user_script:1: Attempt to modify a readonly table @@user_script:1");
    assert_eq!(run(&sb, "getmetatable('').__index.upper = 1"), "ERR user_script:1: Attempt to modify a readonly table @@user_script:1");
    assert_eq!(run(&sb, "loadstring('redis = 1')()"), "ERR [string \"redis = 1\"]:1: Attempt to modify a readonly table @redis = 1:1");
    // Nothing leaked into the next script.
    assert_eq!(run(&sb, "return redis.answer"), "Integer(42)");
}

#[test]
fn missing_globals_and_removed_builtins() {
    let sb = sandbox();
    let missing = |name: &str| format!("ERR user_script:1: Script attempted to access nonexistent global variable '{name}' @@user_script:1");
    assert_eq!(run(&sb, "return nosuch"), missing("nosuch"));
    for name in ["print", "dofile", "loadfile", "require", "module", "io", "debug", "package", "getfenv", "setfenv", "newproxy"] {
        assert_eq!(run(&sb, &format!("return {name}")), missing(name));
    }
    assert_eq!(run(&sb, "return os.exit"), "Nil");
    assert_eq!(run(&sb, "return type(os.clock())"), "String(\"number\")");
    // Tables of a script's own are its to change.
    assert_eq!(run(&sb, "local t = {} t.x = 5 rawset(t, 'y', 6) return t.x + t.y"), "Integer(11)");
}

#[test]
fn error_shapes() {
    let sb = sandbox();
    assert_eq!(run(&sb, "error('boom')"), "ERR user_script:1: boom @@user_script:1");
    assert_eq!(run(&sb, "error('boom', 0)"), "ERR boom @@user_script:1");
    assert_eq!(run(&sb, "error({err='MY thing'})"), "MY thing @@user_script:1");
    assert_eq!(run(&sb, "local x = nil\n return x.y"), "ERR user_script:2: attempt to index local 'x' (a nil value) @@user_script:2");
    assert_eq!(run(&sb, "return string.rep()"), "ERR user_script:1: bad argument #1 to 'rep' (string expected, got no value) @@user_script:1");
    assert!(run(&sb, "return +").starts_with("compile: user_script:1: unexpected symbol near '+'"), "{}", run(&sb, "return +"));
    // Redis's pcall hands out an error table's message.
    assert_eq!(run(&sb, "local ok, e = pcall(error, {err='X y'}) return e"), "String(\"X y\")");
    assert_eq!(run(&sb, "local ok, e = pcall(error, 'plain', 0) return e"), "String(\"plain\")");
}

#[test]
fn bytecode_is_never_loaded() {
    let sb = sandbox();
    let out = run(&sb, "local f, e = loadstring(string.dump(function() return 1 end)) return e");
    assert!(out.contains("unexpected symbol"), "{out}");
}
