#![cfg(loom)]
//! The Redis deny cache (`src/redis/deny_cache.rs`): records, lookups, forgets and clears
//! racing on its shards. Its running count (read without a lock, so that admissions skip the
//! locks when the cache is empty) never wraps below zero nor strays above the capacity, equals
//! the entries held once the calls are done, and a thread always finds what it recorded
//! itself unless another thread forgot it.

use loom::sync::Arc;
use loom::thread;
use sluicegate::redis::loom_hooks::DenyCache;

/// Records `key` denied at 0, a single request admitted from 100 us.
fn deny(cache: &DenyCache, key: &str) {
    cache.record(key, 1, 0, 100, 100, 200);
}

fn count_in_range(cache: &DenyCache, capacity: usize) {
    let len = cache.len();
    assert!(len <= capacity, "the count wrapped or overflowed: {len}");
}

#[test]
fn a_record_racing_a_clear_and_a_forget_leaves_the_count_equal_to_the_entries() {
    loom::model(|| {
        let cache = Arc::new(DenyCache::new(16));
        let recorder = {
            let cache = cache.clone();
            thread::spawn(move || {
                deny(&cache, "a");
                count_in_range(&cache, 16);
                deny(&cache, "b");
                count_in_range(&cache, 16);
            })
        };
        let clearer = {
            let cache = cache.clone();
            thread::spawn(move || {
                cache.clear();
                count_in_range(&cache, 16);
            })
        };
        cache.forget("a");
        count_in_range(&cache, 16);
        recorder.join().unwrap();
        clearer.join().unwrap();
        assert_eq!(cache.len(), cache.held(), "the running count drifted");
    });
}

#[test]
fn what_a_thread_recorded_it_finds_until_it_expires_or_is_forgotten() {
    loom::model(|| {
        let cache = Arc::new(DenyCache::new(16));
        let other = {
            let cache = cache.clone();
            thread::spawn(move || {
                deny(&cache, "b");
                cache.forget("b");
            })
        };
        deny(&cache, "a");
        let found = cache
            .lookup("a", 1, 50)
            .expect("recorded here, forgotten nowhere");
        assert_eq!((found.retry_us, found.reset_us), (50, 150));
        // Expired: dropped by the lookup that finds it so.
        assert!(cache.lookup("a", 1, 100).is_none());
        other.join().unwrap();
        assert!(cache.lookup("b", 1, 50).is_none(), "forgotten");
        assert_eq!((cache.len(), cache.held()), (0, 0));
    });
}

#[test]
fn a_full_shard_evicts_without_losing_count() {
    loom::model(|| {
        // One entry per shard: every second record in a shard evicts.
        let cache = Arc::new(DenyCache::new(1));
        let threads: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|key| {
                let cache = cache.clone();
                thread::spawn(move || {
                    deny(&cache, key);
                    count_in_range(&cache, 16);
                })
            })
            .collect();
        deny(&cache, "c");
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(cache.len(), cache.held());
        assert!(cache.held() <= 16);
    });
}
