//! Numbers as the panels show them: values to the precision a reader needs (a value read from a
//! float field never widens the panel with nine digits), counts with thousands separators,
//! estimates of time in round figures.

/// Four significant digits (all of the integer part), trailing zeros trimmed: 0.64699215 shows
/// as 0.647, 1234.5678 as 1235, 12.5 as 12.5.
pub fn short(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "∞" } else { "-∞" }.into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s }
}

/// A count with thousands separators: 12345678 -> "12,345,678".
pub fn group(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// An estimated duration, as roughly as an estimate is: "a second", "12 s", "3 min".
pub fn duration(seconds: f64) -> String {
    if seconds < 1.0 {
        "a second".into()
    } else if seconds < 90.0 {
        format!("{seconds:.0} s")
    } else {
        format!("{:.0} min", seconds / 60.0)
    }
}

#[cfg(test)]
mod tests {
    use super::{group, short};

    #[test]
    fn counts_are_grouped_by_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(46227), "46,227");
        assert_eq!(group(12345678), "12,345,678");
    }

    #[test]
    fn four_significant_digits_without_trailing_zeros() {
        assert_eq!(short(0.64699215), "0.647");
        assert_eq!(short(0.7100608), "0.7101");
        assert_eq!(short(1234.5678), "1235");
        assert_eq!(short(12.5), "12.5");
        assert_eq!(short(-0.000123456), "-0.0001235");
        assert_eq!(short(100.0), "100");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(f64::INFINITY), "∞");
    }
}
