//! The total order of vertices every stage follows: by value, ties broken by voxel index (a
//! higher index is higher). Values are compared through their order keys
//! ([`crate::field::Sample::to_key`]) computed from the samples on every comparison: a key
//! array would cost 4-8 bytes a voxel, as much as the gradient itself, for a few instructions
//! saved per comparison (and none for integer samples, whose key is the value).

use crate::field::{Key, Sample, Samples, ScalarField};

/// An order on vertex (voxel) indices.
pub trait VertexOrder: Sync {
    fn key(&self, v: usize) -> i64;
    #[inline]
    fn less(&self, a: usize, b: usize) -> bool {
        (self.key(a), a) < (self.key(b), b)
    }
}

impl<T: Sample> VertexOrder for [T] {
    #[inline]
    fn key(&self, v: usize) -> i64 {
        self[v].to_key().to_i64()
    }
}

/// The vertex order of a field's samples, whatever their type (a match per comparison; the
/// pipeline's hot loops use [`with_vertex_order!`] instead).
pub struct FieldOrder<'a>(&'a Samples);

impl VertexOrder for FieldOrder<'_> {
    #[inline]
    fn key(&self, v: usize) -> i64 {
        crate::with_samples!(self.0, s => s[v].to_key().to_i64())
    }
}

impl<'a> FieldOrder<'a> {
    /// The order of `field`, which must have no NaN (the caller checks: NaN has no place in it).
    pub(super) fn new(field: &'a ScalarField) -> Self {
        FieldOrder(field.samples())
    }

    pub fn samples(&self) -> &'a Samples {
        self.0
    }
}

/// Runs `$body` with `$order` bound to the samples of a [`FieldOrder`] as a typed slice, so that
/// comparisons in the hot loops are monomorphised rather than matched on every call.
#[macro_export]
macro_rules! with_vertex_order {
    ($field_order:expr, $order:ident => $body:expr) => {
        $crate::with_samples!($field_order.samples(), v => {
            let $order = v.as_slice();
            $body
        })
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_as_the_values_do() {
        let vals = [3.5f32, -0.0, 0.0, -7.25, f32::INFINITY, f32::NEG_INFINITY, 1e-30];
        let f = ScalarField::new(&[vals.len()], Samples::F32(vals.to_vec())).unwrap();
        let order = FieldOrder::new(&f);
        for a in 0..vals.len() {
            for b in 0..vals.len() {
                let want = (vals[a], a).partial_cmp(&(vals[b], b)).unwrap().is_lt();
                assert_eq!(order.less(a, b), want, "{} vs {}", vals[a], vals[b]);
                assert_eq!(vals.as_slice().less(a, b), want, "{} vs {}", vals[a], vals[b]);
            }
        }
    }
}
