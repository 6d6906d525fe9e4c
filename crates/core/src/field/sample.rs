//! Sample types and their order-preserving integer keys.
//!
//! Every algorithm that only depends on the *order* of samples (the ECC, the discrete gradient)
//! works on integer keys: `a < b` as samples exactly when `key(a) < key(b)`. Floats map through
//! their IEEE bits (with -0.0 folded onto +0.0, since they compare equal), and NaN maps to
//! [`Key::ABSENT`], which is larger than every valid key. Bitwise NOT reverses the order of a key
//! and never produces `ABSENT` from a valid key, which is how superlevel filtrations are run.

use super::Samples;
use std::fmt;

/// The native sample types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dtype {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    F32,
    F64,
}

impl Dtype {
    pub const ALL: [Dtype; 8] =
        [Dtype::U8, Dtype::I8, Dtype::U16, Dtype::I16, Dtype::U32, Dtype::I32, Dtype::F32, Dtype::F64];

    /// Bytes per sample.
    pub fn size(self) -> usize {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::I16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::F64 => 8,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Dtype::U8 => "u8",
            Dtype::I8 => "i8",
            Dtype::U16 => "u16",
            Dtype::I16 => "i16",
            Dtype::U32 => "u32",
            Dtype::I32 => "i32",
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }

    pub fn is_float(self) -> bool {
        matches!(self, Dtype::F32 | Dtype::F64)
    }

