#![cfg(loom)]
//! `CoarseClock`'s published reading (`src/clock/coarse.rs`): the upkeep thread publishes TSC
//! readings with `fetch_max` while limiters read it with one relaxed load. A reader never
//! sees time go back, even when the TSC steps back between cores, never sees a reading below
//! the one published before the clock was handed out, and never a reading that was overtaken.

use loom::sync::Arc;
use loom::thread;
use sluicegate::clock::CoarseReading;

#[test]
fn readings_never_go_back_even_when_the_tsc_does() {
    loom::model(|| {
        let recent = Arc::new(CoarseReading::new());
        // Published before the first `CoarseClock` is built (`start_upkeep`).
        recent.publish(10);
        let upkeep = {
            let recent = recent.clone();
            // The TSC of another core, behind: 20 comes after 30.
            thread::spawn(move || {
                for reading in [30, 20, 40] {
                    recent.publish(reading);
                }
            })
        };
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let recent = recent.clone();
                thread::spawn(move || [recent.read(), recent.read(), recent.read()])
            })
            .collect();
        for reader in readers {
            let seen = reader.join().unwrap();
            assert!(
                seen.windows(2).all(|w| w[0] <= w[1]),
                "time went back: {seen:?}"
            );
            for reading in seen {
                assert!([10, 30, 40].contains(&reading), "read {reading}: {seen:?}");
            }
        }
        upkeep.join().unwrap();
        assert_eq!(recent.read(), 40);
    });
}
