//! The meta client against tern-server's memcache port, and memcached when
//! installed: the same checks on both.

mod common;

use tern_client::{Error, GetOpts, MetaClient, Options, SetMode, SetOpts, Stored};

fn client(addrs: &[(String, u16)]) -> MetaClient {
    MetaClient::new(addrs, Options::default()).expect("client")
}

fn value(c: &MetaClient, k: &[u8]) -> Option<Vec<u8>> {
    c.get(k, &GetOpts::default()).unwrap().and_then(|i| i.value)
}

fn basics(c: &MetaClient) {
    let set = |k: &[u8], v: &[u8], mode| c.set(k, v, &SetOpts { mode, ..SetOpts::default() }).unwrap();
    assert_eq!(set(b"a", b"1", SetMode::Set), Stored::Stored);
    assert_eq!(value(c, b"a"), Some(b"1".to_vec()));
    assert_eq!(set(b"a", b"x", SetMode::Add), Stored::NotStored);
    assert_eq!(set(b"fresh", b"x", SetMode::Replace), Stored::NotStored);
    assert_eq!(set(b"a", b"2", SetMode::Replace), Stored::Stored);
    assert_eq!(set(b"a", b"3", SetMode::Append), Stored::Stored);
    assert_eq!(value(c, b"a"), Some(b"23".to_vec()));
    // Client flags and TTL come back.
    c.set(b"f", b"v", &SetOpts { flags: 77, ttl: 100, ..SetOpts::default() }).unwrap();
    let it = c.get(b"f", &GetOpts { ttl: true, cas: true, ..GetOpts::default() }).unwrap().unwrap();
    assert_eq!((it.flags, it.value.as_deref()), (77, Some(&b"v"[..])));
    assert!(it.ttl.is_some_and(|t| (99..=100).contains(&t)), "{:?}", it.ttl);
    // CAS: the right token stores, a stale one does not.
    let cas = it.cas.expect("cas");
    assert_eq!(c.set(b"f", b"w", &SetOpts { cas: Some(cas + 1000), ..SetOpts::default() }).unwrap(), Stored::Exists);
    assert_eq!(c.set(b"f", b"w", &SetOpts { cas: Some(cas), ..SetOpts::default() }).unwrap(), Stored::Stored);
    // Binary and spaced keys go as base64; a 100 KB value survives.
    let big: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
    set(b"key with space", b"s", SetMode::Set);
    set(&[0xff, 0x00, b'k'], &big, SetMode::Set);
    assert_eq!(value(c, b"key with space"), Some(b"s".to_vec()));
    assert_eq!(value(c, &[0xff, 0x00, b'k']), Some(big.clone()));
    assert!(matches!(c.get(&[b'x'; 300], &GetOpts::default()), Err(Error::Invalid(_))));
    // The multi-get: misses, duplicates and base64 keys, in order.
    let keys: Vec<&[u8]> = vec![b"a", b"nope", &[0xff, 0x00, b'k'], b"a", b"key with space", b"nope2"];
    let got: Vec<Option<Vec<u8>>> =
        c.get_many(&keys, &GetOpts::default()).unwrap().into_iter().map(|i| i.and_then(|i| i.value)).collect();
    assert_eq!(got, vec![Some(b"23".to_vec()), None, Some(big), Some(b"23".to_vec()), Some(b"s".to_vec()), None]);
    let none: Vec<&[u8]> = vec![b"m1", b"m2"];
    assert_eq!(c.get_many(&none, &GetOpts::default()).unwrap(), vec![None, None]);
    // incr / decr, with and without an initial value.
    assert_eq!(c.arith(b"n", 5, false, None).unwrap(), None);
    assert_eq!(c.arith(b"n", 5, false, Some((10, 0))).unwrap(), Some(10));
    assert_eq!(c.arith(b"n", 5, false, None).unwrap(), Some(15));
    assert_eq!(c.arith(b"n", 20, true, None).unwrap(), Some(0));
    assert!(matches!(c.arith(b"f", 1, false, None), Err(Error::Server(_))), "not a number");
    // touch and delete.
    assert!(c.touch(b"a", 100).unwrap());
    assert!(!c.touch(b"nope", 100).unwrap());
    assert_eq!(c.delete(b"a", None, None).unwrap(), Stored::Stored);
    assert_eq!(c.delete(b"a", None, None).unwrap(), Stored::NotFound);
    assert_eq!(value(c, b"a"), None);
}

/// Leases and stale-while-revalidate: the first miss wins the lease, the
/// next sees it pending; an invalidated item is served stale to all and
/// one client wins the recompute.
fn leases(c: &MetaClient) {
    let lease = GetOpts { lease_ttl: Some(30), cas: true, ..GetOpts::default() };
    let first = c.get(b"L", &lease).unwrap().expect("a lease is a hit");
    assert!(first.win && !first.lease_pending, "{first:?}");
    let second = c.get(b"L", &lease).unwrap().expect("pending");
    assert!(!second.win && second.lease_pending, "{second:?}");
    let cas = first.cas.expect("cas");
    assert_eq!(c.set(b"L", b"computed", &SetOpts { cas: Some(cas), ..SetOpts::default() }).unwrap(), Stored::Stored);
    let it = c.get(b"L", &lease).unwrap().unwrap();
    assert_eq!((it.value.as_deref(), it.win, it.lease_pending), (Some(&b"computed"[..]), false, false));
    // Invalidate: the old value stays, marked stale; one reader wins.
    assert_eq!(c.delete(b"L", None, Some(30)).unwrap(), Stored::Stored);
    let a = c.get(b"L", &lease).unwrap().unwrap();
    let b = c.get(b"L", &lease).unwrap().unwrap();
    assert_eq!(a.value.as_deref(), Some(&b"computed"[..]));
    assert!(a.stale && a.win, "{a:?}");
    assert!(b.stale && !b.win && b.lease_pending, "{b:?}");
    let st = c.set(b"L", b"fresh", &SetOpts { cas: a.cas, invalidate: true, ..SetOpts::default() }).unwrap();
    assert_eq!(st, Stored::Stored);
    let it = c.get(b"L", &lease).unwrap().unwrap();
    assert_eq!((it.value.as_deref(), it.stale), (Some(&b"fresh"[..]), false));
}

#[test]
fn tern_memcache_port() {
    let s = common::tern();
    let c = client(&[s.mc_addr()]);
    basics(&c);
    leases(&c);
}

#[test]
fn memcached() {
    let Some(s) = common::memcached() else { return };
    let c = client(&[s.mc_addr()]);
    basics(&c);
    leases(&c);
}

#[test]
fn pool_of_three_splits_by_the_ring() {
    let servers: Vec<_> = (0..3).map(|_| common::tern()).collect();
    let addrs: Vec<_> = servers.iter().map(|s| s.mc_addr()).collect();
    let pool = client(&addrs);
    let keys: Vec<Vec<u8>> = (0..100).map(|i| format!("key:{i}").into_bytes()).collect();
    for k in keys.iter().step_by(3) {
        pool.set(k, k, &SetOpts::default()).unwrap();
    }
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    let got = pool.get_many(&refs, &GetOpts::default()).unwrap();
    for (i, (k, v)) in keys.iter().zip(got).enumerate() {
        assert_eq!(v.and_then(|v| v.value).as_deref(), (i % 3 == 0).then_some(&k[..]));
    }
    for (i, a) in addrs.iter().enumerate() {
        let one = client(std::slice::from_ref(a));
        for k in keys.iter().step_by(3) {
            assert_eq!(value(&one, k).is_some(), pool.cluster.server_for(k) == i);
        }
    }
}
