//! Reads and writes of every family count as an access of the key (OBJECT
//! FREQ under an LFU policy, OBJECT IDLETIME otherwise), unless the client
//! asked for CLIENT NO-TOUCH — as Redis's lookupKey does.
mod common;
use common::*;

fn freq(c: &mut redis::Connection, key: &str) -> i64 {
    redis::cmd("OBJECT").arg("FREQ").arg(key).query(c).unwrap()
}

#[test]
fn string_and_hash_reads_count_as_accesses() {
    each_threads(|s| {
        let mut c = s.conn();
        let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("allkeys-lfu").query(&mut c).unwrap();
        // No decay: a minute boundary mid-test would take a step off.
        let _: () = redis::cmd("CONFIG").arg("SET").arg("lfu-decay-time").arg("0").query(&mut c).unwrap();
        let _: () = redis::cmd("SET").arg("s").arg("v").query(&mut c).unwrap();
        let _: () = redis::cmd("HSET").arg("h").arg("f").arg("v").query(&mut c).unwrap();
        // A new key starts at LFU_INIT_VAL (5); the first access from there
        // always increments.
        assert_eq!(freq(&mut c, "s"), 5);
        assert_eq!(freq(&mut c, "h"), 5);

        let _: () = redis::cmd("CLIENT").arg("NO-TOUCH").arg("ON").query(&mut c).unwrap();
        let _: Option<String> = redis::cmd("GET").arg("s").query(&mut c).unwrap();
        let _: Option<String> = redis::cmd("HGET").arg("h").arg("f").query(&mut c).unwrap();
        assert_eq!(freq(&mut c, "s"), 5, "NO-TOUCH read must not count");
        assert_eq!(freq(&mut c, "h"), 5, "NO-TOUCH read must not count");

        let _: () = redis::cmd("CLIENT").arg("NO-TOUCH").arg("OFF").query(&mut c).unwrap();
        let _: Option<String> = redis::cmd("GET").arg("s").query(&mut c).unwrap();
        let _: Option<String> = redis::cmd("HGET").arg("h").arg("f").query(&mut c).unwrap();
        assert!(freq(&mut c, "s") > 5, "GET counts as an access");
        assert!(freq(&mut c, "h") > 5, "HGET counts as an access");

        // Commands Redis runs with NOTOUCH leave the counter alone.
        let before = freq(&mut c, "s");
        let _: i64 = redis::cmd("EXISTS").arg("s").query(&mut c).unwrap();
        let _: String = redis::cmd("TYPE").arg("s").query(&mut c).unwrap();
        let _: i64 = redis::cmd("TTL").arg("s").query(&mut c).unwrap();
        assert_eq!(freq(&mut c, "s"), before);
        let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("noeviction").query(&mut c).unwrap();
        let _: () = redis::cmd("CONFIG").arg("SET").arg("lfu-decay-time").arg("1").query(&mut c).unwrap();
    });
}
