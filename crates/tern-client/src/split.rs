//! Splitting a multi-key request by server and putting the answers back in
//! the caller's order.
//!
//! `split` keeps, per server, the positions of its keys in the caller's
//! list, in order; a duplicated key is simply asked for twice. `merge`
//! writes each server's answers back at those positions, so the result is
//! exactly as long as the request and in its order, whatever the servers.

/// Per server that has keys: (server index, positions of its keys).
pub type Groups = Vec<(usize, Vec<usize>)>;

/// Groups the keys by server; servers appear in the order of their first key.
pub fn split<K>(keys: &[K], mut server_of: impl FnMut(&K) -> usize) -> Groups {
    let mut groups: Groups = Vec::new();
    for (pos, k) in keys.iter().enumerate() {
        let s = server_of(k);
        match groups.iter_mut().find(|g| g.0 == s) {
            Some(g) => g.1.push(pos),
            None => groups.push((s, vec![pos])),
        }
    }
    groups
}

/// Places `answers[g][j]` at `groups[g].1[j]`. A group whose answers are
/// missing or short leaves `fill()` at its positions.
pub fn merge<T>(len: usize, groups: &[(usize, Vec<usize>)], answers: Vec<Vec<T>>, mut fill: impl FnMut() -> T) -> Vec<T> {
    let mut out: Vec<Option<T>> = (0..len).map(|_| None).collect();
    for ((_, positions), answers) in groups.iter().zip(answers) {
        for (&pos, a) in positions.iter().zip(answers) {
            if let Some(slot) = out.get_mut(pos) {
                *slot = Some(a);
            }
        }
    }
    out.into_iter().map(|a| a.unwrap_or_else(&mut fill)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    #[test]
    fn groups_in_first_seen_order_with_duplicates() {
        let keys = ["a", "b", "a", "c", "b"];
        let server = |k: &&str| match *k {
            "a" => 2,
            "b" => 0,
            _ => 2,
        };
        let g = split(&keys, server);
        assert_eq!(g, vec![(2, vec![0, 2, 3]), (0, vec![1, 4])]);
    }

    proptest! {
        /// Split by a ring, answer each group from a model store, merge:
        /// the result is the model's answer for each key, in order,
        /// duplicates and misses included.
        #[test]
        fn split_then_merge_is_a_lookup_in_order(
            keys in proptest::collection::vec(0u8..40, 0..60),
            servers in 1usize..6,
            present in proptest::collection::hash_set(0u8..40, 0..40),
        ) {
            let names: Vec<String> = (0..servers).map(|i| format!("10.0.0.{i}:11211")).collect();
            let ring = crate::ring::Ring::new(crate::ring::Hashing::Ketama, &names);
            let keys: Vec<Vec<u8>> = keys.iter().map(|k| format!("key{k}").into_bytes()).collect();
            let model: HashMap<Vec<u8>, u8> = present.iter().map(|&k| (format!("key{k}").into_bytes(), k)).collect();
            let groups = split(&keys, |k| ring.server_for(k));
            let mut seen = vec![false; keys.len()];
            for (s, positions) in &groups {
                prop_assert!(positions.windows(2).all(|w| w[0] < w[1]));
                for &p in positions {
                    prop_assert_eq!(ring.server_for(&keys[p]), *s);
                    prop_assert!(!seen[p]);
                    seen[p] = true;
                }
            }
            prop_assert!(seen.iter().all(|&s| s));
            let answers: Vec<Vec<Option<u8>>> = groups.iter().map(|(_, ps)| ps.iter().map(|&p| model.get(&keys[p]).copied()).collect()).collect();
            let merged = merge(keys.len(), &groups, answers, || None);
            let want: Vec<Option<u8>> = keys.iter().map(|k| model.get(k).copied()).collect();
            prop_assert_eq!(merged, want);
        }
    }

    #[test]
    fn a_failed_group_is_filled() {
        let groups = vec![(0, vec![0, 2]), (1, vec![1])];
        let merged = merge(3, &groups, vec![vec![Some(1), Some(3)]], || None);
        assert_eq!(merged, vec![Some(1), None, Some(3)]);
    }
}
