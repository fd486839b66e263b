//! Today's date where `decide` runs (the default `--as-of`), found without listing the time-zone database.
//!
//! `jiff::ZonedDateTime::now()` finds the local time zone by the name `/etc/localtime` links to
//! (`Etc/UTC`, `Asia/Shanghai`), and looking a name up first lists every file under
//! `/usr/share/zoneinfo`: about 0.6 ms, most of a small one-shot run. A date needs only the
//! zone's rules, and those are in `/etc/localtime` itself, the very file the name leads to. So
//! when nothing else says which zone is local (`TZ` and `TZDIR` unset) that file is read as it
//! is; otherwise, or when it cannot be read, jiff finds the zone as before.

use jiff::civil::Date;
use jiff::tz::TimeZone;

/// The local date now.
#[must_use]
pub fn today() -> Date {
    match local_zone() {
        Some(tz) => jiff::Timestamp::now().to_zoned_datetime(tz).date(),
        None => jiff::ZonedDateTime::now().date(),
    }
}

/// The local time zone read straight from `/etc/localtime`, when that file is what decides it.
fn local_zone() -> Option<TimeZone> {
    if !cfg!(unix) || std::env::var_os("TZ").is_some() || std::env::var_os("TZDIR").is_some() {
        return None;
    }
    let data = std::fs::read("/etc/localtime").ok()?;
    TimeZone::tzif("localtime", &data).ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn today_is_jiffs_local_date() {
        // Both read the clock: they may straddle midnight, never by more than a day.
        let ours = super::today();
        let jiffs = jiff::ZonedDateTime::now().date();
        let apart = (jiffs - ours).get_days().abs();
        assert!(apart <= 1, "{ours} against {jiffs}");
        if let Some(tz) = super::local_zone() {
            let now = jiff::Timestamp::now();
            assert_eq!(
                tz.to_offset(now),
                jiff::tz::TimeZone::system().to_offset(now),
                "the zone read from /etc/localtime is the system zone"
            );
        }
    }
}
