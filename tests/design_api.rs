//! The API of DESIGN.md §2, line by line: it is a contract that code outside this repository
//! compiles against, so it is compiled (and run) here.

use std::time::Duration;

use sluicegate::algorithm::{
    FixedWindow, Gcra, LeakyBucket, SlidingLog, SlidingWindow, TokenBucket,
};
use sluicegate::clock::{Clock, CoarseClock, ManualClock, TscClock};
use sluicegate::{Decision, KeyedLimiter, Limiter, Quota};

#[test]
fn the_design_contract_compiles_and_runs() -> Result<(), Box<dyn std::error::Error>> {
    let q = Quota::per_second(100).with_burst(20);
    let q2 = Quota::new(100, Duration::from_secs(60))?;
    let q3: Quota = "100/minute burst 20".parse()?;
    for text in ["100/s", "100 per second", "5/30s"] {
        let _: Quota = text.parse()?;
    }
    assert_eq!(q2.limit(), q3.limit());

    let one = Limiter::<Gcra>::new(q)?;
    let fast = Limiter::<Gcra, CoarseClock>::with_clock(q, CoarseClock::default())?;
    let d: Decision = one.check();
    let d2 = one.check_n(5)?;
    let d3 = one.peek();
    assert!(d.is_allowed() && d2.is_allowed() && d3.is_allowed());
    assert!(fast.check().is_allowed());

    let user_id: u64 = 42;
    let keyed = KeyedLimiter::<u64, SlidingWindow>::new(q)?;
    let _ = keyed.check(&user_id);
    let _ = keyed.check_n(&user_id, 3)?;
    let _ = keyed.peek(&user_id);
    assert_eq!(keyed.len(), 1);
    let names = KeyedLimiter::<String, Gcra>::new(q)?;
    assert!(names.check("alice").is_allowed());

    let clock = ManualClock::new();
    let test = KeyedLimiter::<u64, Gcra, ManualClock>::with_clock(q, clock.clone())?;
    clock.advance(Duration::from_millis(10));
    let t: u64 = clock.now();
    assert_eq!(t, 10_000_000);
    let d = test.check(&1);

    assert!(d.is_allowed());
    assert!(!d.is_denied());
    let _: u32 = d.limit();
    let _: u32 = d.remaining();
    let _: Option<Duration> = d.retry_after();
    let _: Duration = d.reset_after();
    let _: Duration = d.wait();

    // The defaults of the generic parameters.
    let _: Limiter = Limiter::<Gcra, TscClock>::new(q)?;
    let _: KeyedLimiter<u64> = KeyedLimiter::<u64, Gcra, TscClock, ahash::RandomState>::new(q)?;
    // Every algorithm behind the same API.
    let _ = Limiter::<TokenBucket>::new(q)?.check();
    let _ = Limiter::<LeakyBucket>::new(q)?.check();
    let _ = Limiter::<FixedWindow>::new(q)?.check();
    let _ = Limiter::<SlidingLog>::new(q)?.check();
    Ok(())
}

#[test]
#[should_panic(expected = "the limit must be at least 1")]
fn per_second_zero_panics_with_a_clear_message() {
    let _ = Quota::per_second(0);
}
