//! Numbers as the panels show them: to the precision a reader needs, so that a value read from a
//! float field never widens the panel with nine digits.

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

#[cfg(test)]
mod tests {
    use super::short;

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