    /// Parses the names used on the command line and in file names
    /// (`u8`, `uint8`, `uchar`, `float32`, `float`, `double`, ...).
    pub fn parse(name: &str) -> Option<Dtype> {
        Some(match name.to_ascii_lowercase().as_str() {
            "u8" | "uint8" | "uchar" => Dtype::U8,
            "i8" | "int8" | "char" => Dtype::I8,
            "u16" | "uint16" | "ushort" => Dtype::U16,
            "i16" | "int16" | "short" => Dtype::I16,
            "u32" | "uint32" | "uint" => Dtype::U32,
            "i32" | "int32" | "int" => Dtype::I32,
            "f32" | "float32" | "float" => Dtype::F32,
            "f64" | "float64" | "double" => Dtype::F64,
            _ => return None,
        })
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An integer key type; see the module docs.
pub trait Key:
    Copy + Ord + Send + Sync + Default + fmt::Debug + std::ops::Not<Output = Self> + 'static
{
    /// Larger than every valid key: NaN samples, and the collar outside the grid.
    const ABSENT: Self;
    fn to_i64(self) -> i64;
    fn from_i64(v: i64) -> Self;
}

macro_rules! impl_key {
    ($t:ty) => {
        impl Key for $t {
            const ABSENT: Self = <$t>::MAX;
            fn to_i64(self) -> i64 {
                self as i64
            }
            fn from_i64(v: i64) -> Self {
                v as $t
            }
        }
    };
}
impl_key!(i8);
impl_key!(i16);
impl_key!(i32);
impl_key!(i64);

/// A native sample type.
pub trait Sample: bytemuck::Pod + Send + Sync + PartialOrd + fmt::Debug + fmt::Display + 'static {
    const DTYPE: Dtype;
    type Key: Key;
    /// For types with at most 2^16 values: the smallest key and the number of keys, so that a
    /// histogram can be indexed by `key - lo` directly.
    const BINS: Option<(i64, usize)>;
    fn to_key(self) -> Self::Key;
    /// Inverse of [`Sample::to_key`] on valid keys.
    fn from_key(k: Self::Key) -> Self;
    fn to_f64(self) -> f64;
    fn to_f32(self) -> f32;
    fn is_nan(self) -> bool;
    fn is_infinite(self) -> bool;
    fn wrap(v: Vec<Self>) -> Samples;
    fn slice(s: &Samples) -> Option<&[Self]>;
}

macro_rules! impl_int_sample {
    ($t:ty, $dt:ident, $key:ty, $bins:expr) => {
        impl Sample for $t {
            const DTYPE: Dtype = Dtype::$dt;
            type Key = $key;
            const BINS: Option<(i64, usize)> = $bins;
            #[inline(always)]
            fn to_key(self) -> $key {
                self as $key
            }
            #[inline(always)]
            fn from_key(k: $key) -> Self {
                k as $t
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_f32(self) -> f32 {
                self as f32
            }
            fn is_nan(self) -> bool {
                false
            }
            fn is_infinite(self) -> bool {
                false
            }
            fn wrap(v: Vec<Self>) -> Samples {
                Samples::$dt(v)
            }
            fn slice(s: &Samples) -> Option<&[Self]> {
                match s {
                    Samples::$dt(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
impl_int_sample!(u8, U8, i16, Some((0, 256)));
impl_int_sample!(i8, I8, i16, Some((-128, 256)));
impl_int_sample!(u16, U16, i32, Some((0, 65536)));
impl_int_sample!(i16, I16, i32, Some((-32768, 65536)));
impl_int_sample!(u32, U32, i64, None);
impl_int_sample!(i32, I32, i64, None);

macro_rules! impl_float_sample {
    ($t:ty, $dt:ident, $key:ty, $bits:ty) => {
        impl Sample for $t {
            const DTYPE: Dtype = Dtype::$dt;
            type Key = $key;
            const BINS: Option<(i64, usize)> = None;
            #[inline(always)]
            fn to_key(self) -> $key {
                if self.is_nan() {
                    return <$key>::MAX;
                }
                // +0.0 folds -0.0 (they compare equal); negative floats get their magnitude bits
                // flipped so that the signed integer order is the float order.
                let b = (self + 0.0).to_bits() as $key;
                if b < 0 { b ^ <$key>::MAX } else { b }
            }
            #[inline(always)]
            fn from_key(k: $key) -> Self {
                let b = if k < 0 { k ^ <$key>::MAX } else { k };
                <$t>::from_bits(b as $bits)
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_f32(self) -> f32 {
                self as f32
            }
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            fn is_infinite(self) -> bool {
                <$t>::is_infinite(self)
            }
            fn wrap(v: Vec<Self>) -> Samples {
                Samples::$dt(v)
            }
            fn slice(s: &Samples) -> Option<&[Self]> {
                match s {
                    Samples::$dt(v) => Some(v),
                    _ => None,
                }
            }
        }
    };
}
impl_float_sample!(f32, F32, i32, u32);
impl_float_sample!(f64, F64, i64, u64);

#[cfg(test)]
mod tests {
    use super::*;

    fn check_order<T: Sample + Copy>(vals: &[T]) {
        for &a in vals {
            assert_eq!(T::from_key(a.to_key()).to_f64(), a.to_f64(), "{a} round trip");
            assert!(a.to_key() < T::Key::ABSENT);
            assert!(!a.to_key() < T::Key::ABSENT, "reversed key of {a} is ABSENT");
            for &b in vals {
                let want = a.partial_cmp(&b).unwrap();
                assert_eq!(a.to_key().cmp(&b.to_key()), want, "{a} vs {b}");
                assert_eq!((!b.to_key()).cmp(&!a.to_key()), want, "reversed {a} vs {b}");
            }
        }
    }

    #[test]
    fn keys_preserve_order() {
        check_order(&[0u8, 1, 127, 128, 255]);
        check_order(&[i8::MIN, -1, 0, 1, i8::MAX]);
        check_order(&[0u16, 1, 40000, u16::MAX]);
        check_order(&[i16::MIN, -1, 0, i16::MAX]);
        check_order(&[0u32, 1, u32::MAX - 1, u32::MAX]);
        check_order(&[i32::MIN, -1, 0, i32::MAX]);
        let f = [
            f32::NEG_INFINITY,
            -f32::MAX,
            -1.5,
            -f32::MIN_POSITIVE,
            -1e-45,
            0.0,
            1e-45,
            2.5,
            f32::MAX,
            f32::INFINITY,
        ];
        check_order(&f);
        let d = [f64::NEG_INFINITY, -1e300, -1.0, -5e-324, 0.0, 5e-324, 1.0, f64::MAX, f64::INFINITY];
        check_order(&d);
    }

    #[test]
    fn nan_is_absent_and_zeros_fold() {
        assert_eq!(f32::NAN.to_key(), i32::ABSENT);
        assert_eq!((-f32::NAN).to_key(), i32::ABSENT);
        assert_eq!(f64::NAN.to_key(), i64::ABSENT);
        assert_eq!((-0.0f32).to_key(), 0.0f32.to_key());
        assert_eq!((-0.0f64).to_key(), 0.0f64.to_key());
    }

    #[test]
    fn bins_cover_every_key() {
        fn check<T: Sample + Copy>(lo: T, hi: T) {
            let (blo, n) = T::BINS.unwrap();
            assert_eq!(lo.to_key().to_i64(), blo);
            assert_eq!(hi.to_key().to_i64(), blo + n as i64 - 1);
        }
        check(0u8, 255u8);
        check(i8::MIN, i8::MAX);
        check(0u16, u16::MAX);
        check(i16::MIN, i16::MAX);
    }
}
