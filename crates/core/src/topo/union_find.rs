//! Union-find over nodes numbered with 32-bit integers, each pointing to its parent (a root to
//! itself): the Betti sweeps' components and the Morse complex's dimension-1 persistence.

/// The root of node `i`, halving the path on the way: every other node on it then points to its
/// grandparent.
#[inline(always)]
pub(crate) fn find(parent: &mut [u32], mut i: usize) -> usize {
    while parent[i] as usize != i {
        let grand = parent[parent[i] as usize];
        parent[i] = grand;
        i = grand as usize;
    }
    i
}
